package install

import (
	"archive/tar"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/tarutil"
)

// Method is how member data reaches the installed files.
type Method string

const (
	Clone         Method = "clone"           // FICLONERANGE: blocks shared with the cache
	CopyFileRange Method = "copy_file_range" // copied inside the kernel
	Copy          Method = "copy"            // read and written through a pooled buffer
)

// copyBufSize is the pooled buffer for tails and the plain-copy fallback.
const copyBufSize = 128 << 10

var copyBufs = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// stager builds one package tree in a staging directory from a cached aligned tar.
type stager struct {
	src      *os.File
	dir      string
	umask    fs.FileMode
	method   Method // "" until the first bulk transfer decides it
	fallback error  // why the method is not Clone
	cloned   int64
	copied   int64
	buf      *[]byte
}

// stage creates every member under s.dir: directories and files in archive order,
// symlinks last, then the directory modes.
func (s *stager) stage(members []tarutil.Member) error {
	s.buf = copyBufs.Get().(*[]byte)
	defer copyBufs.Put(s.buf)
	for _, m := range members {
		if err := s.create(m); err != nil {
			return fmt.Errorf("member %q: %w", m.Name, err)
		}
	}
	for _, m := range members {
		if err := s.finish(m); err != nil {
			return fmt.Errorf("member %q: %w", m.Name, err)
		}
	}
	return nil
}

func (s *stager) path(name string) string { return filepath.Join(s.dir, filepath.FromSlash(name)) }

func (s *stager) create(m tarutil.Member) error {
	switch m.Type {
	case tar.TypeDir:
		return os.Mkdir(s.path(m.Name), 0o700|m.Mode)
	case tar.TypeReg:
		return s.file(m)
	case tar.TypeLink:
		return os.Link(s.path(m.Linkname), s.path(m.Name))
	}
	return nil
}

// finish creates symlinks, which come last so no member is written through one, and gives
// directories their exact modes once nothing more is created in them.
func (s *stager) finish(m tarutil.Member) error {
	switch m.Type {
	case tar.TypeSymlink:
		return os.Symlink(m.Linkname, s.path(m.Name))
	case tar.TypeDir:
		if (0o700|m.Mode)&^s.umask != m.Mode {
			return os.Chmod(s.path(m.Name), m.Mode)
		}
	}
	return nil
}

func (s *stager) file(m tarutil.Member) error {
	fd, err := unix.Open(s.path(m.Name), unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(m.Mode))
	if err != nil {
		return &os.PathError{Op: "create", Path: s.path(m.Name), Err: err}
	}
	f := os.NewFile(uintptr(fd), s.path(m.Name))
	err = s.fill(f, m)
	if err == nil && m.Mode&s.umask != 0 {
		err = f.Chmod(m.Mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// fill transfers the block-aligned prefix of a member in bulk and writes the short tail.
func (s *stager) fill(f *os.File, m tarutil.Member) error {
	prefix := m.Size &^ (tarutil.Alignment - 1)
	if prefix > 0 {
		if err := s.bulk(f, m.Offset, prefix); err != nil {
			return err
		}
	}
	return s.copy(f, prefix, m.Offset+prefix, m.Size-prefix)
}

// bulk moves n bytes by the install's method, deciding it on first use.
func (s *stager) bulk(dst *os.File, srcOff, n int64) error {
	if s.method == "" {
		return s.probe(dst, srcOff, n)
	}
	var err error
	switch s.method {
	case Clone:
		_, err = cloneRange(dst, s.src, 0, srcOff, n)
		s.cloned += n
		return err
	case CopyFileRange:
		_, err = copyRange(dst, s.src, 0, srcOff, n)
		s.copied += n
		return err
	}
	return s.copy(dst, 0, srcOff, n)
}

// probe tries each method in turn on the first bulk transfer and keeps the first that works.
func (s *stager) probe(dst *os.File, srcOff, n int64) error {
	handled, err := cloneRange(dst, s.src, 0, srcOff, n)
	if handled {
		s.method, s.cloned = Clone, s.cloned+n
		return err
	}
	s.fallback = fmt.Errorf("cannot clone from %s: %w", s.src.Name(), err)
	handled, err = copyRange(dst, s.src, 0, srcOff, n)
	if handled {
		s.method, s.copied = CopyFileRange, s.copied+n
		return err
	}
	s.method = Copy
	return s.copy(dst, 0, srcOff, n)
}

// copy reads n bytes at srcOff of the tar and writes them at dstOff, through the pooled buffer.
func (s *stager) copy(dst *os.File, dstOff, srcOff, n int64) error {
	buf := *s.buf
	for n > 0 {
		c := int(min(n, int64(len(buf))))
		if _, err := s.src.ReadAt(buf[:c], srcOff); err != nil {
			return fmt.Errorf("read %s at %d: %w", s.src.Name(), srcOff, err)
		}
		if _, err := dst.WriteAt(buf[:c], dstOff); err != nil {
			return err
		}
		s.copied += int64(c)
		n, srcOff, dstOff = n-int64(c), srcOff+int64(c), dstOff+int64(c)
	}
	return nil
}

// records lists the members as the database stores them.
func records(members []tarutil.Member) []db.File {
	files := make([]db.File, len(members))
	for i, m := range members {
		files[i] = db.File{Path: m.Name, Type: m.Type, Mode: m.Mode, Size: m.Size}
	}
	return files
}

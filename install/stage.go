package install

import (
	"archive/tar"
	"fmt"
	"io/fs"
	"os"
	"path"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/tarutil"
)

// Method is how member data reaches the installed files.
type Method string

const (
	Clone         Method = "clone"           // FICLONERANGE: blocks shared with the cache
	CopyFileRange Method = "copy_file_range" // copied inside the kernel
	Copy          Method = "copy"            // written from the mapped tar
)

// tailMode is how a cloned file's last partial block is finished; which is cheaper depends
// on the filesystem (DESIGN.md, install engine rules).
type tailMode int

const (
	writeTail    tailMode = iota // clone the aligned prefix, pwrite the rest (XFS: truncating a shared block copies it)
	truncateTail                 // clone whole blocks, then ftruncate to size (btrfs measured faster)
)

const btrfsMagic = 0x9123683e

// faultAround is the most a page fault maps of a file at once (mm/memory.c).
const faultAround = 64 << 10

// stager builds one package tree in a staging directory from a cached aligned tar: the
// directories first, then the regular files by a few workers, each filling whole
// directories, then links, then directory modes. Every path is resolved relative to a
// directory descriptor and opened with O_NOFOLLOW.
type stager struct {
	src      *os.File
	data     []byte // src, mapped read-only: tails and copies are written straight from it
	dirfd    int    // the staging directory
	umask    fs.FileMode
	tail     tailMode
	workers  int
	method   Method // "" until the first bulk transfer decides it
	fallback error  // why the method is not Clone
	cloned   atomic.Int64
	copied   atomic.Int64
}

// mapFile maps f read-only; unix.Munmap releases it.
func mapFile(f *os.File) ([]byte, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(info.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, &os.PathError{Op: "mmap", Path: f.Name(), Err: err}
	}
	return data, nil
}

// newStager opens the staging directory dir to fill it from src, mapped at data.
func newStager(src *os.File, data []byte, dir string, umask fs.FileMode) (*stager, error) {
	dirfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	s := &stager{src: src, data: data, dirfd: dirfd, umask: umask, workers: min(runtime.GOMAXPROCS(0), 4)}
	var st unix.Statfs_t
	if unix.Fstatfs(dirfd, &st) == nil && st.Type == btrfsMagic {
		s.tail = truncateTail
	}
	return s, nil
}

func (s *stager) close() {
	unix.Close(s.dirfd)
	runtime.KeepAlive(s.src)
}

// stage creates every member.
func (s *stager) stage(members []tarutil.Member) error {
	if err := s.dirs(members); err != nil {
		return err
	}
	first, err := s.probe(members)
	if err != nil {
		return err
	}
	if err := s.files(members, first); err != nil {
		return err
	}
	if err := s.links(members); err != nil {
		return err
	}
	return s.modes(members)
}

// memberError names the member an error is about; nil stays nil.
func memberError(m *tarutil.Member, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("member %q: %w", m.Name, err)
}

func (s *stager) dirs(members []tarutil.Member) error {
	for i := range members {
		m := &members[i]
		if m.Type == tar.TypeDir {
			if err := unix.Mkdirat(s.dirfd, m.Name, uint32(0o700|m.Mode)); err != nil {
				return memberError(m, &os.PathError{Op: "mkdir", Path: m.Name, Err: err})
			}
		}
	}
	return nil
}

// probe installs the first file that needs a bulk transfer, trying each method in turn, and
// keeps the first that works for the whole install. It returns that member's index, or -1.
func (s *stager) probe(members []tarutil.Member) (int, error) {
	for i := range members {
		m := &members[i]
		if m.Type != tar.TypeReg || m.Size < tarutil.Alignment {
			continue
		}
		w := &worker{s: s}
		for _, s.method = range []Method{Clone, CopyFileRange, Copy} {
			err := w.file(s.dirfd, m.Name, m)
			if s.method == Copy || !isFallback(err) {
				return i, w.done(memberError(m, err))
			}
			if s.fallback == nil {
				s.fallback = fmt.Errorf("cannot clone from %s: %w", s.src.Name(), err)
			}
			unix.Unlinkat(s.dirfd, m.Name, 0)
		}
	}
	return -1, nil
}

// files creates the regular members, a directory at a time, on s.workers goroutines.
func (s *stager) files(members []tarutil.Member, skip int) error {
	groups := groupByDir(members, skip)
	var next atomic.Int64
	errs := make([]error, s.workers)
	var wg sync.WaitGroup
	for i := range s.workers {
		wg.Go(func() {
			w := &worker{s: s}
			for g := next.Add(1) - 1; g < int64(len(groups)) && errs[i] == nil; g = next.Add(1) - 1 {
				errs[i] = w.dir(members, groups[g])
			}
			errs[i] = w.done(errs[i])
			if errs[i] != nil {
				next.Store(int64(len(groups))) // stop the others
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// groupByDir lists the indexes of the regular members, grouped by parent directory in the
// order directories first appear, leaving out skip.
func groupByDir(members []tarutil.Member, skip int) [][]int32 {
	index := make(map[string]int)
	var groups [][]int32
	for i := range members {
		if members[i].Type != tar.TypeReg || i == skip {
			continue
		}
		dir := path.Dir(members[i].Name)
		g, ok := index[dir]
		if !ok {
			g = len(groups)
			index[dir] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], int32(i))
	}
	return groups
}

// links creates hardlinks, once every file exists, and symlinks, last, so that no member is
// ever written through one.
func (s *stager) links(members []tarutil.Member) error {
	for i := range members {
		m := &members[i]
		var err error
		switch m.Type {
		case tar.TypeLink:
			err = unix.Linkat(s.dirfd, m.Linkname, s.dirfd, m.Name, 0)
		case tar.TypeSymlink:
			err = unix.Symlinkat(m.Linkname, s.dirfd, m.Name)
		default:
			continue
		}
		if err != nil {
			return memberError(m, &os.LinkError{Op: "link", Old: m.Linkname, New: m.Name, Err: err})
		}
	}
	return nil
}

// modes gives directories their exact modes once nothing more is created in them.
func (s *stager) modes(members []tarutil.Member) error {
	for i := range members {
		m := &members[i]
		if m.Type == tar.TypeDir && (0o700|m.Mode)&^s.umask != m.Mode {
			if err := unix.Fchmodat(s.dirfd, m.Name, uint32(m.Mode), 0); err != nil {
				return memberError(m, &os.PathError{Op: "chmod", Path: m.Name, Err: err})
			}
		}
	}
	return nil
}

// worker creates files; its clone argument is reused so a file costs no allocation for it.
type worker struct {
	s      *stager
	fcr    unix.FileCloneRange
	cloned int64
	copied int64
}

// done adds the worker's counts to the stager's.
func (w *worker) done(err error) error {
	w.s.cloned.Add(w.cloned)
	w.s.copied.Add(w.copied)
	return err
}

// dir creates the members of one directory, relative to a descriptor of it.
func (w *worker) dir(members []tarutil.Member, group []int32) (err error) {
	// A cached tar is never rewritten in place, but one damaged under us must fail this
	// install, not crash pkg: a fault reading the mapping becomes a panic recovered here.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("read %s: %v (the cached tar changed while installing)", w.s.src.Name(), r)
		}
	}()
	dirfd, err := w.openDir(path.Dir(members[group[0]].Name))
	if err != nil {
		return err
	}
	if dirfd != w.s.dirfd {
		defer unix.Close(dirfd)
	}
	for _, i := range group {
		m := &members[i]
		if err := w.file(dirfd, path.Base(m.Name), m); err != nil {
			return memberError(m, err)
		}
	}
	w.release(&members[group[0]], &members[group[len(group)-1]])
	return nil
}

// release drops the mapping's pages around first's data to last's from this process; the
// page cache keeps them. It bounds the resident set on btrfs (55 MiB for 80k files) but not
// yet on XFS, where written tails still leave pages resident (365 MiB). A fault maps
// the whole aligned window around the page it needs (fault_around_bytes, 64 KiB by
// default), so the range is widened to those windows: the pages another worker still needs
// it simply faults in again.
func (w *worker) release(first, last *tarutil.Member) {
	lo := first.Offset &^ (faultAround - 1)
	hi := min((last.Offset+last.Size+faultAround-1)&^(faultAround-1), int64(len(w.s.data)))
	if lo < hi {
		unix.Madvise(w.s.data[lo:hi], unix.MADV_DONTNEED)
	}
}

func (w *worker) openDir(dir string) (int, error) {
	if dir == "." {
		return w.s.dirfd, nil
	}
	fd, err := unix.Openat(w.s.dirfd, dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return fd, nil
}

// file creates one regular file: open, fill, and close, with a chmod only when the umask
// took bits the member needs.
func (w *worker) file(dirfd int, name string, m *tarutil.Member) error {
	fd, err := unix.Openat(dirfd, name, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(m.Mode))
	if err != nil {
		return &os.PathError{Op: "create", Path: m.Name, Err: err}
	}
	err = w.fill(fd, m)
	if err == nil && m.Mode&w.s.umask != 0 {
		err = os.NewSyscallError("fchmod", unix.Fchmod(fd, uint32(m.Mode)))
	}
	if cerr := unix.Close(fd); err == nil && cerr != nil {
		err = &os.PathError{Op: "close", Path: m.Name, Err: cerr}
	}
	return err
}

// fill moves a member's data into fd by the install's method.
func (w *worker) fill(fd int, m *tarutil.Member) error {
	if m.Size < tarutil.Alignment || w.s.method == Copy {
		return w.write(fd, m.Offset, 0, m.Size)
	}
	if w.s.method == CopyFileRange {
		return w.copyRange(fd, m)
	}
	n := m.Size &^ (tarutil.Alignment - 1)
	if w.s.tail == truncateTail {
		// A clone may end off a block boundary only at the source's end of file.
		n = min((m.Size+tarutil.Alignment-1)&^(tarutil.Alignment-1), int64(len(w.s.data))-m.Offset)
	}
	if err := w.clone(fd, m.Offset, n); err != nil {
		return err
	}
	if n > m.Size {
		w.cloned -= n - m.Size
		return os.NewSyscallError("ftruncate", unix.Ftruncate(fd, m.Size))
	}
	return w.write(fd, m.Offset+n, n, m.Size-n)
}

func (w *worker) clone(fd int, off, n int64) error {
	w.fcr = unix.FileCloneRange{Src_fd: int64(w.s.src.Fd()), Src_offset: uint64(off), Src_length: uint64(n)}
	if err := unix.IoctlFileCloneRange(fd, &w.fcr); err != nil {
		return os.NewSyscallError("ioctl FICLONERANGE", err)
	}
	w.cloned += n
	return nil
}

func (w *worker) copyRange(fd int, m *tarutil.Member) error {
	off, n := m.Offset, m.Size
	for n > 0 {
		c, err := unix.CopyFileRange(int(w.s.src.Fd()), &off, fd, nil, int(min(n, 1<<30)), 0)
		if err != nil {
			return os.NewSyscallError("copy_file_range", err)
		}
		if c == 0 {
			return fmt.Errorf("copy_file_range: %s ended early", w.s.src.Name())
		}
		n -= int64(c)
		w.copied += int64(c)
	}
	return nil
}

// write writes n bytes of the mapped tar at off into fd at dstOff.
func (w *worker) write(fd int, off, dstOff, n int64) error {
	if off+n > int64(len(w.s.data)) {
		return fmt.Errorf("data past the end of %s", w.s.src.Name())
	}
	for n > 0 {
		c, err := unix.Pwrite(fd, w.s.data[off:off+n], dstOff)
		if err != nil {
			return os.NewSyscallError("pwrite", err)
		}
		off, dstOff, n = off+int64(c), dstOff+int64(c), n-int64(c)
		w.copied += int64(c)
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

package install

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"pkg/internal/dirfd"
	"pkg/internal/durable"
	"pkg/internal/parallel"
	"pkg/internal/statfs"
	"pkg/internal/termtext"
	"pkg/tarutil"
)

// Method is how member data reaches the installed files.
type Method string

const (
	Clone         Method = "clone"           // FICLONERANGE: blocks shared with the cache
	CopyFileRange Method = "copy_file_range" // copied inside the kernel
	Copy          Method = "copy"            // read and written through a pooled buffer
)

// tailMode is how a cloned file's last partial block is finished; which is cheaper depends
// on the filesystem (DESIGN.md, install engine rules).
type tailMode int

const (
	writeTail    tailMode = iota // clone the aligned prefix, copy the rest (XFS: truncating a shared block copies it)
	truncateTail                 // clone whole blocks, then ftruncate to size (btrfs measured faster)
)

// copyBufSize is the pooled buffer of the Copy method.
const copyBufSize = 128 << 10

var copyBufs = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// stager builds one package tree in a staging directory from a cached aligned tar: the
// directories first, then the regular files by a few workers, each filling whole
// directories, then links, then directory modes and times. Every path is resolved relative to a
// directory descriptor and opened with O_NOFOLLOW.
type stager struct {
	ctx      context.Context // stops files between directories
	src      *os.File
	srcfd    int
	size     int64 // of src
	tails    int   // the cache entry's tails directory (fetch.Cache, tails.go), O_PATH; -1 if none
	dirfd    int   // the staging directory
	dir      string
	umask    fs.FileMode
	tail     tailMode
	block    int64 // a clone's offsets and lengths are multiples of it: the filesystem's block, at least tarutil.Alignment
	workers  int
	methods  []Method // what probe tries, in order
	method   Method   // "" until the first bulk transfer decides it
	fallback error    // why the method is not Clone
	cloned   atomic.Int64
	copied   atomic.Int64
	// noKernelCopy is set when sendfile or copy_file_range refused a small copy.
	noKernelCopy atomic.Bool
	noTails      atomic.Bool   // set when a clone from a tail file was refused for a reason that will not change
	noTimes      bool          // leave modification times as creating the members made them: an npm package's
	durable      durable.Files // how what the workers write is made durable for the commit (durable.Commit): the caller's to set
	wb           *writeback    // while the files are made, if tracked, or on btrfs if syncing
	tracked      bool          // every file written was waited for: the commit need not sync the whole filesystem
	fewFiles     bool          // at most maxTracked files with data: on btrfs the entry keeps its small members' tails (fill)
	sync         bool          // the commit syncs: an untracked tree is written back as it is staged (flusher if flushes, else wb)
	flushes      bool          // not on btrfs (newStager)
	fl           *flusher      // while the files are made, if syncing, flushing and not tracked
}

// newStager returns a stager to fill the staging directory dir, open at dirfd (not
// O_PATH), from src, of size bytes. It closes dirfd at close.
func newStager(ctx context.Context, src *os.File, size int64, dirfd int, dir string, umask fs.FileMode) *stager {
	s := &stager{ctx: ctx, src: src, srcfd: int(src.Fd()), size: size, tails: -1, dirfd: dirfd, dir: dir, umask: umask,
		flushes: true, workers: min(runtime.GOMAXPROCS(0), 4), methods: []Method{Clone, CopyFileRange, Copy}}
	s.block = tarutil.Alignment
	if fs, err := statfs.Of(dirfd); err == nil {
		if fs.Kind == statfs.Btrfs {
			s.tail = truncateTail
			// There a syncfs commits a transaction, which holds back the workers' creates
			// and clones while it runs: the kernel tree took a median 0.90x cp with the
			// flusher and 0.74x without (docs/history.md). Each written file's write-back
			// is started instead (stage), and the commit's syncfs waits for it all.
			s.flushes = false
		}
		// XFS with 16 KiB blocks, say; not a size that is no power of two (FUSE) or is
		// a transfer size rather than a block (NFS's 1 MiB).
		if b := fs.Block; b > s.block && b <= 64<<10 && b&(b-1) == 0 {
			s.block = b
		}
	}
	return s
}

func (s *stager) close() {
	unix.Close(s.dirfd)
	if s.tails >= 0 {
		unix.Close(s.tails)
	}
	runtime.KeepAlive(s.src)
}

// useTails makes s clone tails from the entry's tails directory beside the cache's tar at
// tarPath (fetch.Cache keeps tars/<sha256>.tails beside tars/<sha256>.tar), if there is
// one and the root's filesystem has blocks of tarutil.Alignment, in which tails are cut.
func (s *stager) useTails(tarPath string) {
	base, ok := strings.CutSuffix(tarPath, ".tar")
	if !ok || s.block != tarutil.Alignment {
		return
	}
	if fd, err := unix.Open(base+".tails", unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
		s.tails = fd
	}
}

// stage creates every member, each with its mode and modification time, and waits for
// the write-back of the data it wrote, if s.durable tracks it and the files are few
// enough (maxTracked); past that, or on btrfs where nothing is tracked (before Linux 6.1),
// if the commit syncs, it starts that write-back on btrfs and runs the flusher elsewhere.
func (s *stager) stage(members []tarutil.Member) error {
	if err := s.dirs(members); err != nil {
		return err
	}
	s.fewFiles = tarutil.DataFiles(members) <= maxTracked
	s.tracked = s.durable.Tracks() && s.fewFiles
	switch {
	case s.tracked:
		s.wb = newWriteback(s.durable, true)
	case s.sync && s.flushes:
		s.fl = newFlusher(s.dirfd, s.dir)
	case s.sync && s.durable.Starts():
		// btrfs: left to the commit's syncfs, the write-back of tens of thousands of small
		// files runs in one flusher thread while the install waits; started file by file
		// here it runs beside the workers (docs/history.md). So too before Linux 6.1,
		// where nothing is tracked and the commit is a syncfs whatever the tree.
		s.wb = newWriteback(s.durable, false)
	}
	first, err := s.probe(members)
	if err == nil {
		err = s.files(members, first)
	}
	if s.wb != nil {
		err = errors.Join(err, s.wb.finish())
		s.wb = nil
	}
	err = errors.Join(err, s.fl.finish())
	s.fl = nil
	if err != nil {
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
	return fmt.Errorf("member %s: %w", termtext.Quote(m.Name), err)
}

// dirs makes the directories, each in its parent opened beneath the staging directory,
// kept open for its next subdirectories: an archive lists a directory's together.
func (s *stager) dirs(members []tarutil.Member) error {
	parents := newDirCache(s.dirfd)
	defer parents.close()
	for i := range members {
		m := &members[i]
		if m.Type != tar.TypeDir {
			continue
		}
		fd, base, err := parents.parent(m.Name)
		if err == nil {
			err = unix.Mkdirat(fd, base, uint32(0o700|m.Mode))
		}
		if err != nil {
			return memberError(m, pathError("mkdir", m.Name, err))
		}
	}
	return nil
}

// probe installs the first file that needs a bulk transfer, one a clone could cover if
// there is one, trying each method in turn, and keeps the first that works for the whole
// install. It returns that member's index, or -1.
func (s *stager) probe(members []tarutil.Member) (int, error) {
	i := slices.IndexFunc(members, func(m tarutil.Member) bool { return s.cloneable(&m) })
	if i < 0 {
		i = slices.IndexFunc(members, func(m tarutil.Member) bool { return m.Type == tar.TypeReg && m.Size >= tarutil.Alignment })
		if i >= 0 && s.block > tarutil.Alignment {
			s.fallback = fmt.Errorf("no file's data starts on a %d KiB block of the filesystem, as a clone needs", s.block>>10)
		}
	}
	if i < 0 {
		return -1, nil
	}
	m, w := &members[i], &worker{s: s}
	err := inParent(s.dirfd, m.Name, func(fd int, base string) error { return s.probeFile(w, fd, base, m) })
	return i, w.done(memberError(m, err))
}

// cloneable reports whether a clone can cover a block of m's data: its data starts on a
// block of the filesystem (tarutil.Alignment is one only where blocks are that size or
// smaller) and fill a block at least.
func (s *stager) cloneable(m *tarutil.Member) bool {
	return m.Type == tar.TypeReg && m.Size >= s.block && m.Offset%s.block == 0
}

// probeFile creates m as base in dirfd by the first method that works.
func (s *stager) probeFile(w *worker, dirfd int, base string, m *tarutil.Member) error {
	for i, method := range s.methods {
		s.method = method
		err := w.file(dirfd, base, m)
		if i == len(s.methods)-1 || !isFallback(err) {
			return err
		}
		if s.fallback == nil {
			s.fallback = fmt.Errorf("cannot clone from %s: %w", s.src.Name(), err)
		}
		unix.Unlinkat(dirfd, base, 0)
	}
	return nil
}

// files creates the regular members, a directory at a time, on s.workers goroutines, the
// caller's among them (parallel.EachWorker).
func (s *stager) files(members []tarutil.Member, skip int) error {
	groups := groupByDir(members, skip)
	ws := make([]worker, s.workers)
	for i := range ws {
		ws[i].s = s
	}
	err := parallel.EachWorker(s.ctx, len(groups), s.workers, func(_ context.Context, w, g int) error {
		return ws[w].dir(members, groups[g])
	})
	for i := range ws {
		err = ws[i].done(err)
	}
	return err
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
		dir := tarutil.Parent(members[i].Name)
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

// links creates hardlinks and symlinks, in member order, once every file and directory
// exists, so that no member is ever written through a symlink.
func (s *stager) links(members []tarutil.Member) error {
	for i := range members {
		m := &members[i]
		var err error
		switch m.Type {
		case tar.TypeLink:
			err = inParent(s.dirfd, m.Linkname, func(oldfd int, oldBase string) error {
				return inParent(s.dirfd, m.Name, func(fd int, base string) error {
					return unix.Linkat(oldfd, oldBase, fd, base, 0)
				})
			})
		case tar.TypeSymlink:
			err = inParent(s.dirfd, m.Name, func(fd int, base string) error {
				if err := unix.Symlinkat(m.Linkname, fd, base); err != nil || s.noTimes {
					return err
				}
				ts := mtime(m)
				return unix.UtimesNanoAt(fd, base, ts[:], unix.AT_SYMLINK_NOFOLLOW)
			})
		default:
			continue
		}
		if err != nil {
			return memberError(m, &os.LinkError{Op: "link", Old: m.Linkname, New: m.Name, Err: unwrapPath(err)})
		}
	}
	return nil
}

// modes gives directories their exact modes and modification times once nothing more is
// created in them, the deepest first, so that no directory loses its owner's search bit
// before those below it are done. Each is opened through no symlink and changed by
// descriptor.
func (s *stager) modes(members []tarutil.Member) error {
	for i := len(members) - 1; i >= 0; i-- {
		m := &members[i]
		chmod := (0o700|m.Mode)&^s.umask != m.Mode
		if m.Type != tar.TypeDir || !chmod && s.noTimes {
			continue
		}
		fd, err := openBeneath(s.dirfd, m.Name, unix.O_RDONLY|unix.O_DIRECTORY)
		if err != nil {
			return memberError(m, err)
		}
		if chmod {
			if err = unix.Fchmod(fd, uint32(m.Mode)); err != nil {
				err = pathError("chmod", m.Name, err)
			}
		}
		if err == nil {
			err = s.setTime(fd, m)
		}
		unix.Close(fd)
		if err != nil {
			return memberError(m, err)
		}
	}
	return nil
}

// mtime returns the times utimensat gives a member: its modification time, and its access
// time left as creating it made it.
func mtime(m *tarutil.Member) [2]unix.Timespec {
	return [2]unix.Timespec{{Nsec: unix.UTIME_OMIT}, timespec(m.MTime)}
}

// timespec returns sec as a Timespec, held within the range of the platform's seconds:
// on 32-bit ones (386, arm) utimensat takes none before 1901 or after January 2038.
func timespec(sec int64) unix.Timespec {
	if unsafe.Sizeof(unix.Timespec{}.Sec) == 4 {
		sec = min(max(sec, math.MinInt32), math.MaxInt32)
	}
	ts, _ := unix.TimeToTimespec(time.Unix(sec, 0)) // in range: no error
	return ts
}

// setTime sets the modification time of fd, open on m, to m's, unless s.noTimes.
func (s *stager) setTime(fd int, m *tarutil.Member) error {
	if s.noTimes {
		return nil
	}
	ts := mtime(m)
	if err := dirfd.Futimens(fd, &ts); err != nil {
		return &os.PathError{Op: "utimensat", Path: m.Name, Err: err}
	}
	return nil
}

// worker creates files; its clone argument and name buffer are reused so a file costs no
// allocation for them.
type worker struct {
	s      *stager
	fcr    unix.FileCloneRange
	cname  []byte // the file's name, NUL-terminated for a raw openat
	tname  []byte // a tail file's, so too
	cloned int64
	copied int64
	dirty  bool // the file being filled got data written or truncated, not only cloned
}

// done adds the worker's counts to the stager's.
func (w *worker) done(err error) error {
	w.s.cloned.Add(w.cloned)
	w.s.copied.Add(w.copied)
	return err
}

// dir creates the members of one directory, relative to a descriptor of it.
func (w *worker) dir(members []tarutil.Member, group []int32) error {
	dirfd, err := w.openDir(tarutil.Parent(members[group[0]].Name))
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
	return nil
}

// openDir returns a descriptor of the directory dir ("." for the top), O_PATH, which the
// caller closes unless it is the staging directory's own.
func (w *worker) openDir(dir string) (int, error) {
	if dir == "." {
		return w.s.dirfd, nil
	}
	return openBeneath(w.s.dirfd, dir, unix.O_PATH|unix.O_DIRECTORY)
}

// file creates one regular file: open, fill, and close, with a chmod only when the umask
// took bits the member needs.
func (w *worker) file(dirfd int, name string, m *tarutil.Member) error {
	w.cname = append(append(w.cname[:0], name...), 0)
	fd, err := openat(dirfd, w.cname, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(m.Mode))
	if err != nil {
		return &os.PathError{Op: "create", Path: m.Name, Err: err}
	}
	copied := w.copied
	w.dirty = false
	err = w.fill(fd, m)
	if err == nil && m.Mode&w.s.umask != 0 {
		err = os.NewSyscallError("fchmod", unix.Fchmod(fd, uint32(m.Mode)))
	}
	if err == nil {
		err = w.s.setTime(fd, m)
	}
	w.s.fl.wrote(w.copied - copied)
	if err == nil && (w.dirty || w.copied > copied) && w.s.wb != nil {
		w.s.wb.send(heldFile{fd, m}) // which closes it
		return nil
	}
	if cerr := closeFd(fd); err == nil && cerr != nil {
		err = &os.PathError{Op: "close", Path: m.Name, Err: cerr}
	}
	return err
}

// fill moves a member's data into fd by the install's method. Unless that is Copy, data a
// clone of the tar cannot cover (files under a block, the last partial block of others)
// are cloned from their tail files where the cache keeps them; else they move inside the
// kernel too, by sendfile into a new file and copy_file_range after a clone, so the
// process's resident set stays small however large the tar; where the kernel refuses those
// calls, they are copied (see small). On btrfs (truncateTail) the cache keeps the tails
// over tarutil.MaxInline, whose clone shares the tail file's block at any offset, and, in
// entries of at most maxTracked files with data, those of files under a block, whose clone
// into the new, empty file at offset 0 copies its inline extent (fs/btrfs/reflink.c,
// clone_copy_inline_extent): no data written. A shorter tail of a larger file would be
// copied into the page cache by a clone at its offset past 0: that last block is cloned
// from the tar and truncated.
func (w *worker) fill(fd int, m *tarutil.Member) error {
	b := w.s.block
	switch {
	case w.s.method == Copy:
		return w.copy(fd, m.Offset, 0, m.Size)
	case m.Size < b:
		if w.tailKept(m) {
			if ok, err := w.cloneTail(fd, m, 0); ok || err != nil {
				return err
			}
		}
		return w.small(fd, m.Offset, 0, m.Size, true)
	case w.s.method == CopyFileRange || !w.s.cloneable(m):
		return w.copyRange(fd, m.Offset, 0, m.Size)
	}
	n := m.Size &^ (b - 1)
	if w.s.tail == truncateTail && !w.tailKept(m) {
		return w.cloneTruncate(fd, m, 0)
	}
	if err := w.clone(fd, m.Offset, 0, n); err != nil {
		return err
	}
	if n == m.Size {
		return nil
	}
	if ok, err := w.cloneTail(fd, m, n); ok || err != nil {
		return err
	}
	if w.s.tail == truncateTail {
		return w.cloneTruncate(fd, m, n)
	}
	return w.small(fd, m.Offset+n, n, m.Size-n, false)
}

// tailKept reports whether the cache entry may keep m's tail as a file of its own
// (fetch's tailKind): any where it keeps tails, but on btrfs only those a clone copies no
// data for, so that the install tries no file the entry does not have.
func (w *worker) tailKept(m *tarutil.Member) bool {
	if w.s.tails < 0 {
		return false
	}
	return w.s.tail != truncateTail || tarutil.SharedTail(m, w.s.fewFiles)
}

// cloneTruncate clones m's data from dstOff, a block of the file, to the end of its last
// block from the tar into fd at dstOff, and truncates fd to m's size.
func (w *worker) cloneTruncate(fd int, m *tarutil.Member, dstOff int64) error {
	b := w.s.block
	// A clone may end off a block boundary only at the source's end of file.
	n := min((m.Size+b-1)&^(b-1), w.s.size-m.Offset) - dstOff
	if err := w.clone(fd, m.Offset+dstOff, dstOff, n); err != nil {
		return err
	}
	if dstOff+n == m.Size {
		return nil
	}
	w.cloned -= dstOff + n - m.Size
	w.dirty = true // btrfs zeroes the cut block's end in the page cache
	return os.NewSyscallError("ftruncate", unix.Ftruncate(fd, m.Size))
}

// small copies the n bytes, less than a block, of the tar at off into fd at dstOff: with
// sendfile into a new file, with copy_file_range after a clone, or, once the kernel has
// refused either for a reason that will not change (isFallback), through a buffer for the
// rest of the install.
func (w *worker) small(fd int, off, dstOff, n int64, empty bool) error {
	if n == 0 {
		return nil
	}
	if !w.s.noKernelCopy.Load() {
		var err error
		if empty {
			err = w.send(fd, off, n)
		} else {
			err = w.copyRange(fd, off, dstOff, n)
		}
		if !isFallback(err) {
			return err
		}
		w.s.noKernelCopy.Store(true)
	}
	return w.copy(fd, off, dstOff, n)
}

// cloneTail clones m's tail (tarutil.Member.Tail) into fd at dstOff, whole from its file
// among the entry's tails, and reports whether it did: not where the entry keeps none, the
// install copies rather than clones, or the file is missing or not the tail's size (the
// clone asks for the tail's length: the kernel refuses a range past the end of a shorter
// file, and an end off a block short of a longer one's end). The caller then moves those
// bytes from the tar.
func (w *worker) cloneTail(fd int, m *tarutil.Member, dstOff int64) (bool, error) {
	off, n := m.Tail()
	if w.s.tails < 0 || n == 0 || w.s.method == CopyFileRange || w.s.noTails.Load() {
		return false, nil
	}
	w.tname = append(strconv.AppendInt(w.tname[:0], off, 10), 0)
	src, err := openat(w.s.tails, w.tname, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, nil
	}
	w.fcr = unix.FileCloneRange{Src_fd: int64(src), Src_length: uint64(n), Dest_offset: uint64(dstOff)}
	err = cloneRange(fd, &w.fcr)
	unix.Close(src)
	switch {
	case err == nil:
		w.cloned += n
		return true, nil
	case errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) || errors.Is(err, unix.EIO):
		return false, os.NewSyscallError("ioctl FICLONERANGE", err)
	case isFallback(err) && !errors.Is(err, unix.EINVAL):
		w.s.noTails.Store(true) // another filesystem, say: the tar's bytes, for every file
	}
	return false, nil
}

// clone clones n bytes of the tar at off into fd at dstOff.
func (w *worker) clone(fd int, off, dstOff, n int64) error {
	w.fcr = unix.FileCloneRange{Src_fd: int64(w.s.srcfd), Src_offset: uint64(off), Src_length: uint64(n), Dest_offset: uint64(dstOff)}
	if err := cloneRange(fd, &w.fcr); err != nil {
		return os.NewSyscallError("ioctl FICLONERANGE", err)
	}
	w.cloned += n
	return nil
}

// copyRange copies n bytes of the tar at off into fd at dstOff with copy_file_range.
func (w *worker) copyRange(fd int, off, dstOff, n int64) error {
	for n > 0 {
		c, err := copyFileRange(w.s.srcfd, &off, fd, &dstOff, int(min(n, 1<<30)))
		if err != nil {
			return os.NewSyscallError("copy_file_range", err)
		}
		if c == 0 {
			return w.early()
		}
		n -= int64(c)
		w.copied += int64(c)
	}
	return nil
}

// send copies the n bytes of the tar at off into the new, empty file fd with sendfile:
// one call that, unlike copy_file_range, does not first try to clone.
func (w *worker) send(fd int, off, n int64) error {
	for n > 0 {
		c, err := sendfile(fd, w.s.srcfd, &off, int(n))
		if err != nil {
			return os.NewSyscallError("sendfile", err)
		}
		if c == 0 {
			return w.early()
		}
		n -= int64(c)
		w.copied += int64(c)
	}
	return nil
}

// copy copies n bytes of the tar at off into fd at dstOff through a pooled buffer.
func (w *worker) copy(fd int, off, dstOff, n int64) error {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	for n > 0 {
		b := (*bp)[:min(n, copyBufSize)]
		c, err := unix.Pread(w.s.srcfd, b, off)
		if err != nil {
			return &os.PathError{Op: "read", Path: w.s.src.Name(), Err: err}
		}
		if c == 0 {
			return w.early()
		}
		for b = b[:c]; len(b) > 0; {
			k, err := unix.Pwrite(fd, b, dstOff)
			if err != nil {
				return os.NewSyscallError("pwrite", err)
			}
			b, dstOff = b[k:], dstOff+int64(k)
		}
		off, n = off+int64(c), n-int64(c)
		w.copied += int64(c)
	}
	return nil
}

func (w *worker) early() error {
	return fmt.Errorf("%s ended early (the cached tar changed while installing)", w.s.src.Name())
}

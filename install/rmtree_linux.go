package install

import (
	"bytes"
	"errors"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"pkg/internal/statfs"
)

// direntBufSize is one getdents64 read: a few hundred names.
const direntBufSize = 32 << 10

var direntBufs = sync.Pool{New: func() any { b := make([]byte, direntBufSize); return &b }}

// removeTree deletes the tree at p, reached from its part's descriptor through no symlink,
// on the root's mount alone.
func (r *Root) removeTree(p place) error {
	if r.fd[p.in] < 0 {
		return nil // a part made when first needed: nothing in it
	}
	return removeBeneath(r.fd[top], r.fd[p.in], p.name, r.pathOf(p))
}

// errMountPoint is what removing a tree fails with where it holds a mount point.
var errMountPoint = errors.New("a mount point of another filesystem: not entered")

// removeIn deletes the tree rel under dir, reaching it through no symlink and entering no
// mount point: everything on dir's mount. Directories are emptied by a few workers (one on
// XFS and btrfs), each taking a subdirectory found where one is spare, at any depth (a
// package's tree is one directory, usr/ or NAME-VERSION/, at its top), relative to
// directory descriptors, reading names with getdents64 into a pooled buffer that is given
// back at the end of each directory; files are unlinked as they are read. A file or
// symlink at rel (left where a package's tree was) is unlinked.
func removeIn(dir, rel string) error {
	top, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(top)
	return removeBeneath(top, top, filepath.ToSlash(rel), filepath.Join(dir, rel))
}

// removeBeneath is removeIn of the tree rel beneath the directory dirfd, path in messages,
// on the mount of the directory mnt.
func removeBeneath(mnt, dirfd int, rel, path string) error {
	var on fileStat
	if err := on.at(mnt, "", 0); err != nil {
		return &os.PathError{Op: "stat", Path: path, Err: err}
	}
	err := inParent(dirfd, rel, func(parent int, base string) error {
		var st fileStat
		if err := st.at(parent, base, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return err
		}
		switch {
		case st.mode&unix.S_IFMT != unix.S_IFDIR:
			return unix.Unlinkat(parent, base, 0)
		case !st.mount.same(on.mount):
			return errMountPoint
		}
		return removeAt(parent, base, on.mount, removeWorkers(parent))
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &os.PathError{Op: "remove", Path: path, Err: err}
	}
	return nil
}

// removeWorkers is how many goroutines remove a tree on the filesystem of fd. Parallel
// unlinks contend on XFS's log and btrfs's tree locks, and help on ext4 (kernel-shaped tree,
// docs/history.md).
func removeWorkers(fd int) int {
	if fs, err := statfs.Of(fd); err == nil && (fs.Kind == statfs.XFS || fs.Kind == statfs.Btrfs) {
		return 1
	}
	return min(runtime.GOMAXPROCS(0), 4)
}

// remover removes trees on one mount, a directory at a time on each of its goroutines.
type remover struct {
	m     mount
	spare chan struct{} // a token for each goroutine that may yet be started
}

func newRemover(m mount, workers int) *remover {
	rm := &remover{m: m, spare: make(chan struct{}, max(workers-1, 0))}
	for range cap(rm.spare) {
		rm.spare <- struct{}{}
	}
	return rm
}

// removeAt removes the directory name in parent, on m, and everything under it, its
// subdirectories on up to workers goroutines in all.
func removeAt(parent int, name string, m mount, workers int) error {
	return newRemover(m, workers).dir(parent, name)
}

// dir removes the directory name in parent and everything under it: its files as they are
// read, then each subdirectory, on a new goroutine while a token is spare, else on this one;
// then the directory itself, once every subdirectory is gone.
func (rm *remover) dir(parent int, name string) error {
	fd, err := rm.open(parent, name)
	if err != nil {
		return &os.PathError{Op: "open", Path: name, Err: err}
	}
	var sub []string
	err = emptyDir(fd, name, func(s string) { sub = append(sub, s) })
	if err == nil && len(sub) > 0 {
		var wg sync.WaitGroup
		errs := make([]error, len(sub))
		for i, s := range sub {
			select {
			case <-rm.spare:
				wg.Go(func() {
					errs[i] = rm.dir(fd, s)
					rm.spare <- struct{}{}
				})
			default:
				errs[i] = rm.dir(fd, s)
			}
		}
		wg.Wait()
		err = errors.Join(errs...)
	}
	unix.Close(fd)
	if err != nil {
		return err
	}
	return rmdirAt(parent, name)
}

// open opens the directory name of parent to empty it, refusing a mount point: in one
// openat2 that crosses none (RESOLVE_NO_XDEV), or where the kernel lacks it or the
// directory is closed to this process (openDirAt), by the mount of what it opened.
func (rm *remover) open(parent int, name string) (int, error) {
	if !noOpenat2.Load() {
		how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_NO_XDEV | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
		fd, err := unix.Openat2(parent, name, &how)
		switch err {
		case nil:
			return fd, nil
		case unix.EXDEV:
			return -1, errMountPoint
		case unix.ENOSYS, unix.EPERM: // kernels before 5.6; seccomp filters older than openat2
			noOpenat2.Store(true)
		case unix.EACCES, unix.EAGAIN, unix.EINTR:
		default:
			return -1, err
		}
	}
	fd, err := openDirAt(parent, name)
	if err != nil {
		return -1, err
	}
	var st fileStat
	if err = st.at(fd, "", 0); err == nil && !st.mount.same(rm.m) {
		err = errMountPoint
	}
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// noOpenat2 is set once openat2 is found missing.
var noOpenat2 atomic.Bool

// emptyDir unlinks every non-directory in the directory name open at fd and reports its
// subdirectories to subdir.
func emptyDir(fd int, name string, subdir func(string)) error {
	buf := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(buf)
	writable := false
	for {
		n, err := unix.Getdents(fd, *buf)
		if err != nil {
			return &os.PathError{Op: "getdents", Path: name, Err: err}
		}
		if n <= 0 {
			return nil
		}
		for cname, typ := range dirents((*buf)[:n]) {
			ent := cname[:len(cname)-1]
			if typ == unix.DT_DIR {
				subdir(string(ent))
				continue
			}
			err := unlinkat(fd, cname, 0)
			if err == unix.EACCES && !writable { // a read-only directory a package shipped
				writable = true
				if unix.Fchmod(fd, 0o700) == nil {
					err = unlinkat(fd, cname, 0)
				}
			}
			if err == unix.EISDIR || err == unix.EPERM && typ == unix.DT_UNKNOWN {
				subdir(string(ent)) // a filesystem that does not report types
				continue
			}
			if err != nil && err != unix.ENOENT {
				return &os.PathError{Op: "unlink", Path: string(ent), Err: err}
			}
		}
	}
}

// dirents yields the entries of b, what getdents64 read, but for "." and "..": each
// name with its terminating NUL, which the raw *at calls take, and its d_type.
func dirents(b []byte) iter.Seq2[[]byte, byte] {
	return func(yield func([]byte, byte) bool) {
		for len(b) > 0 {
			reclen := int(*(*uint16)(unsafe.Pointer(&b[16])))
			typ, ent := b[18], b[19:reclen]
			b = b[reclen:]
			cname := ent[:bytes.IndexByte(ent, 0)+1]
			if name := cname[:len(cname)-1]; string(name) == "." || string(name) == ".." {
				continue
			}
			if !yield(cname, typ) {
				return
			}
		}
	}
}

// openDirAt opens the directory name of parent to read it. A directory a package shipped
// without access for its owner (mode 000, or 0600 around a subdirectory), which only root
// could enter, is first opened up to 0700, through an O_PATH descriptor so that no symlink
// is followed; so is parent, when it cannot be searched.
func openDirAt(parent int, name string) (int, error) {
	open := func() (int, error) {
		return unix.Openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
	fd, err := open()
	if err != unix.EACCES {
		return fd, err
	}
	path, perr := unix.Openat(parent, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if perr == unix.EACCES && unix.Fchmod(parent, 0o700) == nil {
		path, perr = unix.Openat(parent, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
	if perr != nil {
		return -1, err
	}
	defer unix.Close(path)
	if unix.Fchmodat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(path), 0o700, 0) != nil {
		return -1, err
	}
	return open()
}

func rmdirAt(parent int, name string) error {
	err := unix.Unlinkat(parent, name, unix.AT_REMOVEDIR)
	if err == unix.EACCES && unix.Fchmod(parent, 0o700) == nil {
		err = unix.Unlinkat(parent, name, unix.AT_REMOVEDIR)
	}
	if err == unix.ENOENT {
		return nil
	}
	return err
}

// RemoveTree deletes the tree rel under dir (a directory pkg owns), reaching it through no
// symlink and on dir's mount alone; a tree already gone is no error.
func RemoveTree(dir, rel string) error { return removeIn(dir, rel) }

package install

import (
	"errors"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// beneath is how openBeneath resolves: inside the starting directory, through no symlink
// and no /proc magic link at all (openat2(2)).
const beneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// openat2Retries bounds the retries of an openat2 that a concurrent rename made fail with
// EAGAIN (openat2(2): RESOLVE_BENEATH resolution restarts are not done in the kernel).
const openat2Retries = 8

// openBeneath opens name, a slash-separated path relative to dirfd, with flags, failing
// (ELOOP, or ENOTDIR from the walk) when any component is a symlink and with EXDEV when the
// path leaves dirfd. Where openat2 is missing or filtered it walks the path one O_NOFOLLOW
// component at a time.
func openBeneath(dirfd int, name string, flags int) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags | unix.O_NOFOLLOW | unix.O_CLOEXEC), Resolve: beneath}
	for range openat2Retries {
		fd, err := unix.Openat2(dirfd, name, &how)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM):
			// Kernels before 5.6, and seccomp filters older than openat2 (EPERM).
			return openWalk(dirfd, name, flags)
		case !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR):
			return -1, &os.PathError{Op: "openat2", Path: name, Err: err}
		}
	}
	return -1, &os.PathError{Op: "openat2", Path: name, Err: unix.EAGAIN}
}

// openWalk is openBeneath without openat2: it opens each directory of name in turn with
// O_NOFOLLOW, refusing "..", so no component may be a symlink.
func openWalk(dirfd int, name string, flags int) (int, error) {
	elems := strings.Split(name, "/")
	fd := dirfd
	for i, elem := range elems {
		if elem == ".." || elem == "" {
			if fd != dirfd {
				unix.Close(fd)
			}
			return -1, &os.PathError{Op: "openat", Path: name, Err: unix.EXDEV}
		}
		f := unix.O_PATH | unix.O_DIRECTORY
		if i == len(elems)-1 {
			f = flags
		}
		next, err := unix.Openat(fd, elem, f|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if fd != dirfd {
			unix.Close(fd)
		}
		if err != nil {
			return -1, &os.PathError{Op: "openat", Path: name, Err: err}
		}
		fd = next
	}
	return fd, nil
}

// openParent opens the directory that holds name, relative to dirfd, for the *at calls that
// then take name's last component. It returns dirfd itself for a name at the top, and the
// last component.
func openParent(dirfd int, name string) (fd int, base string, err error) {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return dirfd, name, nil
	}
	fd, err = openBeneath(dirfd, name[:i], unix.O_PATH|unix.O_DIRECTORY)
	return fd, name[i+1:], err
}

// closeParent closes what openParent opened.
func closeParent(dirfd, fd int) {
	if fd != dirfd && fd >= 0 {
		unix.Close(fd)
	}
}

// inParent calls fn with a descriptor of the directory holding name, opened beneath dirfd
// through no symlink, and name's last component.
func inParent(dirfd int, name string, fn func(fd int, base string) error) error {
	fd, base, err := openParent(dirfd, name)
	if err != nil {
		return err
	}
	defer closeParent(dirfd, fd)
	return fn(fd, base)
}

// pathError returns err as an *os.PathError for op on name, unless it is one already.
func pathError(op, name string, err error) error {
	if _, ok := err.(*os.PathError); ok {
		return err
	}
	return &os.PathError{Op: op, Path: name, Err: err}
}

// unwrapPath returns the errno inside an *os.PathError, for errors that name two paths.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// mount tells apart the mounts files are on: by device, and by the mount's id where
// statx(2) reports one (Linux 5.8), which also tells two bind mounts of one filesystem apart.
type mount struct{ dev, id uint64 }

func (m mount) same(o mount) bool { return m.dev == o.dev && (m.id == 0 || o.id == 0 || m.id == o.id) }

// fileStat is what pkg checks of a part of its layout, or of a directory it deletes.
type fileStat struct {
	mode, uid uint32
	mount     mount
}

// at fills st with the status of name in dirfd, or of dirfd itself when name is "", not
// following a last symlink when flags has AT_SYMLINK_NOFOLLOW.
func (st *fileStat) at(dirfd int, name string, flags int) error {
	if name == "" {
		flags |= unix.AT_EMPTY_PATH
	}
	var x unix.Statx_t
	err := unix.Statx(dirfd, name, flags, unix.STATX_TYPE|unix.STATX_MODE|unix.STATX_UID|unix.STATX_MNT_ID, &x)
	if err == nil {
		*st = fileStat{mode: uint32(x.Mode), uid: x.Uid, mount: mount{dev: unix.Mkdev(x.Dev_major, x.Dev_minor)}}
		if x.Mask&unix.STATX_MNT_ID != 0 {
			st.mount.id = x.Mnt_id
		}
		return nil
	}
	if err != unix.ENOSYS && err != unix.EPERM {
		return err
	}
	// Kernels before 4.11, and seccomp filters older than statx (EPERM).
	var s unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &s, flags); err != nil {
		return err
	}
	*st = fileStat{mode: s.Mode, uid: s.Uid, mount: mount{dev: s.Dev}}
	return nil
}

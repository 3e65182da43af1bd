// Package dirfd reaches files by one name relative to a directory held open, never
// through a symlink in that name: what the cache and pkg run's run roots are reached by, so
// that another user who renames a directory, or puts a symlink in its place, while a
// command runs moves nothing it reads or writes (#30). It does not walk paths of several
// names, nor confine anything beneath a directory.
package dirfd

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Path returns a path to the file f as opened: /proc/self/fd/N resolves to it wherever it
// is now, whatever took its name. It is this process's alone, and good while f is open.
func Path(f *os.File) string { return "/proc/self/fd/" + strconv.Itoa(int(f.Fd())) }

// Open opens the file name of the directory d with flag and perm, never through a symlink
// (O_NOFOLLOW: a symlink there is ELOOP), close-on-exec, again when interrupted by a signal.
// The file is named, in errors and by Name, by d's name joined with name.
func Open(d *os.File, name string, flag int, perm uint32) (*os.File, error) {
	for {
		fd, err := unix.Openat(int(d.Fd()), name, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: filepath.Join(d.Name(), name), Err: err}
		}
		return os.NewFile(uintptr(fd), filepath.Join(d.Name(), name)), nil
	}
}

// Lstat returns what the file name of the directory d is, a symlink itself rather than
// what it points to: the file opened O_PATH through d's descriptor (Open, whose
// O_NOFOLLOW opens a symlink as itself) and stat'ed, needing no /proc, where a mount
// namespace or a container may have none. Errors name the file as Open's do.
func Lstat(d *os.File, name string) (fs.FileInfo, error) {
	f, err := Open(d, name, unix.O_PATH, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}

// Futimens sets the times of the open file fd to ts (utimensat(2) with a NULL path), as
// glibc's futimens does: through the descriptor, needing no /proc. A time of UTIME_NOW
// needs write access to the file, any other its ownership.
func Futimens(fd int, ts *[2]unix.Timespec) error {
	if _, _, e := unix.RawSyscall6(unix.SYS_UTIMENSAT, uintptr(fd), 0, uintptr(unsafe.Pointer(ts)), 0, 0, 0); e != 0 {
		return e
	}
	return nil
}

// Touch sets f's access and modification times to now (Futimens, UTIME_NOW).
func Touch(f *os.File) error {
	now := [2]unix.Timespec{{Nsec: unix.UTIME_NOW}, {Nsec: unix.UTIME_NOW}}
	return Futimens(int(f.Fd()), &now)
}

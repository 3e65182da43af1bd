// Package dirfd reaches files by one name relative to a directory held open, never
// through a symlink in that name: what the cache and pkg run's run roots are reached by, so
// that another user who renames a directory, or puts a symlink in its place, while a
// command runs moves nothing it reads or writes (#30). It does not walk paths of several
// names, nor confine anything beneath a directory.
package dirfd

import (
	"os"
	"path/filepath"
	"strconv"

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

package fetch

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"pkg/internal/dirfd"
)

// A Cache opens its directory once, and each of its subdirectories once, beneath it and
// through no symlink (openSubdir); every file in them is then reached by one name relative
// to its directory's descriptor, never following a symlink (openat with O_NOFOLLOW,
// renameat, linkat, unlinkat, utimensat with AT_SYMLINK_NOFOLLOW). Another user of a shared
// cache who renames its directories, or puts a symlink in their place, while a command
// runs, moves nothing that command reads or writes out of the cache (#30). A path that
// other packages open (Path, the directory a zip is staged in) goes through the
// descriptor too (dirfd.Path).

// inDir names the file name of the directory d in messages.
func inDir(d *os.File, name string) string { return filepath.Join(d.Name(), name) }

// statAt returns what the file name of d is, a symlink itself rather than what it points
// to (dirfd.Lstat).
func statAt(d *os.File, name string) (fs.FileInfo, error) { return dirfd.Lstat(d, name) }

// existsAt reports whether the directory d has a file name, a symlink counted as itself: one
// fstatat relative to d's descriptor.
func existsAt(d *os.File, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(int(d.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}

// removeAt removes the file name of d; a symlink there is removed, not followed.
func removeAt(d *os.File, name string) error {
	if err := unix.Unlinkat(int(d.Fd()), name, 0); err != nil {
		return &os.PathError{Op: "remove", Path: inDir(d, name), Err: err}
	}
	return nil
}

// renameAt renames the file a of the directory from to b of the directory to.
func renameAt(from *os.File, a string, to *os.File, b string) error {
	if err := unix.Renameat(int(from.Fd()), a, int(to.Fd()), b); err != nil {
		return &os.LinkError{Op: "rename", Old: inDir(from, a), New: inDir(to, b), Err: err}
	}
	return nil
}

// linkAt makes b of the directory to a hard link of the file a of the directory from.
func linkAt(from *os.File, a string, to *os.File, b string) error {
	if err := unix.Linkat(int(from.Fd()), a, int(to.Fd()), b, 0); err != nil {
		return &os.LinkError{Op: "link", Old: inDir(from, a), New: inDir(to, b), Err: err}
	}
	return nil
}

// readNames returns the names in the directory d, read through a descriptor of its own so
// that d's offset is nobody's concern.
func readNames(d *os.File) ([]string, error) {
	f, err := dirfd.Open(d, ".", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// createTemp makes a new file of the directory d, named as os.CreateTemp names it: pattern
// with its last "*" replaced by a random decimal number (ownTemp), opened read-write.
func createTemp(d *os.File, pattern string) (*os.File, error) {
	prefix, suffix, _ := strings.Cut(pattern, "*")
	for range 10000 {
		name := prefix + strconv.FormatUint(uint64(rand.Uint32()), 10) + suffix
		f, err := dirfd.Open(d, name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, &os.PathError{Op: "createtemp", Path: inDir(d, pattern), Err: fs.ErrExist}
}

// createTemp makes a new file of the cache's tmp/ as createTemp does, the cache owner's
// (owner.go).
func (c *Cache) createTemp(pattern string) (*os.File, error) {
	f, err := createTemp(c.tmp, pattern)
	if err != nil {
		return nil, err
	}
	if err := c.owner.give(int(f.Fd()), f.Name()); err != nil {
		f.Close()
		unix.Unlinkat(int(c.tmp.Fd()), filepath.Base(f.Name()), 0)
		return nil, err
	}
	return f, nil
}

// dup returns a second descriptor of the directory d.
func dup(d *os.File) (*os.File, error) {
	fd, err := unix.FcntlInt(d.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "dup", Path: d.Name(), Err: err}
	}
	return os.NewFile(uintptr(fd), d.Name()), nil
}

// syncAt fsyncs the file name of d; O_NONBLOCK, so that a FIFO another user put there
// does not block the open.
func syncAt(d *os.File, name string) error {
	f, err := dirfd.Open(d, name, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

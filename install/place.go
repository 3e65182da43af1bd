package install

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// place is an entry of a root: a slash-separated name beneath one of its parts, reached
// from the part's descriptor through no symlink.
type place struct {
	in   part
	name string
}

// pathOf returns where p is, for messages.
func (r *Root) pathOf(p place) string {
	return filepath.Join(r.dir, partRel(p.in), filepath.FromSlash(p.name))
}

// relOf returns where p is relative to the root, as intents and salvage markers record it.
func relOf(p place) string { return partRel(p.in) + "/" + p.name }

// placeOf returns the place of rel, a path relative to the root that an intent or a marker
// recorded, if it is a name in staging, trash or saved.
func placeOf(rel string) (place, bool) {
	rel = filepath.ToSlash(filepath.Clean(rel))
	for _, in := range []part{staging, trash, saved} {
		if name, ok := strings.CutPrefix(rel, partRel(in)+"/"); ok && name != "" && !strings.Contains(name, "/") {
			return place{in, name}, true
		}
	}
	return place{}, false
}

// at calls fn with a descriptor of the directory holding p and p's last component.
func (r *Root) at(p place, fn func(fd int, base string) error) error {
	if r.fd[p.in] < 0 {
		return unix.ENOENT // a part made when first needed, not made yet
	}
	return inParent(r.fd[p.in], p.name, fn)
}

// stat fills st with the status of p, not following a symlink in its place.
func (r *Root) stat(p place, st *unix.Stat_t) error {
	return r.at(p, func(fd int, base string) error { return unix.Fstatat(fd, base, st, unix.AT_SYMLINK_NOFOLLOW) })
}

// inode returns the inode of p, and whether there is anything at p.
func (r *Root) inode(p place) (uint64, bool) {
	var st unix.Stat_t
	if r.stat(p, &st) != nil {
		return 0, false
	}
	return st.Ino, true
}

// open opens p with flags, through no symlink.
func (r *Root) open(p place, flags int) (int, error) {
	if r.fd[p.in] < 0 {
		return -1, &os.PathError{Op: "open", Path: r.pathOf(p), Err: unix.ENOENT}
	}
	if p.name == "" {
		p.name = "."
	}
	fd, err := openBeneath(r.fd[p.in], p.name, flags)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: r.pathOf(p), Err: unwrapPath(err)}
	}
	return fd, nil
}

// names returns the names in the directory p, unsorted.
func (r *Root) names(p place) ([]string, error) {
	fd, err := r.open(p, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), r.pathOf(p))
	defer f.Close()
	return f.Readdirnames(-1)
}

// remove removes the file, symlink or empty directory at p; one already gone is no error.
func (r *Root) remove(p place) error {
	err := r.at(p, func(fd int, base string) error {
		err := unix.Unlinkat(fd, base, 0)
		if err == unix.EISDIR || err == unix.EPERM {
			err = unix.Unlinkat(fd, base, unix.AT_REMOVEDIR)
		}
		return err
	})
	if err != nil && !errors.Is(err, unix.ENOENT) {
		return &os.PathError{Op: "remove", Path: r.pathOf(p), Err: unwrapPath(err)}
	}
	return nil
}

// rmdir removes the directory p where it is empty.
func (r *Root) rmdir(p place) error {
	return r.at(p, func(fd int, base string) error { return unix.Unlinkat(fd, base, unix.AT_REMOVEDIR) })
}

// sync makes durable what was renamed or created in the directory p, unless the root's
// options say not to.
func (r *Root) sync(p place) error {
	if r.o.NoSync {
		return nil
	}
	fd, err := r.open(p, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Fsync(fd); err != nil {
		return &os.PathError{Op: "fsync", Path: r.pathOf(p), Err: err}
	}
	return nil
}

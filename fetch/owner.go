package fetch

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"pkg/internal/dirfd"
)

// A cache used by root belongs to whoever owns its directory: what root makes in a user's
// cache (sudo pkg --cache ~/.cache/pkg, a CI job's shared cache) is handed to that user,
// uid and gid, while it is still in tmp/ or before it is used, so that the user's next
// command can read, replace and remove it and no crash leaves an entry of root's behind.
// A cache root makes where a user owns the nearest directory above is that user's too, as
// npm's (infer-owner) was; refusing root would break the CI job that shares a cache. The
// one exception is root's check log (checks.go): root must not trust a log another user
// can write.

// errLinked refuses to hand over a file that has another name.
var errLinked = errors.New("the file has another link, maybe not in the cache")

// cacheOwner is the user root hands what it makes in the cache to; unset where this
// process is not root or the cache is root's.
type cacheOwner struct {
	uid, gid int
	set      bool
}

// ownerOf returns the cacheOwner of a cache whose directory has the status st.
func ownerOf(st *unix.Stat_t) cacheOwner {
	if os.Geteuid() != 0 || st.Uid == 0 {
		return cacheOwner{}
	}
	return cacheOwner{uid: int(st.Uid), gid: int(st.Gid), set: true}
}

// ownerOfDir returns the cacheOwner of the cache directory use, at dir; a process that is
// not root needs none and asks nothing.
func ownerOfDir(use *os.File, dir string) (cacheOwner, error) {
	if os.Geteuid() != 0 {
		return cacheOwner{}, nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(use.Fd()), &st); err != nil {
		return cacheOwner{}, &os.PathError{Op: "stat", Path: dir, Err: err}
	}
	return ownerOf(&st), nil
}

// give hands the file fd, at path, to o; it refuses a file with another link, which the
// user may have linked into their cache from a file of root's (fs.protected_hardlinks off).
func (o cacheOwner) give(fd int, path string) error {
	if !o.set {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return o.giveLinks(fd, path, &st, 1)
}

// giveLinks is give of a file of status st that may have links, those the caller found.
func (o cacheOwner) giveLinks(fd int, path string, st *unix.Stat_t, links uint64) error {
	if st.Mode&unix.S_IFMT != unix.S_IFDIR && uint64(st.Nlink) > links { // uint32 on arm64
		return &os.PathError{Op: "chown", Path: path, Err: errLinked}
	}
	if err := unix.Fchownat(fd, "", o.uid, o.gid, unix.AT_EMPTY_PATH); err != nil { // fd may be O_PATH (giveAt)
		return &os.PathError{Op: "chown", Path: path, Err: err}
	}
	return nil
}

// giveAt hands the file name of the directory d to o, never through a symlink, as give
// does: the user can put a link to a file of root's in place of a directory root just made
// in their cache, where a chown by name would take it.
func (o cacheOwner) giveAt(d *os.File, name string) error {
	if !o.set {
		return nil
	}
	fd, err := unix.Openat(int(d.Fd()), name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: inDir(d, name), Err: err}
	}
	defer unix.Close(fd)
	return o.give(fd, inDir(d, name))
}

// giveTree hands the directory d's files, then d itself, to o: the tails directory root
// wrote in tmp/, before it is renamed into tars/.
func (o cacheOwner) giveTree(d *os.File) error {
	if !o.set {
		return nil
	}
	names, err := readNames(d)
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := o.giveAt(d, name); err != nil {
			return err
		}
	}
	return o.give(int(d.Fd()), d.Name())
}

// inode is a file's identity, for counting its links.
type inode struct{ dev, ino uint64 }

// giveAll hands the file name of the directory d to o, and everything beneath it where it
// is a directory (a run root), each file before the directory holding it, never through a
// symlink. A file linked more than once (the merged prefix's links) is handed over only
// where the tree holds all its links, counted by a first walk: one also linked from
// outside the tree is refused, as give refuses it. The user can change links between the
// walks (unlink a counted name of a file of root's they linked in twice), so the count is
// trusted only where the kernel lets no user link a file of root's they cannot write
// (fs.protected_hardlinks); elsewhere every file with another link is refused.
func (o cacheOwner) giveAll(d *os.File, name string) error {
	if !o.set {
		return nil
	}
	links := map[inode]uint64{}
	if hardlinksProtected() {
		err := walkAt(d, name, func(_ int, _ string, st *unix.Stat_t) error {
			if st.Mode&unix.S_IFMT != unix.S_IFDIR && st.Nlink > 1 {
				links[inode{uint64(st.Dev), uint64(st.Ino)}]++
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return walkAt(d, name, func(fd int, path string, st *unix.Stat_t) error {
		return o.giveLinks(fd, path, st, max(links[inode{uint64(st.Dev), uint64(st.Ino)}], 1))
	})
}

// hardlinksProtected reports whether fs.protected_hardlinks is on: a user may then link only
// a file they own or can read and write. A test replaces it.
var hardlinksProtected = func() bool {
	b, err := os.ReadFile("/proc/sys/fs/protected_hardlinks")
	return err == nil && strings.TrimSpace(string(b)) == "1"
}

// walkAt calls fn with an O_PATH descriptor, the path and the status of each file beneath
// the file name of the directory d, where it is a directory, and then of name itself,
// following no symlink.
func walkAt(d *os.File, name string, fn func(fd int, path string, st *unix.Stat_t) error) error {
	path := inDir(d, name)
	fd, err := unix.Openat(int(d.Fd()), name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		names, err := readNames(f)
		if err != nil {
			return err
		}
		for _, n := range names {
			if err := walkAt(f, n, fn); err != nil {
				return err
			}
		}
	}
	return fn(fd, path, &st)
}

// makeCacheDir makes the cache's directory dir and those above it that are missing; where
// root makes them under a directory of another user's, they are that user's. It makes and
// hands them over one at a time, each through the descriptor of the one above, never
// following a symlink: a chown by path would follow a symlink the user put in place of the
// directory root just made in theirs (their home) to a file of anyone's.
func makeCacheDir(dir string) error {
	if os.Geteuid() != 0 {
		return os.MkdirAll(dir, 0o755)
	}
	var missing []string
	above := filepath.Clean(dir)
	var st unix.Stat_t
	for {
		err := unix.Stat(above, &st)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(above) == above {
			return os.MkdirAll(dir, 0o755)
		}
		missing = append(missing, filepath.Base(above))
		above = filepath.Dir(above)
	}
	if len(missing) == 0 || !ownerOf(&st).set {
		return os.MkdirAll(dir, 0o755)
	}
	d, err := os.OpenFile(above, os.O_RDONLY|unix.O_DIRECTORY, 0) // a symlink there (~/.cache) followed, as MkdirAll would
	if err != nil {
		return err
	}
	if err := unix.Fstat(int(d.Fd()), &st); err != nil {
		d.Close()
		return &os.PathError{Op: "stat", Path: above, Err: err}
	}
	o := ownerOf(&st) // of the directory opened, not of what the path named before
	for i := len(missing) - 1; i >= 0; i-- {
		name := missing[i]
		err := unix.Mkdirat(int(d.Fd()), name, 0o755)
		made := err == nil
		if err != nil && !errors.Is(err, unix.EEXIST) {
			d.Close()
			return &os.PathError{Op: "mkdir", Path: inDir(d, name), Err: err}
		}
		sub, err := dirfd.Open(d, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		d.Close()
		if err != nil {
			return err
		}
		d = sub
		if made {
			if err := o.give(int(d.Fd()), d.Name()); err != nil {
				d.Close()
				return err
			}
		}
	}
	return d.Close()
}

package install

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// part is a directory of a root's layout. A Root holds each open from Open to Close and
// reaches everything under the root relative to those descriptors, never by its path: a
// directory swapped for a symlink while a command runs, or the root itself, leads nowhere
// else.
type part int

const (
	top     part = iota // the root itself
	meta                // .pkg
	staging             // .pkg/staging
	trash               // .pkg/trash
	saved               // .pkg/saved, made when first needed
	pkgs                // pkgs
	bin                 // bin
	nparts
)

// layout is what pkg makes under a root, parents first: directories, and files that others
// (the lock, the database) create. pkg empties staging and trash at every start, and moves
// trees between staging, trash, saved and pkgs, so a symlink or a mount point in their
// place, which someone who may write the root made, would have it delete or move what lies
// beyond. Open refuses such a root, changing nothing.
var layout = []struct {
	rel   string
	part  part // of a directory; top for a file
	later bool // a directory made when first needed, not by Open
}{
	{rel: ".pkg", part: meta},
	{rel: ".pkg/staging", part: staging},
	{rel: ".pkg/trash", part: trash},
	{rel: ".pkg/saved", part: saved, later: true},
	{rel: "pkgs", part: pkgs},
	{rel: "bin", part: bin},
	{rel: ".pkg/lock"},
	{rel: ".pkg/db"},
}

// partRel returns where part p is, relative to the root.
func partRel(p part) string {
	if p == top {
		return "."
	}
	for _, l := range layout {
		if l.part == p {
			return l.rel
		}
	}
	return "."
}

// parentOf returns the part that holds the layout entry rel.
func parentOf(rel string) part {
	if strings.HasPrefix(rel, ".pkg/") {
		return meta
	}
	return top
}

// LayoutError is returned by Open for a root where something other than what pkg made holds
// the place of a part of its layout (Path, relative to Root; "." for the root itself).
type LayoutError struct {
	Root, Path string
	Problem    string // "is a symlink, not the directory pkg made: remove it"
}

func (e *LayoutError) Error() string {
	if e.Path == "." {
		return "root " + e.Root + " " + e.Problem
	}
	return "root " + e.Root + ": " + e.Path + " " + e.Problem
}

// parts holds the descriptors of a root's directories, -1 for one not open.
type parts [nparts]int

func noParts() parts {
	var fds parts
	for i := range fds {
		fds[i] = -1
	}
	return fds
}

func (fds *parts) close() {
	for i, fd := range fds {
		if fd >= 0 {
			unix.Close(fd)
		}
		fds[i] = -1
	}
}

// openLayout opens the root dir, refusing a symlink in its place, and the directories of
// its layout, checking each and the files (checkPart); with create, it makes the
// directories missing (but those made later) once all that is there passed, and returns
// those it made. A part missing without create stays -1.
func openLayout(dir string, create bool) (fds parts, made []part, err error) {
	fds = noParts()
	defer func() {
		if err != nil {
			fds.close()
		}
	}()
	if fds[top], err = openDir(unix.AT_FDCWD, dir); err != nil {
		return fds, made, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	if fds[top] < 0 {
		var st fileStat
		if st.at(unix.AT_FDCWD, dir, unix.AT_SYMLINK_NOFOLLOW) == nil && st.mode&unix.S_IFMT == unix.S_IFLNK {
			return fds, made, &LayoutError{Root: dir, Path: ".", Problem: "is a symlink: give pkg the directory it leads to"}
		}
		return fds, made, &os.PathError{Op: "open", Path: dir, Err: unix.ENOTDIR}
	}
	var root fileStat
	if err := root.at(fds[top], "", 0); err != nil {
		return fds, made, &os.PathError{Op: "stat", Path: dir, Err: err}
	}
	var missing []int
	for i, l := range layout {
		if fds[parentOf(l.rel)] < 0 { // its parent is missing
			missing = append(missing, i)
			continue
		}
		if err := fds.open(dir, i, &root); errors.Is(err, unix.ENOENT) {
			missing = append(missing, i)
		} else if err != nil {
			return fds, made, err
		}
	}
	if !create {
		return fds, made, nil
	}
	for _, i := range missing {
		if l := layout[i]; l.part != top && !l.later {
			ok, err := fds.make(dir, i, &root)
			if err != nil {
				return fds, made, fmt.Errorf("create root: %w", err)
			}
			if ok {
				made = append(made, l.part)
			}
		}
	}
	return fds, made, nil
}

// make makes the directory layout[i] in its parent, if it is missing, and opens it. It
// reports whether it made it (none another process made first).
func (fds *parts) make(dir string, i int, root *fileStat) (bool, error) {
	l := layout[i]
	err := unix.Mkdirat(fds[parentOf(l.rel)], filepath.Base(l.rel), 0o755)
	if err != nil && err != unix.EEXIST {
		return false, &os.PathError{Op: "mkdir", Path: filepath.Join(dir, l.rel), Err: err}
	}
	return err == nil, fds.open(dir, i, root)
}

// open opens the directory layout[i], or checks the file, in its parent, through no
// symlink, and checks what it found (checkPart). It returns the *os.PathError of an open
// or lstat that failed.
func (fds *parts) open(dir string, i int, root *fileStat) error {
	l := layout[i]
	parent, base, path := fds[parentOf(l.rel)], filepath.Base(l.rel), filepath.Join(dir, l.rel)
	var st fileStat
	if l.part == top {
		if err := st.at(parent, base, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return &os.PathError{Op: "lstat", Path: path, Err: err}
		}
		return checkPart(dir, l.rel, false, &st, root)
	}
	fd, err := openDir(parent, base)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	if fd < 0 { // a symlink, or not a directory
		if err := st.at(parent, base, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return &os.PathError{Op: "lstat", Path: path, Err: err}
		}
		if err := checkPart(dir, l.rel, true, &st, root); err != nil {
			return err
		}
		return &os.PathError{Op: "open", Path: path, Err: unix.ENOTDIR}
	}
	fds[l.part] = fd
	if err := st.at(fd, "", 0); err != nil {
		return &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return checkPart(dir, l.rel, true, &st, root)
}

// openDir opens the directory name in parent (AT_FDCWD for a path) to read it, through no
// symlink. It returns -1 and no error where something else is in its place: a symlink, or
// not a directory.
func openDir(parent int, name string) (int, error) {
	fd, err := unix.Openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == unix.ELOOP || err == unix.ENOTDIR {
		return -1, nil
	}
	return fd, err
}

// makeSaved makes .pkg/saved if it is missing and opens it, for the first salvage.
func (r *Root) makeSaved() error {
	if r.fd[saved] >= 0 {
		return nil
	}
	var root fileStat
	if err := root.at(r.fd[top], "", 0); err != nil {
		return &os.PathError{Op: "stat", Path: r.dir, Err: err}
	}
	for i, l := range layout {
		if l.part == saved {
			_, err := r.fd.make(r.dir, i, &root)
			return err
		}
	}
	return nil
}

// checkPart checks that rel, under the root dir whose status is root, with status st, is
// a directory (when dir is set) or a regular file, on the root's mount, belonging to root,
// this user or the root's owner.
func checkPart(dir, rel string, isDir bool, st, root *fileStat) error {
	want := "file"
	if isDir {
		want = "directory"
	}
	problem := ""
	switch uid := st.uid; {
	case st.mode&unix.S_IFMT == unix.S_IFLNK:
		problem = "is a symlink, not the " + want + " pkg made: remove it"
	case isDir && st.mode&unix.S_IFMT != unix.S_IFDIR || !isDir && st.mode&unix.S_IFMT != unix.S_IFREG:
		problem = "is not the " + want + " pkg made: move it away"
	case !st.mount.same(root.mount): // a file too: a commit syncs the database's filesystem alone (db carry)
		problem = "is on another filesystem than the root (a mount point), not the " + want + " pkg made: unmount it"
	case uid != 0 && uid != uint32(os.Geteuid()) && uid != root.uid:
		problem = fmt.Sprintf("belongs to uid %d, neither root, this user nor the root's owner (uid %d): pkg did not make it; move it away", uid, root.uid)
	default:
		return nil
	}
	return &LayoutError{Root: dir, Path: rel, Problem: problem}
}

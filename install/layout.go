package install

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// layout is what pkg makes under a root, parents first: directories, and files that others
// (the lock, the database) create. pkg empties staging and trash at every start, and moves
// trees between staging, trash, saved and pkgs, so a symlink or a mount point in their
// place, which someone who may write the root made, would have it delete or move what lies
// beyond. Open refuses such a root, changing nothing.
var layout = []struct {
	rel   string
	dir   bool
	later bool // a directory made when first needed, not by Open
}{
	{rel: ".pkg", dir: true},
	{rel: ".pkg/staging", dir: true},
	{rel: ".pkg/trash", dir: true},
	{rel: ".pkg/saved", dir: true, later: true},
	{rel: "pkgs", dir: true},
	{rel: "bin", dir: true},
	{rel: ".pkg/lock"},
	{rel: ".pkg/db"},
}

// LayoutError is returned by Open for a root where something other than what pkg made holds
// the place of a part of its layout (Path, relative to Root).
type LayoutError struct {
	Root, Path string
	Problem    string // "is a symlink, not the directory pkg made: remove it"
}

func (e *LayoutError) Error() string { return "root " + e.Root + ": " + e.Path + " " + e.Problem }

// makeLayout checks the layout of the root dir and, when create is set, makes the parts of
// it that are missing (but those made later), once all that is there passed.
func makeLayout(dir string, create bool) error {
	var top fileStat
	if err := top.at(unix.AT_FDCWD, dir, 0); err != nil {
		return &os.PathError{Op: "stat", Path: dir, Err: err}
	}
	var missing []string
	for _, l := range layout {
		err := checkPart(dir, l.rel, l.dir, &top)
		if errors.Is(err, unix.ENOENT) {
			if l.dir && !l.later {
				missing = append(missing, l.rel)
			}
			continue
		}
		if err != nil {
			return err
		}
	}
	if !create {
		return nil
	}
	for _, rel := range missing {
		if err := makeDir(dir, rel, &top); err != nil {
			return fmt.Errorf("install: create root: %w", err)
		}
	}
	return nil
}

// makeDir makes the directory rel of r's layout if it is missing, and checks what is there.
func (r *Root) makeDir(rel string) error {
	var top fileStat
	if err := top.at(unix.AT_FDCWD, r.dir, 0); err != nil {
		return &os.PathError{Op: "stat", Path: r.dir, Err: err}
	}
	return makeDir(r.dir, rel, &top)
}

// makeDir makes the directory rel of the root dir, whose status is top, if it is missing,
// and checks what is there.
func makeDir(dir, rel string, top *fileStat) error {
	if err := os.Mkdir(filepath.Join(dir, rel), 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return checkPart(dir, rel, true, top)
}

// checkPart checks that rel, under the root dir whose status is top, is a directory (when
// dir is set) or a regular file, on the root's mount, belonging to root, this user or the
// root's owner. It returns the *os.PathError of an lstat that failed.
func checkPart(root, rel string, dir bool, top *fileStat) error {
	var st fileStat
	if err := st.at(unix.AT_FDCWD, filepath.Join(root, rel), unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &os.PathError{Op: "lstat", Path: filepath.Join(root, rel), Err: err}
	}
	want := "file"
	if dir {
		want = "directory"
	}
	problem := ""
	switch uid := st.uid; {
	case st.mode&unix.S_IFMT == unix.S_IFLNK:
		problem = "is a symlink, not the " + want + " pkg made: remove it"
	case dir && st.mode&unix.S_IFMT != unix.S_IFDIR || !dir && st.mode&unix.S_IFMT != unix.S_IFREG:
		problem = "is not the " + want + " pkg made: move it away"
	case dir && !st.mount.same(top.mount):
		problem = "is on another filesystem than the root (a mount point), not the directory pkg made: unmount it"
	case uid != 0 && uid != uint32(os.Geteuid()) && uid != top.uid:
		problem = fmt.Sprintf("belongs to uid %d, neither root, this user nor the root's owner (uid %d): pkg did not make it; move it away", uid, top.uid)
	default:
		return nil
	}
	return &LayoutError{Root: root, Path: rel, Problem: problem}
}

package repo

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
)

// ErrOutside is an archive an entry names through a symlink out of the repository
// directory: Add and Remove delete nothing outside it.
var ErrOutside = errors.New("repo: outside the repository directory")

// Dropped is what became of the archives of the entries a change took out of an index,
// where no entry names them now. Their deletion comes after the index is written (and
// signed), so one that fails leaves the change made and the archive Left.
type Dropped struct {
	Deleted []string   // those deleted, as the entries named them
	Left    []Leftover // those still in the directory, or outside it
}

// Leftover is an archive no entry names that was not deleted, and why.
type Leftover struct {
	Archive string // as the entry named it
	Err     error  // why: an *fs.PathError of its removal (ErrOutside for one out of the directory), or of its directory's fsync
}

// dropArchives deletes the local archives of gone that no entry of kept names, and says
// which it deleted and which it left; one already missing is neither. It never deletes
// the index or its signature, whatever an entry names, nor a file outside dir (an entry's
// path through a symlink: ErrOutside).
func dropArchives(dir string, gone, kept []Package) Dropped {
	var d Dropped
	drop := unnamed(gone, kept)
	if len(drop) == 0 {
		return d
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		for _, a := range drop {
			d.Left = append(d.Left, Leftover{a, err})
		}
		return d
	}
	defer root.Close()
	var deleted []string
	for _, a := range drop {
		file := filepath.Join(dir, filepath.FromSlash(a))
		err := root.Remove(filepath.FromSlash(a))
		pe := (*fs.PathError)(nil)
		switch {
		case err == nil:
			deleted = append(deleted, a)
		case errors.Is(err, fs.ErrNotExist):
		case outside(dir, file):
			if _, err := os.Lstat(file); err == nil {
				d.Left = append(d.Left, Leftover{a, &fs.PathError{Op: "remove", Path: file, Err: ErrOutside}})
			}
		case errors.As(err, &pe):
			d.Left = append(d.Left, Leftover{a, &fs.PathError{Op: "remove", Path: file, Err: pe.Err}}) // named as the directory given names it
		default:
			d.Left = append(d.Left, Leftover{a, err})
		}
	}
	synced := make(map[string]error) // by directory
	for _, a := range deleted {
		parent := filepath.Dir(filepath.Join(dir, filepath.FromSlash(a)))
		if _, ok := synced[parent]; !ok {
			synced[parent] = syncDir(root, dir, filepath.Dir(filepath.FromSlash(a)))
		}
		if err := synced[parent]; err != nil {
			d.Left = append(d.Left, Leftover{a, err})
		} else {
			d.Deleted = append(d.Deleted, a)
		}
	}
	return d
}

// unnamed returns the local archives of gone, each once, that no entry of kept names,
// but for the index and its signature, whatever an entry names.
func unnamed(gone, kept []Package) []string {
	var out []string
	for _, p := range gone {
		a := p.Archive
		named := func(q Package) bool { return path.Clean(q.Archive) == path.Clean(a) }
		if keptArchive(a) && !slices.Contains(out, a) && !slices.ContainsFunc(kept, named) {
			out = append(out, a)
		}
	}
	return out
}

// outside reports whether file, a path in dir, is outside it through a symlink.
func outside(dir, file string) bool {
	base, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(file))
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(base, parent)
	return err != nil || !filepath.IsLocal(rel)
}

// syncDir fsyncs the directory rel of root, held open as dir, its error naming it under dir.
func syncDir(root *os.Root, dir, rel string) error {
	f, err := root.Open(rel)
	if err == nil {
		err = f.Sync()
		f.Close()
	}
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: filepath.Join(dir, rel), Err: pe.Err}
	}
	return err
}

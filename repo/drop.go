package repo

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"

	"pkg/internal/durable"
)

// Dropped is what became of the archives of the entries a change took out of an index,
// where no entry names them now.
type Dropped struct {
	Deleted []string // those deleted, as the entries named them
}

// dropArchives deletes the local archives of gone that no entry of kept names, and returns
// those it deleted; one already missing is not among them. It never deletes the index or
// its signature, whatever an entry names, nor a file outside dir (an entry's path through
// a symlink).
func dropArchives(dir string, gone, kept []Package) (Dropped, error) {
	var d Dropped
	dirs := make(map[string]bool) // to sync
	var root *os.Root
	for _, p := range gone {
		a := p.Archive
		switch {
		case !keptArchive(a) || slices.Contains(d.Deleted, a):
			continue
		case slices.ContainsFunc(kept, func(q Package) bool { return path.Clean(q.Archive) == path.Clean(a) }):
			continue
		}
		if root == nil {
			var err error
			if root, err = os.OpenRoot(dir); err != nil {
				return d, err
			}
			defer root.Close()
		}
		file := filepath.Join(dir, filepath.FromSlash(a))
		err := root.Remove(filepath.FromSlash(a))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			if pe := (*os.PathError)(nil); errors.As(err, &pe) {
				pe.Op, pe.Path = "remove", file // named as the directory given names it
			}
			return d, err
		}
		d.Deleted = append(d.Deleted, a)
		dirs[filepath.Dir(file)] = true
	}
	for dir := range dirs {
		if err := durable.Path(dir); err != nil {
			return d, err
		}
	}
	return d, nil
}

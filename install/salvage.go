package install

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"pkg/db"
)

// Salvage is what a change kept of a package tree it replaced or removed: what the package
// did not install, and the files changed since it did, moved out of the tree before it
// was deleted.
type Salvage struct {
	Name, Version string
	Dir           string   // where they are now, under <root>/.pkg/saved
	Paths         []string // relative to the package's directory, as they were
}

// oldTree is a tree a change replaces or removes, as its record describes it.
type oldTree struct {
	rec   db.Package
	files map[string]bool // the paths the package installed
}

// oldTrees reads what the database records of each installed tree that Apply replaces
// (a staged name among recs) or removes, by name.
func (r *Root) oldTrees(recs []db.Package, staged []*Staged, remove []string) (map[string]*oldTree, error) {
	olds := make(map[string]*oldTree)
	for _, p := range recs {
		replaced := slices.ContainsFunc(staged, func(s *Staged) bool { return s.rec.Name == p.Name })
		if !replaced && !slices.Contains(remove, p.Name) {
			continue
		}
		if _, ok := inode(r.pkgDir(p.Name)); !ok {
			continue
		}
		files, err := r.db.Files(p.Name)
		if err != nil {
			return nil, err
		}
		t := &oldTree{rec: p, files: make(map[string]bool, len(files))}
		for _, f := range files {
			t.files[f.Path] = true
		}
		olds[p.Name] = t
	}
	return olds, nil
}

// salvage moves out of dir, the tree t describes, every entry its package did not install
// and every file or symlink changed (its ctime) after the install, to a new directory under
// .pkg/saved, keeping their paths, and reports them; nil if there are none. It does its
// best: what it cannot read or move is deleted with the tree.
func (r *Root) salvage(dir string, t *oldTree) *Salvage {
	var s *Salvage
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		rel, rerr := filepath.Rel(dir, path)
		if err != nil || rerr != nil || rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if t.files[rel] && (d.IsDir() || !changedSince(d, t.rec.Installed)) {
			return nil
		}
		if s == nil {
			saved := r.path(".pkg", "saved")
			if os.MkdirAll(saved, 0o755) != nil {
				return filepath.SkipAll
			}
			to, err := os.MkdirTemp(saved, t.rec.Name+"-"+t.rec.Version+".")
			if err != nil {
				return filepath.SkipAll
			}
			s = &Salvage{Name: t.rec.Name, Version: t.rec.Version, Dir: to}
		}
		to := filepath.Join(s.Dir, filepath.FromSlash(rel))
		if os.MkdirAll(filepath.Dir(to), 0o755) == nil && os.Rename(path, to) == nil {
			s.Paths = append(s.Paths, rel)
			if d.IsDir() {
				return filepath.SkipDir // moved whole
			}
		}
		return nil
	})
	if s != nil && len(s.Paths) == 0 {
		os.RemoveAll(s.Dir)
		return nil
	}
	return s
}

// changedSince reports whether the file d names changed after t: its inode's ctime, which
// every write, chmod and rename of it sets and no user can set back.
func changedSince(d fs.DirEntry, t time.Time) bool {
	info, err := d.Info()
	if err != nil {
		return false
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && time.Unix(st.Ctim.Sec, st.Ctim.Nsec).After(t)
}

func (r *Root) keepSalvage(dir string, t *oldTree) {
	if s := r.salvage(dir, t); s != nil {
		r.salvaged = append(r.salvaged, *s)
	}
}

// Salvaged returns what the last Apply kept of the trees it replaced or removed.
func (r *Root) Salvaged() []Salvage { return r.salvaged }

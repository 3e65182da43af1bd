package install

import (
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

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
// .pkg/saved, keeping their paths, and reports them; nil if there are none. It reads the
// tree as removeTree does, relative to directory descriptors, with one fstatat per file.
// It does its best: what it cannot read or move is deleted with the tree.
func (r *Root) salvage(dir string, t *oldTree) *Salvage {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	sv := &salvager{r: r, t: t, since: t.rec.Installed.UnixNano()}
	sv.walk(fd, nil)
	if sv.s != nil && len(sv.s.Paths) == 0 {
		os.RemoveAll(sv.s.Dir)
		return nil
	}
	if sv.s != nil {
		slices.Sort(sv.s.Paths)
	}
	return sv.s
}

type salvager struct {
	r     *Root
	t     *oldTree
	since int64 // t's install, in ns
	s     *Salvage
}

// walk looks at the entries of the directory fd, at rel in the tree (slash-terminated, or
// nil for the top), and below.
func (sv *salvager) walk(fd int, rel []byte) {
	buf := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(buf)
	for {
		n, err := unix.Getdents(fd, *buf)
		if err != nil || n <= 0 {
			return
		}
		for cname, typ := range dirents((*buf)[:n]) {
			name := cname[:len(cname)-1]
			path := append(rel[:len(rel):len(rel)], name...)
			var st unix.Stat_t
			switch {
			case !sv.t.files[string(path)]:
				sv.move(fd, string(name), string(path))
			case typ == unix.DT_DIR:
				if sub, err := unix.Openat(fd, string(name), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
					sv.walk(sub, append(path, '/'))
					unix.Close(sub)
				}
			case unix.Fstatat(fd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Ctim.Nano() > sv.since:
				sv.move(fd, string(name), string(path))
			}
		}
	}
}

// move renames the entry name of the directory fd, at path in the tree, to the same path
// under the salvage directory, which it makes first.
func (sv *salvager) move(fd int, name, path string) {
	if sv.s == nil {
		saved := sv.r.path(".pkg", "saved")
		if os.MkdirAll(saved, 0o755) != nil {
			return
		}
		dir, err := os.MkdirTemp(saved, sv.t.rec.Name+"-"+sv.t.rec.Version+".")
		if err != nil {
			return
		}
		sv.s = &Salvage{Name: sv.t.rec.Name, Version: sv.t.rec.Version, Dir: dir}
	}
	to := filepath.Join(sv.s.Dir, filepath.FromSlash(path))
	if os.MkdirAll(filepath.Dir(to), 0o755) == nil && unix.Renameat(fd, name, unix.AT_FDCWD, to) == nil {
		sv.s.Paths = append(sv.s.Paths, path)
	}
}

func (r *Root) keepSalvage(dir string, t *oldTree) {
	if s := r.salvage(dir, t); s != nil {
		r.salvaged = append(r.salvaged, *s)
	}
}

// Salvaged returns what the last Apply kept of the trees it replaced or removed.
func (r *Root) Salvaged() []Salvage { return r.salvaged }

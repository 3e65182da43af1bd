package install

import (
	"crypto/sha256"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"pkg/db"
)

// Salvage is what a change kept of a package tree it replaced or removed: what the package
// did not install, and the files whose data changed since it did, moved to Dir before the
// tree was deleted; or the whole tree, when a part of it could not be read or moved.
type Salvage struct {
	Name, Version string
	Dir           string   // where they are now, under <root>/.pkg/saved
	Paths         []string // relative to the package's directory, as they were; nil for the whole tree
}

// salvage finds and keeps what the user added to one installed tree, or changed in it.
type salvage struct {
	r     *Root
	rec   db.Package
	files map[string]*db.File // what the package installed, by path
	check *fileChecker
	s     Salvage
	moved [][2]string // renames done, from and to
	whole bool        // keep the whole tree after the commit instead
}

// saveChanges moves, before a commit replaces or removes them, what the user added to the
// installed trees of recs that staged replace or remove names, or changed the data of
// (the file's ctime after the install, then its data against the record), to a new
// directory under .pkg/saved, keeping their paths. A tree it cannot read or move all of
// is kept whole once the commit is done (keepWhole). It returns one salvage per tree.
func (r *Root) saveChanges(recs []db.Package, staged []*Staged, remove []string) ([]*salvage, error) {
	var svs []*salvage
	for _, p := range recs {
		replaced := slices.ContainsFunc(staged, func(s *Staged) bool { return s.rec.Name == p.Name })
		if !replaced && !slices.Contains(remove, p.Name) {
			continue
		}
		fd, err := unix.Open(r.pkgDir(p.Name), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // gone, or no directory: nothing of the user's in it
		}
		files, err := r.db.Files(p.Name)
		if err != nil {
			unix.Close(fd)
			r.restore(svs)
			return nil, err
		}
		sv := &salvage{r: r, rec: p, files: make(map[string]*db.File, len(files)), s: Salvage{Name: p.Name, Version: p.Version}}
		for i := range files {
			sv.files[files[i].Path] = &files[i]
		}
		buf := make([]byte, 32<<10)
		sv.check = &fileChecker{h: sha256.New(), buf: buf}
		sv.walk(fd, nil)
		unix.Close(fd)
		if sv.whole {
			sv.undo()
		}
		if sv.whole || len(sv.s.Paths) > 0 {
			slices.Sort(sv.s.Paths)
			svs = append(svs, sv)
		}
	}
	return svs, nil
}

// walk looks at the entries of the directory fd, at rel in the tree (slash-terminated, or
// nil for the top), and below, until it must keep the whole tree.
func (sv *salvage) walk(fd int, rel []byte) {
	buf := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(buf)
	for !sv.whole {
		n, err := unix.Getdents(fd, *buf)
		if err != nil {
			sv.whole = true
		}
		if n <= 0 {
			return
		}
		for cname := range dirents((*buf)[:n]) {
			name := string(cname[:len(cname)-1])
			p := string(rel) + name
			f := sv.files[p]
			var st unix.Stat_t
			switch {
			case sv.whole:
				return
			case f == nil:
				sv.move(fd, name, p)
			case unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil:
				sv.whole = true
			case st.Mode&unix.S_IFMT == unix.S_IFDIR && f.Type == '5':
				sub, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
				if err != nil {
					sv.whole = true // a directory the user cannot read may hold their files
					return
				}
				sv.walk(sub, []byte(p+"/"))
				unix.Close(sub)
			case st.Ctim.Nano() > sv.rec.Installed.UnixNano() && sv.differs(fd, name, f, &st):
				sv.move(fd, name, p)
			}
		}
	}
}

// differs reports whether the entry name of fd, with st, holds other data than f records:
// another type, symlink target, size or content. A change of mode alone is no change of
// the user's data.
func (sv *salvage) differs(fd int, name string, f *db.File, st *unix.Stat_t) bool {
	if st.Mode&unix.S_IFMT != recordedType(f.Type) {
		return true
	}
	var diffs []string
	var err error
	if f.Type == '2' {
		diffs, err = sv.check.checkTarget(fd, name, f, nil)
	} else {
		diffs, err = sv.check.checkFile(fd, name, f, st, nil)
	}
	return err != nil || slices.ContainsFunc(diffs, func(d string) bool { return d != "mode" })
}

// move renames the entry name of the directory fd, at p in the tree, to the same path in
// the salvage directory, which it makes first. A rename refused (a directory the user made
// read-only) turns to keeping the whole tree.
func (sv *salvage) move(fd int, name, p string) {
	if sv.s.Dir == "" {
		saved := sv.r.path(".pkg", "saved")
		dir, err := "", os.MkdirAll(saved, 0o755)
		if err == nil {
			dir, err = os.MkdirTemp(saved, sv.rec.Name+"-"+sv.rec.Version+".")
		}
		if err != nil {
			sv.whole = true
			return
		}
		sv.s.Dir = dir
	}
	to := filepath.Join(sv.s.Dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil || unix.Renameat(fd, name, unix.AT_FDCWD, to) != nil {
		sv.whole = true
		return
	}
	sv.moved = append(sv.moved, [2]string{filepath.Join(sv.r.pkgDir(sv.rec.Name), filepath.FromSlash(p)), to})
	sv.s.Paths = append(sv.s.Paths, p)
}

// undo moves back what sv moved, last first, and forgets it.
func (sv *salvage) undo() {
	for i := len(sv.moved) - 1; i >= 0; i-- {
		os.Rename(sv.moved[i][1], sv.moved[i][0])
	}
	sv.moved, sv.s.Paths = nil, nil
}

// restore puts back what saveChanges moved, for a change that did not happen.
func (r *Root) restore(svs []*salvage) {
	for _, sv := range svs {
		sv.undo()
		if sv.s.Dir != "" {
			os.RemoveAll(sv.s.Dir)
		}
	}
}

// keepWhole moves each tree saveChanges could not sort, now at old (its name → where the
// commit left it), to its salvage directory, and records what every salvage kept.
func (r *Root) keepWhole(svs []*salvage, old map[string]string) {
	for _, sv := range svs {
		if sv.whole {
			if sv.s.Dir != "" {
				removeEmptyDirs(sv.s.Dir) // undo moved its entries back
			}
			saved := r.path(".pkg", "saved")
			os.MkdirAll(saved, 0o755)
			sv.s.Dir = filepath.Join(saved, sv.rec.Name+"-"+sv.rec.Version+"."+strings.TrimPrefix(path.Ext(old[sv.rec.Name]), "."))
			if os.Rename(old[sv.rec.Name], sv.s.Dir) != nil {
				continue // the tree is deleted as it would have been; nothing is said to be kept
			}
		}
		r.salvaged = append(r.salvaged, sv.s)
	}
}

// removeEmptyDirs removes dir and the directories under it, deepest first, where empty.
func removeEmptyDirs(dir string) {
	var dirs []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Remove(dirs[i])
	}
}

// Salvaged returns what the last Apply kept of the trees it replaced or removed.
func (r *Root) Salvaged() []Salvage { return r.salvaged }

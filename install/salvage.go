package install

import (
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/internal/durable"
)

// Salvage is what a change kept of a package tree it replaced or removed: what the package
// did not install, and the files whose data changed since it did, moved to Dir before the
// tree was deleted; or the whole tree, when a part of it could not be read or moved.
type Salvage struct {
	Name, Version string
	Dir           string   // where Paths are now, under <root>/.pkg/saved
	Paths         []string // relative to the package's directory, as they were
	Tree          string   // where the tree, or the rest of it, is kept, when pkg could not sort it out; or ""
	Err           error    // why the tree could not be kept: it is left for the next start to keep
}

// A salvage finds, before a commit, what the user added to one installed tree or changed
// in it, and keeps it once the commit is done. The tree itself is not touched before the
// commit, which may yet put it back. A marker, durable before the commit, names where the
// commit leaves the tree, so that a start after a crash keeps it whole (keepMarked)
// rather than deleting it with the rest of staging and trash.
type salvage struct {
	r      *Root
	rec    db.Package
	files  map[string]*db.File // what the package installed, by path
	paths  []string            // to keep, relative to the tree
	whole  bool                // a part could not be read: keep the whole tree
	s      Salvage
	tree   string // where the commit leaves the tree (mark)
	marker string
}

// marker is what a salvage's marker file holds.
type marker struct {
	Tree      string    `json:"tree"` // where the commit leaves the tree, relative to the root
	Name      string    `json:"name"`
	Installed time.Time `json:"installed"` // of the tree's record: the same record after a start means no commit
}

// findChanges returns a salvage for each tree of recs that staged replace or remove names
// holding something of the user's.
func (r *Root) findChanges(recs []db.Package, staged []*Staged, remove []string) ([]*salvage, error) {
	var names []string
	for _, p := range recs {
		if slices.ContainsFunc(staged, func(s *Staged) bool { return s.rec.Name == p.Name }) || slices.Contains(remove, p.Name) {
			names = append(names, p.Name)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	olds, files, err := r.db.Installed(names...) // their file lists, in one transaction
	if err != nil {
		return nil, err
	}
	var svs []*salvage
	for i, p := range olds {
		fd, err := unix.Open(r.pkgDir(p.Name), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.ENOENT {
			continue // gone: nothing of the user's in it
		}
		sv := &salvage{r: r, rec: p, s: Salvage{Name: p.Name, Version: p.Version}}
		if err != nil {
			sv.whole = true // a tree it cannot read, or a file or link of the user's in its place
		} else {
			sv.files = make(map[string]*db.File, len(files[i]))
			for j := range files[i] {
				sv.files[files[i][j].Path] = &files[i][j]
			}
			sv.walk(fd)
			unix.Close(fd)
		}
		if sv.whole || len(sv.paths) > 0 {
			svs = append(svs, sv)
		}
	}
	return svs, nil
}

// walkers is how many goroutines read a tree for findChanges: the fstatat of every file
// is most of its cost, and reads scale where the unlinks of a removal do not.
func walkers() int { return min(runtime.GOMAXPROCS(0), 4) }

// walk reads the tree open at fd on a few goroutines, each taking directories (their
// paths in the tree, "" or ending in a slash) from a shared queue, and collects what to
// keep, or that the whole tree must be kept.
func (sv *salvage) walk(fd int) {
	var (
		mu      sync.Mutex
		pending sync.WaitGroup
		queue   = make(chan string, 1<<16) // past it, a directory is read where it is found
		push    func(string)
	)
	read := func(rel string, c *fileChecker) {
		keep, whole := sv.readDir(fd, rel, push, c)
		mu.Lock()
		sv.paths = append(sv.paths, keep...)
		sv.whole = sv.whole || whole
		mu.Unlock()
		pending.Done()
	}
	push = func(rel string) {
		pending.Add(1)
		select {
		case queue <- rel:
		default:
			read(rel, newChecker())
		}
	}
	push("")
	var workers sync.WaitGroup
	for range walkers() {
		workers.Go(func() {
			c := newChecker()
			for j := range queue {
				read(j, c)
			}
		})
	}
	pending.Wait()
	close(queue)
	workers.Wait()
}

func newChecker() *fileChecker { return &fileChecker{h: sha256.New(), buf: make([]byte, 32<<10)} }

// readDir reads the directory rel of the tree open at top, pushes its recorded
// subdirectories, and returns the paths in it to keep, or whether to keep the whole tree.
// A recorded directory the user swapped for a symlink since its parent was read is only
// followed to paths that the old tree lacks, which keep then fails to move: the tree is
// kept whole. A directory that the package's own modes keep this process out of holds
// nothing of the user's if it is as installed (sv.closedAsInstalled).
func (sv *salvage) readDir(top int, rel string, push func(string), c *fileChecker) (keep []string, whole bool) {
	fd, err := unix.Openat(top, cmp.Or(rel, "."), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == unix.EACCES {
		return nil, !sv.closedAsInstalled(top, rel)
	}
	if err != nil {
		return nil, true
	}
	defer unix.Close(fd)
	buf := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(buf)
	for {
		n, err := unix.Getdents(fd, *buf)
		if err != nil {
			return keep, true // what it could not read may be the user's
		}
		if n <= 0 {
			return keep, false
		}
		for cname, typ := range dirents((*buf)[:n]) {
			name := string(cname[:len(cname)-1])
			p := rel + name
			f := sv.files[p]
			var st unix.Stat_t
			if f != nil && typ != unix.DT_DIR { // a file's ctime; or a type the filesystem did not say
				if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err == unix.EACCES {
					return keep, len(keep) > 0 || !sv.closedAsInstalled(top, rel) // a directory it may read, not search
				} else if err != nil {
					return keep, true
				}
				if st.Mode&unix.S_IFMT == unix.S_IFDIR {
					typ = unix.DT_DIR
				}
			}
			switch {
			case f == nil:
				keep = append(keep, p)
			case typ == unix.DT_DIR && f.Type == '5':
				push(p + "/")
			case typ == unix.DT_DIR: // a directory where the package has a file
				keep = append(keep, p)
			case st.Mode&unix.S_IFMT != recordedType(f.Type) || f.Type == '0' && st.Size != f.Size:
				keep = append(keep, p) // changed, whatever the clock said at the install
			case st.Ctim.Nano() > sv.rec.Installed.UnixNano() && sv.differs(c, fd, name, f, &st):
				keep = append(keep, p)
			}
		}
	}
}

// closedAsInstalled reports whether the directory rel of the tree open at top, which this
// process may not read or search, is kept closed by a directory as the package installed it
// and unchanged since (see unchanged): nothing in it is then the user's.
func (sv *salvage) closedAsInstalled(top int, rel string) bool {
	dir, st, err := closedDir(top, cmp.Or(strings.TrimSuffix(rel, "/"), "."))
	f := sv.files[dir]
	return err == nil && f != nil && unchanged(f, &st, &sv.rec)
}

// differs reports, checking with c, whether the entry name of fd, with st, of the type
// and size f records, holds other data: another symlink target or content. A change of
// mode alone is no change of the user's data.
func (sv *salvage) differs(c *fileChecker, fd int, name string, f *db.File, st *unix.Stat_t) bool {
	var diffs []string
	var err error
	if f.Type == '2' {
		diffs, err = c.checkTarget(fd, name, f, nil)
	} else {
		diffs, err = c.checkFile(nil, fd, name, f, st, nil)
	}
	return err != nil || slices.ContainsFunc(diffs, func(d string) bool { return d != "mode" })
}

// mark makes sv's salvage directory and a marker beside it naming tree, where the commit
// will leave the old tree, durable before the commit.
func (sv *salvage) mark(tree string) error {
	sv.tree = tree
	saved := sv.r.path(".pkg", "saved")
	if err := sv.r.makeDir(filepath.Join(".pkg", "saved")); err != nil {
		return err
	}
	dir, err := os.MkdirTemp(saved, sv.rec.Name+"-"+sv.rec.Version+".")
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(sv.r.dir, tree)
	if err != nil {
		return err
	}
	data, err := json.Marshal(marker{Tree: rel, Name: sv.rec.Name, Installed: sv.rec.Installed})
	if err != nil {
		return err
	}
	sv.s.Dir, sv.marker = dir, dir+markerSuffix
	tmp, err := os.CreateTemp(saved, ".marker-") // then renamed: a marker is whole or absent
	if err == nil {
		_, err = tmp.Write(data)
		err = errors.Join(err, tmp.Close())
		if err == nil {
			err = os.Rename(tmp.Name(), sv.marker)
		}
		if err != nil {
			os.Remove(tmp.Name())
		}
	}
	if err != nil {
		return err
	}
	if sv.r.o.NoSync {
		return nil
	}
	return errors.Join(durable.Path(sv.marker), durable.Path(saved), durable.Path(filepath.Dir(saved)))
}

// markerSuffix names a salvage's marker: its directory's name and this.
const markerSuffix = ".pending"

// keep moves what sv found out of the old tree, where the commit left it (sv.tree), into
// its directory; a tree it cannot sort out, or the rest of it, goes whole beside. Then the
// marker goes, unless the tree could not be kept at all: ok false, and the caller must
// leave the tree for the next start (keepMarked).
func (sv *salvage) keep() (s Salvage, ok bool) {
	tree := sv.tree
	if !sv.whole {
		for _, p := range sv.paths {
			to := filepath.Join(sv.s.Dir, filepath.FromSlash(p))
			if os.MkdirAll(filepath.Dir(to), 0o755) != nil || sv.r.rename(filepath.Join(tree, filepath.FromSlash(p)), to) != nil {
				sv.whole = true // a directory the user made read-only, say: keep the rest whole
				break
			}
			sv.s.Paths = append(sv.s.Paths, p)
		}
	}
	if sv.whole {
		if len(sv.s.Paths) == 0 {
			removeEmptyDirs(sv.s.Dir) // what a move that failed began
		}
		if sv.s.Tree, sv.s.Err = sv.r.keepTree(tree, sv.s.Dir); sv.s.Err != nil {
			return sv.s, false
		}
	}
	slices.Sort(sv.s.Paths)
	os.Remove(sv.marker)
	return sv.s, true
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

// keepTree renames tree to dir, or beside it when dir already holds what was moved out of
// it, and returns where it is.
func (r *Root) keepTree(tree, dir string) (string, error) {
	if _, there := inode(dir); os.Remove(dir) != nil && there { // not empty
		dir += "-rest"
	}
	return dir, r.rename(tree, dir)
}

// drop removes sv's marker and directory, for a change that did not happen.
func (sv *salvage) drop() {
	if sv.marker != "" {
		os.Remove(sv.marker)
		os.Remove(sv.s.Dir)
	}
}

// keepMarked keeps whole, at a start, each old tree a marker names that a commit cut short
// left in staging or trash, if the commit happened (the record of its name changed), and
// returns what it kept, as reconcile says, and the trees it could not keep, which must
// stay where they are (their markers stay too, for the next start).
func (r *Root) keepMarked() (kept, stuck []string) {
	markers, _ := filepath.Glob(r.path(".pkg", "saved", "*"+markerSuffix))
	for _, path := range markers {
		var m marker
		data, err := os.ReadFile(path)
		if err == nil {
			err = json.Unmarshal(data, &m)
		}
		parent := filepath.Dir(filepath.Clean(m.Tree))
		if err != nil || parent != filepath.Join(".pkg", "staging") && parent != filepath.Join(".pkg", "trash") {
			continue // not pkg's: left alone
		}
		rec, err := r.db.Get(m.Name)
		if err != nil && !errors.Is(err, db.ErrNotInstalled) {
			stuck = append(stuck, r.path(m.Tree)) // cannot tell: the next start decides
			continue
		}
		dir, tree := strings.TrimSuffix(path, markerSuffix), r.path(m.Tree)
		_, there := inode(tree)
		switch committed := err != nil || !rec.Installed.Equal(m.Installed); {
		case committed && there:
			where, err := r.keepTree(tree, dir)
			if err != nil {
				stuck = append(stuck, tree)
				continue
			}
			kept = append(kept, fmt.Sprintf("kept the old tree of %s, with files of yours in it, in %s", m.Name, where))
		default:
			os.Remove(dir) // empty, unless the commit's own moves had begun
		}
		os.Remove(path)
	}
	return kept, stuck
}

// Saved returns the directories under .pkg/saved that hold what salvages kept, without
// their markers or a marker being written.
func (r *Root) Saved() []string {
	saved, _ := filepath.Glob(r.path(".pkg", "saved", "*"))
	return slices.DeleteFunc(saved, func(p string) bool {
		return strings.HasSuffix(p, markerSuffix) || strings.HasPrefix(filepath.Base(p), ".")
	})
}

// Salvaged returns what the last Apply kept of the trees it replaced or removed.
func (r *Root) Salvaged() []Salvage { return r.salvaged }

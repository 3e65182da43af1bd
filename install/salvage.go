package install

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
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
	Dir           string   // where they are now, under <root>/.pkg/saved
	Paths         []string // relative to the package's directory, as they were; nil for the whole tree
	Err           error    // why the tree could not be kept, which went with it
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
			return nil, err
		}
		sv := &salvage{r: r, rec: p, files: make(map[string]*db.File, len(files)), s: Salvage{Name: p.Name, Version: p.Version}}
		for i := range files {
			sv.files[files[i].Path] = &files[i]
		}
		sv.walk(fd)
		unix.Close(fd)
		if sv.whole || len(sv.paths) > 0 {
			svs = append(svs, sv)
		}
	}
	return svs, nil
}

// walkers is how many goroutines read a tree for findChanges: the fstatat of every file
// is most of its cost, and reads scale where the unlinks of a removal do not.
func walkers() int { return min(runtime.GOMAXPROCS(0), 4) }

// dirJob is a directory for walk to read: open at fd, at rel in the tree ("" or ending in
// a slash).
type dirJob struct {
	fd  int
	rel string
}

// walk reads the tree open at fd on a few goroutines, each taking directories from a
// shared queue, and collects what to keep, until it finds it must keep the whole tree.
func (sv *salvage) walk(fd int) {
	var (
		mu      sync.Mutex
		pending sync.WaitGroup
		queue   = make(chan dirJob, 1<<16)
		push    func(dirJob)
	)
	read := func(j dirJob, c *fileChecker) {
		keep, whole := sv.readDir(j, push, c)
		unix.Close(j.fd)
		mu.Lock()
		sv.paths = append(sv.paths, keep...)
		sv.whole = sv.whole || whole
		mu.Unlock()
		pending.Done()
	}
	push = func(j dirJob) {
		pending.Add(1)
		select {
		case queue <- j:
		default: // a queue this long: read it here
			read(j, newChecker())
		}
	}
	dup, err := unix.Dup(fd)
	if err != nil {
		sv.whole = true
		return
	}
	push(dirJob{dup, ""})
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

// readDir reads one directory of the tree, pushes its recorded subdirectories, and returns
// the paths in it to keep, or whether to keep the whole tree.
func (sv *salvage) readDir(j dirJob, push func(dirJob), c *fileChecker) (keep []string, whole bool) {
	buf := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(buf)
	for {
		n, err := unix.Getdents(j.fd, *buf)
		if err != nil {
			return keep, true // what it could not read may be the user's
		}
		if n <= 0 {
			return keep, false
		}
		for cname, typ := range dirents((*buf)[:n]) {
			name := string(cname[:len(cname)-1])
			p := j.rel + name
			f := sv.files[p]
			var st unix.Stat_t
			switch {
			case f == nil:
				keep = append(keep, p)
			case typ == unix.DT_DIR && f.Type == '5':
				sub, err := unix.Openat(j.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
				if err != nil {
					return keep, true
				}
				push(dirJob{sub, p + "/"})
			case unix.Fstatat(j.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil:
				return keep, true
			case st.Ctim.Nano() > sv.rec.Installed.UnixNano() && sv.differs(c, j.fd, name, f, &st):
				keep = append(keep, p)
			}
		}
	}
}

// differs reports, checking with c, whether the entry name of fd, with st, holds other
// data than f records: another type, symlink target, size or content. A change of mode
// alone is no change of the user's data.
func (sv *salvage) differs(c *fileChecker, fd int, name string, f *db.File, st *unix.Stat_t) bool {
	if st.Mode&unix.S_IFMT != recordedType(f.Type) {
		return true
	}
	var diffs []string
	var err error
	if f.Type == '2' {
		diffs, err = c.checkTarget(fd, name, f, nil)
	} else {
		diffs, err = c.checkFile(fd, name, f, st, nil)
	}
	return err != nil || slices.ContainsFunc(diffs, func(d string) bool { return d != "mode" })
}

// mark makes sv's salvage directory and a marker beside it naming tree, where the commit
// will leave the old tree, durable before the commit.
func (sv *salvage) mark(tree string) error {
	saved := sv.r.path(".pkg", "saved")
	if err := os.MkdirAll(saved, 0o755); err != nil {
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
	if err := os.WriteFile(sv.marker, data, 0o644); err != nil {
		return err
	}
	return durable.Path(sv.marker)
}

// markerSuffix names a salvage's marker: its directory's name and this.
const markerSuffix = ".pending"

// keep moves what sv found out of tree, the old tree since the commit, into its directory,
// or the whole tree; a tree it cannot sort out goes whole. Then the marker goes.
func (sv *salvage) keep(tree string) Salvage {
	for _, p := range sv.paths {
		if sv.whole {
			break
		}
		to := filepath.Join(sv.s.Dir, filepath.FromSlash(p))
		if os.MkdirAll(filepath.Dir(to), 0o755) != nil || os.Rename(filepath.Join(tree, filepath.FromSlash(p)), to) != nil {
			sv.whole = true // a directory the user made read-only, say: keep the rest whole
			break
		}
		sv.s.Paths = append(sv.s.Paths, p)
	}
	if sv.whole {
		rest := sv.s.Dir
		if len(sv.s.Paths) > 0 {
			rest += "-rest"
		} else {
			os.Remove(rest) // empty: the tree takes its place
		}
		sv.s.Err = os.Rename(tree, rest)
		sv.s.Dir, sv.s.Paths = rest, nil
	}
	slices.Sort(sv.s.Paths)
	os.Remove(sv.marker)
	return sv.s
}

// drop removes sv's marker and directory, for a change that did not happen.
func (sv *salvage) drop() {
	if sv.marker != "" {
		os.Remove(sv.marker)
		os.Remove(sv.s.Dir)
	}
}

// keepMarked keeps whole, at a start, each old tree a marker names that a commit cut short
// left in staging or trash, if the commit happened (the record of its name changed); it
// returns what it kept, as reconcile says.
func (r *Root) keepMarked() []string {
	markers, _ := filepath.Glob(r.path(".pkg", "saved", "*"+markerSuffix))
	var kept []string
	for _, path := range markers {
		var m marker
		data, err := os.ReadFile(path)
		if err == nil {
			err = json.Unmarshal(data, &m)
		}
		if err != nil {
			continue // not pkg's: left alone
		}
		rec, err := r.db.Get(m.Name)
		committed := err != nil || !rec.Installed.Equal(m.Installed)
		dir := strings.TrimSuffix(path, markerSuffix)
		if tree := r.path(m.Tree); committed && strings.HasPrefix(m.Tree, ".pkg"+string(filepath.Separator)) && exists(tree) {
			os.Remove(dir)
			if os.Rename(tree, dir) == nil {
				kept = append(kept, fmt.Sprintf("kept the old tree of %s, which held files of the user's, in %s", m.Name, dir))
			}
		} else {
			os.Remove(dir) // empty, unless the commit's own moves began
		}
		os.Remove(path)
	}
	return kept
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// Salvaged returns what the last Apply kept of the trees it replaced or removed.
func (r *Root) Salvaged() []Salvage { return r.salvaged }

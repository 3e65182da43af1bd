package install

import (
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/notice"
	"pkg/repo"
)

// Salvage is what a change kept of a package tree it replaced or removed: what the package
// did not install, and the files whose data changed since it did, moved to Dir before the
// tree was deleted; or the whole tree, when a part of it could not be read or moved.
type Salvage struct {
	Key, Version, Kind string   // the package's instance key (repo.InstanceKey), version and kind
	Dir                string   // where Paths are now, under <root>/.pkg/saved
	Paths              []string // relative to the package's directory, as they were
	Tree               string   // where the tree, or the rest of it, is kept, when pkg could not sort it out; or ""
	Err                error    // why the tree could not be kept: it is left for the next start to keep
	// Prefix: Paths are paths of the root's prefix, not of the package's directory, that
	// held something of the user's where the package's files went or were.
	Prefix bool
	// Gone: with Prefix, Paths are what the package, whose tree was gone when a repair
	// dropped it, left in the prefix, which pkg cannot tell from the user's.
	Gone bool
	Left []string // directories of the prefix it listed, left holding what no package lists
}

// A salvage finds, before a commit, what the user added to one installed tree or changed
// in it, and keeps it once the commit is done. The tree itself is not touched before the
// commit, which may yet put it back. A marker, durable before the commit, names where the
// commit leaves the tree, so that a start after a crash keeps it whole (keepMarked)
// rather than deleting it with the rest of staging and trash.
type salvage struct {
	r      *Root
	rec    db.Record
	at     *treeAt             // where its members are
	files  map[string]*db.File // what the package installed, by path
	paths  []string            // to keep, relative to the tree
	whole  bool                // a part could not be read: keep the whole tree
	s      Salvage
	tree   place  // where the commit leaves the tree (mark)
	dir    string // sv.s.Dir's name in saved
	marker string // the marker's name in saved
}

// marker is what a salvage's marker file holds.
type marker struct {
	Tree      string    `json:"tree"`      // where the commit leaves the tree, relative to the root
	Name      string    `json:"name"`      // the package's key (db.Record.Key)
	Installed time.Time `json:"installed"` // of the tree's record: the same record after a start means no commit
}

// findChanges returns a salvage for each tree of recs that staged replace or remove names
// holding something of the user's.
func (r *Root) findChanges(recs []db.Record, staged []*Staged, remove []string) ([]*salvage, error) {
	var names []string
	for _, p := range recs {
		if slices.ContainsFunc(staged, func(s *Staged) bool { return s.rec.Key() == p.Key() }) || slices.Contains(remove, p.Key()) {
			names = append(names, p.Key())
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
		fd, err := r.open(treeOf(p.Key()), unix.O_RDONLY|unix.O_DIRECTORY)
		if errors.Is(err, unix.ENOENT) {
			continue // gone: nothing of the user's in it
		}
		sv := &salvage{r: r, rec: p, s: Salvage{Key: p.Key(), Version: p.Version, Kind: p.Kind}}
		if err != nil {
			sv.whole = true // a tree it cannot read, or a file or link of the user's in its place
		} else {
			sv.files = make(map[string]*db.File, len(files[i]))
			for j := range files[i] {
				sv.files[files[i][j].Path] = &files[i][j]
			}
			sv.at = r.treeAt(fd, &sv.rec)
			sv.walk()
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

// walk reads the tree at sv.at on a few goroutines, each taking directories (their
// paths in the tree, "" or ending in a slash) from a shared queue, and collects what to
// keep, or that the whole tree must be kept.
func (sv *salvage) walk() {
	var (
		mu      sync.Mutex
		pending sync.WaitGroup
		queue   = make(chan string, 1<<16) // past it, a directory is read where it is found
		push    func(string)
	)
	read := func(rel string, c *fileChecker) {
		keep, whole := sv.readDir(rel, push, c)
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

// readDir reads the directory rel of the tree, pushes its recorded
// subdirectories, and returns the paths in it to keep, or whether to keep the whole tree.
// It is reached through no symlink: a recorded directory the user swapped for a symlink
// since its parent was read has the tree kept whole. A directory that the package's own
// modes keep this process out of holds nothing of the user's if it is as installed
// (sv.closedAsInstalled), and one that is gone holds nothing.
func (sv *salvage) readDir(rel string, push func(string), c *fileChecker) (keep []string, whole bool) {
	top, dir := sv.at.at(strings.TrimSuffix(cmp.Or(rel, "."), "/"))
	fd, err := openBeneath(top, dir, unix.O_RDONLY|unix.O_DIRECTORY)
	switch {
	case errors.Is(err, unix.EACCES):
		return nil, !sv.closedAsInstalled(top, dir)
	case errors.Is(err, unix.ENOENT):
		return nil, false // gone (a folded directory the user deleted): nothing of theirs in it
	case err != nil:
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
					return keep, len(keep) > 0 || !sv.closedAsInstalled(top, dir) // a directory it may read, not search
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

// closedAsInstalled reports whether the directory rel beneath top, of the tree (sv.at), which
// this process may not read or search, is kept closed by a directory as the package
// installed it and unchanged since (see unchanged): nothing in it is then the user's.
func (sv *salvage) closedAsInstalled(top int, rel string) bool {
	dir, st, err := closedDir(top, rel)
	f := sv.files[dir]
	return err == nil && f != nil && unchanged(f, &st, &sv.rec)
}

// differs reports, checking with c, whether the entry name of fd, with st, of the type
// and size f records, holds other data: another symlink target or content. A change of
// mode alone is no change of the user's data.
func (sv *salvage) differs(c *fileChecker, fd int, name string, f *db.File, st *unix.Stat_t) bool {
	var diffs []error
	var err error
	if f.Type == '2' {
		diffs, err = c.checkTarget(fd, name, f, nil)
	} else {
		diffs, err = c.checkFile(nil, fd, name, f, st, nil)
	}
	return err != nil || slices.ContainsFunc(diffs, func(d error) bool { return d != ErrMode })
}

// savedName is the name of what is kept of the package key at version in .pkg/saved:
// NAME-VERSION, the name made a file name (repo.FileName).
func savedName(key, version string) string {
	return repo.FileName(strings.TrimSuffix(key, "@"+version)) + "-" + version
}

// mark makes sv's salvage directory and a marker beside it naming tree, where the commit
// will leave the old tree, durable before the commit.
func (sv *salvage) mark(tree place) error {
	r := sv.r
	sv.tree = tree
	if err := r.makeSaved(); err != nil {
		return err
	}
	data, err := json.Marshal(marker{Tree: relOf(tree), Name: sv.rec.Key(), Installed: sv.rec.Installed})
	if err != nil {
		return err
	}
	dir, err := r.makeTemp(saved, savedName(sv.rec.Key(), sv.rec.Version)+".", func(fd int, name string) (int, error) {
		return -1, unix.Mkdirat(fd, name, 0o755)
	})
	if err != nil {
		return err
	}
	sv.s.Dir, sv.dir, sv.marker = r.pathOf(dir), dir.name, dir.name+markerSuffix
	// Written under a temporary name, then renamed: a marker is whole or absent.
	var fd int
	tmp, err := r.makeTemp(saved, ".marker-", func(dirfd int, name string) (int, error) {
		fd, err = unix.Openat(dirfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
		return fd, err
	})
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), r.pathOf(tmp))
	_, err = f.Write(data)
	if err == nil && !r.o.NoSync {
		err = f.Sync()
	}
	err = errors.Join(err, f.Close())
	if err == nil {
		err = r.rename(tmp, place{saved, sv.marker})
	}
	if err != nil {
		r.remove(tmp)
		return err
	}
	return errors.Join(r.sync(place{in: saved}), r.sync(place{in: meta}))
}

// makeTemp makes, with mk, an entry named prefix and a random number in the part in that
// nothing has yet, and returns its place and what mk returned.
func (r *Root) makeTemp(in part, prefix string, mk func(dirfd int, name string) (int, error)) (place, error) {
	for {
		p := place{in, prefix + strconv.FormatUint(uint64(rand.Uint32()), 10)}
		_, err := mk(r.fd[in], p.name)
		if err == unix.EEXIST {
			continue
		}
		if err != nil {
			return p, &os.PathError{Op: "create", Path: r.pathOf(p), Err: err}
		}
		return p, nil
	}
}

// markerSuffix names a salvage's marker: its directory's name and this.
const markerSuffix = ".pending"

// keep moves what sv found out of the old tree, where the commit left it (sv.tree), into
// its directory; a tree it cannot sort out, or the rest of it, goes whole beside. Then the
// marker goes, unless the tree could not be kept at all: ok false, and the caller must
// leave the tree for the next start (keepMarked).
func (sv *salvage) keep() (s Salvage, ok bool) {
	r, tree := sv.r, sv.tree
	if !sv.whole {
		for _, p := range sv.paths {
			to := place{saved, sv.dir + "/" + p}
			if r.mkdirAll(place{saved, path.Dir(to.name)}) != nil || r.rename(place{tree.in, tree.name + "/" + p}, to) != nil {
				sv.whole = true // a directory the user made read-only, say: keep the rest whole
				break
			}
			sv.s.Paths = append(sv.s.Paths, p)
		}
	}
	if sv.whole {
		if len(sv.s.Paths) == 0 {
			removeEmptyDirs(r.fd[saved], sv.dir) // what a move that failed began
		}
		if sv.s.Tree, sv.s.Err = r.keepTree(tree, place{saved, sv.dir}); sv.s.Err != nil {
			return sv.s, false
		}
	}
	slices.Sort(sv.s.Paths)
	r.remove(place{saved, sv.marker})
	return sv.s, true
}

// mkdirAll makes the directory p and those above it in its part that are missing.
func (r *Root) mkdirAll(p place) error {
	elems := strings.Split(p.name, "/")
	for i := range elems {
		q := place{p.in, strings.Join(elems[:i+1], "/")}
		err := r.at(q, func(fd int, base string) error { return unix.Mkdirat(fd, base, 0o755) })
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return &os.PathError{Op: "mkdir", Path: r.pathOf(q), Err: unwrapPath(err)}
		}
	}
	return nil
}

// removeEmptyDirs removes the directory name in parent and the directories under it,
// deepest first, where empty, reaching each through no symlink.
func removeEmptyDirs(parent int, name string) {
	fd, err := unix.Openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), name)
	names, _ := f.Readdirnames(-1)
	for _, n := range names {
		removeEmptyDirs(fd, n)
	}
	f.Close()
	unix.Unlinkat(parent, name, unix.AT_REMOVEDIR)
}

// keepTree renames tree to dir, or beside it when dir already holds what was moved out of
// it, and returns where it is.
func (r *Root) keepTree(tree, dir place) (string, error) {
	_, there := r.inode(dir)
	if r.rmdir(dir) != nil && there { // not empty
		dir.name += "-rest"
	}
	return r.pathOf(dir), r.rename(tree, dir)
}

// drop removes sv's marker and directory, for a change that did not happen.
func (sv *salvage) drop() {
	if sv.marker != "" {
		sv.r.remove(place{saved, sv.marker})
		sv.r.remove(place{saved, sv.dir})
	}
}

// maxMarker bounds what keepMarked reads of a file that looks like a marker.
const maxMarker = 64 << 10 // 64 KiB

// keepMarked keeps whole, at a start, each old tree a marker names that a commit cut short
// left in staging or trash, if the commit happened (the record of its name changed), and
// returns what it kept, as reconcile says, and the trees it could not keep, which must
// stay where they are (their markers stay too, for the next start).
func (r *Root) keepMarked() (kept []notice.KeptTree, stuck []place) {
	if r.fd[saved] < 0 {
		return nil, nil
	}
	names, _ := r.names(place{in: saved})
	slices.Sort(names)
	for _, name := range names {
		if !strings.HasSuffix(name, markerSuffix) {
			continue
		}
		var m marker
		data, err := r.readSmall(place{saved, name}, maxMarker)
		if err == nil {
			err = json.Unmarshal(data, &m)
		}
		tree, ok := placeOf(m.Tree)
		if err != nil || !ok || tree.in != staging && tree.in != trash {
			continue // not pkg's: left alone
		}
		rec, err := r.db.Get(m.Name)
		if err != nil && !errors.Is(err, db.ErrNotInstalled) {
			stuck = append(stuck, tree) // cannot tell: the next start decides
			continue
		}
		dir := place{saved, strings.TrimSuffix(name, markerSuffix)}
		_, there := r.inode(tree)
		switch committed := err != nil || !rec.Installed.Equal(m.Installed); {
		case committed && there:
			where, err := r.keepTree(tree, dir)
			if err != nil {
				stuck = append(stuck, tree)
				continue
			}
			kept = append(kept, notice.KeptTree{Name: m.Name, Dir: where})
		default:
			r.rmdir(dir) // empty, unless the commit's own moves had begun
		}
		r.remove(place{saved, name})
	}
	return kept, stuck
}

// readSmall reads the regular file p, of at most max bytes, without blocking on a FIFO.
func (r *Root) readSmall(p place, max int64) ([]byte, error) {
	fd, err := r.open(p, unix.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), r.pathOf(p))
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() || info.Size() > max {
		return nil, &os.PathError{Op: "read", Path: r.pathOf(p), Err: errors.New("not a small regular file")}
	}
	return io.ReadAll(io.LimitReader(f, max))
}

// Saved returns the directories under .pkg/saved that hold what salvages kept, without
// their markers or a marker being written.
func (r *Root) Saved() []string {
	if r.fd[saved] < 0 {
		return nil
	}
	names, _ := r.names(place{in: saved})
	slices.Sort(names)
	var dirs []string
	for _, name := range names {
		if !strings.HasSuffix(name, markerSuffix) && !strings.HasPrefix(name, ".") {
			dirs = append(dirs, r.path(".pkg", "saved", name))
		}
	}
	return dirs
}

// Salvaged returns what the last Apply kept of the trees it replaced or removed.
func (r *Root) Salvaged() []Salvage { return r.salvaged }

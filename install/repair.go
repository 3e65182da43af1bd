package install

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/internal/termtext"
	"pkg/notice"
	"pkg/repo"
	"pkg/tarutil"
)

// A Candidate is what a tree in pkgs/ may hold: a package and the members of its archive,
// with their digests, as a cache entry has them.
type Candidate struct {
	Package repo.Package
	Members []tarutil.Member
	// Bare is a package its cache entry alone describes (no index entry, no record): its
	// commands, libraries and dependencies are unknown until it is installed again.
	Bare bool
	// Installed is when the package was installed, where a record of it says; zero where
	// none does, and the repair's end is taken.
	Installed time.Time
}

// An UnmatchedError is the trees in pkgs/ that no candidate matched (a cache entry pruned,
// a tree changed beyond its shape, a directory not pkg's): Rebuild changed nothing, since
// a database without them would have the next change take them for no package's.
type UnmatchedError struct {
	Trees []string
}

func (e *UnmatchedError) Error() string {
	quoted := make([]string, len(e.Trees)) // a directory of pkgs/ not pkg's may be named anything
	for i, t := range e.Trees {
		quoted[i] = termtext.Quote(t)
	}
	return "repair: no package in the cache matches " + strings.Join(quoted, ", ") + ": nothing was changed"
}

// Rebuilt says what Rebuild did.
type Rebuilt struct {
	Root     string   // the root's directory
	Recorded []string // "NAME VERSION" of each tree recorded again
	Bare     []string // those of them recorded Bare (db.Record.Bare)
	BareKeys []string // the key (db.Record.Key) of each of Bare
	Kept     string   // where the database it replaced is, "" if there was none
	// Sound says the database was not damaged: it was kept, with its records, and only the
	// owners of the prefix's paths were recorded again from its file lists (Recorded).
	Sound bool
	// Salvaged says whether the records of repositories (their pins) and of what the user
	// asked for came from the database replaced; where not, every package nothing
	// recorded depends on is taken as asked for, and no repository is pinned (where they
	// did, so is each such package the database replaced has no record of).
	Salvaged bool
	Repos    int // records of repositories salvaged
	// Gone is the packages the replaced database recorded whose trees pkgs/ no longer
	// holds: not recorded again, nor their requests; what depends on them is left without
	// them.
	Gone []Gone
	// Saved is what the repair's roll-forward kept in .pkg/saved: what the Gone packages
	// left in the prefix (their commands in bin/ among it, which an install of them would
	// otherwise refuse as not pkg's), each Salvage with Gone.
	Saved []Salvage
	// Unrecorded says the root had no database and lost none (treesLost): nothing was ever
	// recorded there, its first change, if any, cut short. Rebuild undid that change as
	// Open does and recorded nothing; the root holds the empty database Open makes.
	Unrecorded bool
	// Recovered is what Rebuild undid or deleted of what commands cut short left, and what
	// it could not delete of that, as Root.Notes says them.
	Recovered []notice.Notice
}

// Rebuild replaces the root's database, where it is damaged, by one made from the trees
// in pkgs/: each is recorded as the first of candidates(name) whose member list it has
// the shape of (every path, of its type and size); where a tree matches none, it changes
// nothing and returns an *UnmatchedError. It deletes no tree of pkgs/, keeps the database
// it replaces beside the new one, takes the root's lock as Open does, and then makes the prefix (the owners of its
// paths, rebuilt from the file lists, and its links) and bin/ agree with the records.
// The records of packages (their install times too), repositories and what was asked for
// are read from the old database where it is only older than its last commit
// (db.ErrStale): its other pages are not read, as bbolt cannot read every damage safely. A
// package's record is taken for its tree where its archive is one the tree matches
// (recorded); one whose tree is gone is not recorded again (Rebuilt.Gone). A database that
// is not damaged is kept (Rebuilt.Sound), and only the prefix made to agree with its
// records; where the roll-forward of its last change cannot finish, it returns no Rebuilt
// and that *LinksError, and where a package it records has no tree, a *GoneError. A root
// without a database whose pkgs/ holds no installed package (a first change cut short) is
// opened as Open does, which undoes that change (Rebuilt.Unrecorded).
func Rebuild(ctx context.Context, dir string, o Options, candidates func(name string) ([]Candidate, error)) (_ *Rebuilt, err error) {
	r, err := lockRoot(ctx, dir, o)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r.db == nil {
			r.closeParts()
			return
		}
		err = errors.Join(err, r.Close())
	}()
	if r.unrecorded() {
		if r.db, err = r.openDB(db.Options{Timeout: o.LockTimeout, Hold: true}); err != nil {
			return nil, err
		}
		if err := r.reconcile(); err != nil {
			return nil, err
		}
		return &Rebuilt{Root: r.dir, Unrecorded: true, Recovered: r.recovered()}, nil
	}
	old, err := r.salvageRecords()
	if err != nil {
		return nil, err
	}
	out := &Rebuilt{Root: r.dir, Salvaged: old != nil}
	if old != nil && old.sound {
		err := r.keepSound(out, old)
		if !out.Sound { // failed before its commit
			return nil, err
		}
		return out, err
	}
	if old != nil {
		candidates = recorded(old.pkgs, candidates)
	} else {
		old = &oldRecords{}
	}
	recs, lists, undated, err := r.match(candidates, out)
	if err != nil {
		return nil, err
	}
	out.Gone = r.gone(old.pkgs, recs)
	for i, g := range out.Gone {
		if q, ok := old.reqs[g.Key()]; ok {
			out.Gone[i].Requested = &q
		}
	}
	if !out.Salvaged {
		old.reqs = unneeded(recs, r.linkedNPM(recs))
	} else {
		laterRequests(old, recs, unneeded(recs, r.linkedNPM(recs)))
	}
	if err := r.buildDatabase(recs, lists, undated, old.reqs, old.repos, leftBy(old, out.Gone)); err != nil {
		return nil, err
	}
	if out.Kept, err = r.replaceDatabase(); err != nil {
		return nil, err
	}
	if r.db, err = r.openDB(db.Options{Timeout: o.LockTimeout, Hold: true}); err != nil {
		return nil, err
	}
	out.Repos = len(old.repos)
	err = r.reconcile()
	out.Saved, out.Recovered = r.Salvaged(), r.recovered()
	if err != nil {
		return out, err
	}
	if err := r.syncBins(true); err != nil {
		return out, &LinksError{Dir: r.path("bin"), Err: err}
	}
	return out, nil
}

// keepSound makes the prefix agree with the records of the root's database, which is
// not damaged, old: the owners of its paths recorded again from the file lists, and what
// it lacks linked again at the start that follows, as a repair that replaces the database
// does. What a command cut short left is first undone, as Open does. A record whose tree
// is gone, from which nothing could be linked, stops it before its commit (*GoneError).
// out.Sound says it committed.
func (r *Root) keepSound(out *Rebuilt, old *oldRecords) error {
	var err error
	if r.db, err = r.openDB(db.Options{Timeout: r.o.LockTimeout, Hold: true}); err != nil {
		return err
	}
	if err := r.reconcile(); err != nil {
		return err
	}
	out.Recovered = r.recovered()
	if r.unlinked != nil { // a roll-forward that cannot finish, which a new one would drop
		return r.unlinked
	}
	pkgs, lists, err := r.db.Installed()
	if err != nil {
		return err
	}
	recs := make([]*db.Record, len(pkgs))
	for i := range pkgs {
		recs[i] = &pkgs[i]
		out.Recorded = append(out.Recorded, pkgs[i].Name+" "+pkgs[i].Version)
	}
	if gone := r.gone(pkgs, recs); len(gone) > 0 {
		return &GoneError{Gone: gone}
	}
	if err := r.db.CommitRequested(nil, nil, nil, nil, r.rebuildPrefix(recs, lists, nil, old.reqs, nil)); err != nil {
		return err
	}
	out.Sound, out.Repos = true, len(old.repos)
	if err := r.reconcile(); err != nil {
		return err
	}
	if err := r.syncBins(true); err != nil {
		return &LinksError{Dir: r.path("bin"), Err: err}
	}
	return nil
}

// unrecorded reports whether r has no database, not even the one a first commit made
// (db.Open adopts it), and lost none (treesLost): an empty database made by a command cut
// short (db.new) records nothing either.
func (r *Root) unrecorded() bool {
	return errors.Is(r.probeDB(), fs.ErrNotExist) && r.treesLost() == nil
}

// match finds the record of each tree in pkgs/ among its candidates, and returns those
// whose install time no record gave (undated, by key); an *UnmatchedError names the trees
// none matches.
func (r *Root) match(candidates func(name string) ([]Candidate, error), out *Rebuilt) (recs []*db.Record, lists [][]db.File, undated []string, err error) {
	names, err := r.names(place{pkgs, ""})
	if err != nil {
		return nil, nil, nil, err
	}
	slices.Sort(names)
	var unknown []string
	for _, name := range names {
		fd, err := r.open(place{pkgs, name}, unix.O_PATH|unix.O_DIRECTORY)
		if err != nil { // not a directory: not a tree of pkg's
			continue
		}
		cands, err := candidates(nameOfTree(name))
		if err == nil {
			m, ok := matchTree(fd, r.fd[top], name, cands)
			switch {
			case !ok:
				unknown = append(unknown, r.pathOf(place{pkgs, name}))
			default:
				recs, lists = append(recs, m.rec), append(lists, m.files)
				out.Recorded = append(out.Recorded, m.rec.Name+" "+m.rec.Version)
				if m.bare {
					out.Bare = append(out.Bare, m.rec.Name+" "+m.rec.Version)
					out.BareKeys = append(out.BareKeys, m.rec.Key())
				}
				if !m.dated {
					undated = append(undated, m.rec.Key())
				}
			}
		}
		unix.Close(fd)
		if err != nil {
			return nil, nil, nil, err
		}
	}
	if len(unknown) > 0 {
		return nil, nil, nil, &UnmatchedError{Trees: unknown}
	}
	return recs, lists, undated, nil
}

// nameOfTree is the name of the package whose tree is pkgs/dir: dir is the FileName of its
// key, NAME or, for an npm instance, NAME@VERSION.
func nameOfTree(dir string) string {
	name := dir
	if i := strings.LastIndex(dir, "@"); i > 0 {
		name = dir[:i]
	}
	return repo.NameOfFile(name)
}

// A treeMatch is what a tree in pkgs/ is recorded as.
type treeMatch struct {
	rec   *db.Record
	files []db.File
	bare  bool    // the record is Bare
	dated bool    // installed when the candidate says
	at    *treeAt // where its files are looked for
}

// matchTree returns the record of the tree pkgs/name, open at fd, as the first of cands it
// has the shape of would have made it, installed when the candidate says (dated) where
// the tree has not changed since (its ctime), else when the tree was renamed into pkgs/:
// the repair's end then takes that time's place (rebuildPrefix). A directory the tree
// holds as an empty placeholder, where the candidate lists paths beneath it, may be
// folded: its shape is then looked for at its prefix path, beneath prefix (foldedIn).
// Where several have its shape (versions whose files differ in content alone), the first
// whose regular files it holds as they are is taken, else the first.
func matchTree(fd, prefix int, name string, cands []Candidate) (treeMatch, bool) {
	var ms []treeMatch
	for _, c := range cands {
		p := c.Package
		if repo.FileName(p.Key()) != name || tarutil.Validate(c.Members) != nil {
			continue
		}
		order := byName(c.Members)
		members := executable(p.Bin, slices.Clone(c.Members), order)
		files := slices.Collect(fileRecords(members, order))
		at := &treeAt{tree: fd, prefix: prefix, into: intoOf(&p)}
		if !hasShape(fd, files) {
			if at.folded = foldedIn(fd, prefix, files, at.into); len(at.folded) == 0 || !hasShapeAt(at, files) {
				continue
			}
		}
		res := summarize(p, members)
		var st unix.Stat_t
		changed := time.Now()
		if unix.Fstat(fd, &st) == nil {
			changed = time.Unix(st.Ctim.Unix())
		}
		installed, dated := c.Installed, !c.Installed.IsZero() && !changed.After(c.Installed)
		if !dated {
			installed = changed
		}
		rec := &db.Record{Name: p.Name, Version: p.Version, Kind: p.Kind, SHA256: p.SHA256, Depends: p.Depends, Optional: p.Optional, Peers: p.Peers, Bin: p.Bin, Lib: p.Lib,
			Provides: p.Provides, Conflicts: p.Conflicts, Replaces: p.Replaces, Into: intoOf(&p), Env: p.Env,
			Summary: p.Summary, Files: res.Files, Size: res.Bytes, Installed: installed.UTC(), Origin: p.Origin, Folded: at.folded, Bare: c.Bare || p.Bare}
		ms = append(ms, treeMatch{rec: rec, files: files, bare: rec.Bare, dated: dated, at: at})
	}
	if len(ms) == 0 {
		return treeMatch{}, false
	}
	if len(ms) > 1 {
		for _, m := range ms {
			if hasContent(m.at, m.files) {
				return m, true
			}
		}
	}
	return ms[0], true
}

// hasContent reports whether each regular file of files is at t with the recorded sha256.
func hasContent(t *treeAt, files []db.File) bool {
	for _, f := range files {
		if f.Type != tar.TypeReg {
			continue
		}
		dir, rel := t.at(f.Path)
		if sum, err := hashBeneath(dir, rel); err != nil || sum != f.SHA256 {
			return false
		}
	}
	return true
}

// foldedIn returns the topmost directories of files that the tree open at fd holds as
// empty placeholders while files lists paths beneath them, and whose prefix paths, beneath
// prefix, are directories: where a package's directory is folded, the database, which says
// so, is the one being rebuilt.
func foldedIn(fd, prefix int, files []db.File, into string) []string {
	parents := make(map[string]bool)
	var dirs []string
	for _, f := range files {
		parents[path.Dir(f.Path)] = true
		if f.Type == tar.TypeDir {
			dirs = append(dirs, f.Path)
		}
	}
	slices.Sort(dirs)
	var out []string
	for _, d := range dirs {
		if !parents[d] || slices.ContainsFunc(out, func(o string) bool { return within(d, o) }) {
			continue
		}
		var st unix.Stat_t
		if isEmptyDir(fd, d) && inParent(prefix, prefixPath(d, into), func(dir int, base string) error {
			return unix.Fstatat(dir, base, &st, unix.AT_SYMLINK_NOFOLLOW)
		}) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			out = append(out, d)
		}
	}
	return out
}

// isEmptyDir reports whether name beneath fd is a directory holding nothing.
func isEmptyDir(fd int, name string) bool {
	dfd, err := openBeneath(fd, name, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return false
	}
	f := os.NewFile(uintptr(dfd), name)
	defer f.Close()
	_, err = f.Readdirnames(1)
	return errors.Is(err, io.EOF)
}

// rebuildPrefix returns the owners of every path of the prefix that the packages recs,
// whose files are lists, list (a folded directory's key standing for the paths beneath
// it), and a roll-forward of them all, which the start after the repair runs: what the
// prefix lacks is linked again. Where two packages list one file, the one whose inode the
// prefix holds is on top; else the first by name that replaces the others, else the first
// by name. The node_modules layout's generated paths follow from the records and reqs,
// the requests (generated), where no member has the path. The roll-forward's end is the
// install time of the packages undated (by key) and of those with a file it links again
// (unlinked): the others keep theirs.
func (r *Root) rebuildPrefix(recs []*db.Record, lists [][]db.File, undated []string, reqs map[string]repo.Requirement, left []db.OldTree) *db.PrefixChange {
	paths := make(map[string]db.Owners)
	byName := make(map[string]*db.Record, len(recs))
	pending := &db.Pending{Old: left}
	dst, src := r.prefixDirs(), newDirCache(r.fd[pkgs])
	defer dst.close()
	defer src.close()
	for i, p := range recs {
		byName[p.Key()] = p
		pending.New = append(pending.New, p.Key())
		for _, e := range fileEntries(p.Into, lists[i]) {
			o := paths[e.path]
			switch {
			case len(o.Names) == 0:
				o = db.Owners{Dir: e.dir, Names: []string{p.Key()}}
			case o.Dir && e.dir:
				i, _ := slices.BinarySearch(o.Names, p.Key())
				o.Names = slices.Insert(o.Names, i, p.Key())
			case o.Dir || e.dir:
				continue // a directory and a file: the first listed keeps the path
			case r.holds(&dst, &src, e, p.Key()) || replaces(p, byName[o.Names[0]]) && !r.holds(&dst, &src, e, o.Names[0]):
				o.Names = append([]string{p.Key()}, o.Names...)
			default:
				o.Names = append(o.Names, p.Key())
			}
			paths[e.path] = o
		}
	}
	gen := generated(byName, reqs)
	for _, p := range slices.Sorted(maps.Keys(gen)) {
		g, o := gen[p], paths[p]
		switch {
		case len(o.Names) == 0:
			paths[p] = g
		case g.Dir && o.Dir:
			o.Names = slices.Compact(slices.Sorted(slices.Values(append(o.Names, g.Names...))))
			paths[p] = o
		default:
			continue // a member has it
		}
		pending.Links = append(pending.Links, p)
	}
	dropFolded(paths, byName)
	stamp := append(slices.Clone(undated), r.unlinkedOwners(&dst, &src, recs, lists, paths)...)
	return &db.PrefixChange{Paths: paths, Pending: pending, Replace: true, Stamp: stamp}
}

// unlinkedOwners returns the keys of the packages of recs, whose files are lists, that are the
// top owner in paths of a file the prefix does not hold (holds): the roll-forward links it
// again, which changes its ctime.
func (r *Root) unlinkedOwners(dst, src *dirCache, recs []*db.Record, lists [][]db.File, paths map[string]db.Owners) []string {
	var keys []string
	for i, p := range recs {
		for _, e := range fileEntries(p.Into, lists[i]) {
			if o, ok := paths[e.path]; ok && !e.dir && !o.Dir && o.Link == "" && o.Names[0] == p.Key() && !r.holds(dst, src, e, p.Key()) && !r.wrapped(e.path) {
				keys = append(keys, p.Key())
				break
			}
		}
	}
	return keys
}

// dropFolded deletes from paths those strictly beneath a directory folded by a package of
// recs, by key, that are that package's alone: the directory's key stands for them.
func dropFolded(paths map[string]db.Owners, recs map[string]*db.Record) {
	owner := foldOwners(recs, nil)
	in := newFoldIndex(owner)
	for p, o := range paths {
		if d := in.above(p); d != "" && len(o.Names) == 1 && o.Names[0] == owner[d] {
			delete(paths, p)
		}
	}
}

// wrapped reports whether the prefix path p is a command in bin/ that one of pkg's wrapper
// scripts holds, in place of a member (binWant).
func (r *Root) wrapped(p string) bool {
	name, ok := strings.CutPrefix(p, "bin/")
	if !ok || strings.Contains(name, "/") {
		return false
	}
	got, err := r.readBin(name)
	return err == nil && strings.HasPrefix(got, wrapperHead)
}

// holds reports whether the prefix holds the member of e of the package name, a key (its
// inode).
func (r *Root) holds(dst, src *dirCache, e prefixEntry, name string) bool {
	var a, b unix.Stat_t
	dir, base, err := dst.parent(e.path)
	if err != nil || unix.Fstatat(dir, base, &a, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false
	}
	dir, base, err = src.parent(repo.FileName(name) + "/" + e.member)
	return err == nil && unix.Fstatat(dir, base, &b, unix.AT_SYMLINK_NOFOLLOW) == nil && a.Ino == b.Ino && a.Dev == b.Dev
}

// rebuilt is the name, in .pkg, of the database Rebuild makes before it takes the place of
// the root's: a repair cut short or failed leaves the root's database as it was.
const rebuilt = "db.rebuilt"

// buildDatabase makes the database .pkg/db.rebuilt holding recs, lists, reqs and repos,
// keeping aside (keepFile) one that a repair cut short left there; the packages undated
// are given the time the roll-forward of their links ends.
func (r *Root) buildDatabase(recs []*db.Record, lists [][]db.File, undated []string, reqs map[string]repo.Requirement, repos []db.Pin, left []db.OldTree) (err error) {
	if _, err := r.keepFile(rebuilt); err != nil {
		return err
	}
	d, err := r.openDBAt(rebuilt, db.Options{Timeout: r.o.LockTimeout, Hold: true})
	if err != nil {
		return err
	}
	defer func() { d.Release(); r.metaDir.Close(); r.metaDir = nil }()
	files := make([]*db.FileList, len(recs))
	for i := range recs {
		if files[i], err = d.WriteFiles(slices.Values(lists[i])); err != nil {
			return err
		}
	}
	if err := d.CommitRequested(recs, files, nil, reqs, r.rebuildPrefix(recs, lists, undated, reqs, left)); err != nil {
		return err
	}
	for _, rp := range repos {
		if err := d.PutRepo(rp); err != nil {
			return err
		}
	}
	return nil
}

// replaceDatabase puts .pkg/db.rebuilt in the place of the root's database, which it keeps
// as .pkg/db.damaged-N (keepFile), and returns where; "" where there was none. The two
// files are exchanged in one rename, so that a crash leaves one database or the other in
// place, never none; the sum files follow. Until they have, the new database is refused
// as older than the old sum or unchecked as newer: never trusted against a wrong sum.
func (r *Root) replaceDatabase() (string, error) {
	// The intents kept as names are void or pending against the old database alone: they go
	// before it, or the new one would take them for its own.
	if err := r.removeTree(place{meta, intentNames}); err != nil {
		return "", err
	}
	if err := r.exchangeFiles(rebuilt, "db"); err != nil {
		return "", err
	}
	if err := r.exchangeFiles(rebuilt+".sum", "db.sum"); err != nil {
		return "", err
	}
	if testHookReplaced != nil && testHookReplaced() {
		return "", errors.New("cut by a test")
	}
	kept, err := r.keepFile(rebuilt)
	if err != nil {
		return "", err
	}
	if err := unix.Fsync(r.fd[meta]); err != nil {
		return "", &os.PathError{Op: "fsync", Path: r.path(".pkg"), Err: err}
	}
	r.removeMarkers()
	return kept, nil
}

// removeMarkers removes the done markers beside the database (db.done-ID), which name
// stamps of the one replaced: the new database holds none, and being marked with this
// pkg's format, never sweeps them. Best effort and unsynced: a marker left is clutter
// that nothing reads.
func (r *Root) removeMarkers() {
	names, _ := r.names(place{meta, ""})
	for _, name := range names {
		if strings.HasPrefix(name, "db.done-") {
			unix.Unlinkat(r.fd[meta], name, 0)
		}
	}
}

// testHookReplaced, where a test sets it, runs once replaceDatabase exchanged the
// databases and their sums; returning true, it has replaceDatabase end there, as a crash
// would.
var testHookReplaced func() bool

// exchangeFiles exchanges the files from and to in .pkg, or renames from to to where to is
// missing, or removes to where from is.
func (r *Root) exchangeFiles(from, to string) error {
	fd := r.fd[meta]
	err := unix.Renameat2(fd, from, fd, to, unix.RENAME_EXCHANGE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ENOENT):
		err = unix.Renameat2(fd, from, fd, to, unix.RENAME_NOREPLACE)
		if errors.Is(err, unix.ENOENT) { // from is missing
			if err = unix.Unlinkat(fd, to, 0); errors.Is(err, unix.ENOENT) {
				return nil
			}
		}
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: r.path(".pkg", from), New: r.path(".pkg", to), Err: err}
	}
	return nil
}

// keepFile moves the database name in .pkg aside, to .pkg/db.damaged-N, dropping its sum
// file, and returns where; "" where there is no name (its sum file dropped all the same).
func (r *Root) keepFile(name string) (string, error) {
	fd := r.fd[meta]
	for n := 1; ; n++ {
		kept := "db.damaged-" + strconv.Itoa(n)
		err := unix.Renameat2(fd, name, fd, kept, unix.RENAME_NOREPLACE)
		switch {
		case errors.Is(err, unix.EEXIST):
			continue
		case errors.Is(err, unix.ENOENT): // a lost database's sum may remain, describing nothing
			if err := unix.Unlinkat(fd, name+".sum", 0); err != nil && !errors.Is(err, unix.ENOENT) {
				return "", &os.PathError{Op: "remove", Path: r.path(".pkg", name+".sum"), Err: err}
			}
			return "", nil
		case err != nil:
			return "", &os.LinkError{Op: "rename", Old: r.path(".pkg", name), New: r.path(".pkg", kept), Err: err}
		}
		if err := unix.Unlinkat(fd, name+".sum", 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return "", &os.PathError{Op: "remove", Path: r.path(".pkg", name+".sum"), Err: err}
		}
		return r.path(".pkg", kept), nil
	}
}

// oldRecords is what Rebuild reads of the database it replaces.
type oldRecords struct {
	pkgs  []db.Record
	repos []db.Pin
	reqs  map[string]repo.Requirement
	sound bool                 // not damaged, not even stale
	gone  map[string][]db.File // the files of the packages of pkgs whose trees are gone, by key
}

// salvageRecords reads the records of packages, repositories and what was asked for from
// the root's database, where it can be trusted that far (see Rebuild); nil where it
// cannot. A wait for another process's transaction that ended (a *db.BusyError, an
// interrupt) is err: the repair stops rather than go on without the records; so is a
// database of a newer format (*db.FormatError), which a newer pkg must repair.
func (r *Root) salvageRecords() (s *oldRecords, err error) {
	defer func() {
		if err == nil {
			return
		}
		s = nil
		if !errors.As(err, new(*db.BusyError)) && !errors.As(err, new(*db.FormatError)) && (r.o.Context == nil || r.o.Context.Err() == nil) {
			err = nil
		}
	}()
	o := db.Options{Timeout: r.o.LockTimeout, NoCreate: true}
	d, err := r.openDB(o)
	if err != nil {
		return nil, err
	}
	defer func() { r.metaDir.Close(); r.metaDir = nil }()
	s = &oldRecords{}
	s.pkgs, err = d.List()
	s.sound = err == nil
	if errors.Is(err, db.ErrStale) {
		r.metaDir.Close()
		o.Unchecked = true
		if d, err = r.openDB(o); err == nil {
			s.pkgs, err = d.List()
		}
	}
	if err == nil && !s.sound {
		s.gone = r.goneFiles(d, s.pkgs)
	}
	if err == nil {
		s.repos, err = d.Repos()
	}
	if err == nil {
		s.reqs, err = d.Requested()
	}
	return s, err
}

// goneFiles returns the file lists d records of the packages of pkgs whose trees are gone,
// by key: what they left in the prefix. Where d cannot give them, it returns none, and
// what they left stays where it is.
func (r *Root) goneFiles(d *db.DB, pkgs []db.Record) map[string][]db.File {
	var keys []string
	for _, g := range r.gone(pkgs, nil) {
		keys = append(keys, g.Key())
	}
	if len(keys) == 0 {
		return nil
	}
	recs, lists, err := d.Installed(keys...)
	if err != nil {
		return nil
	}
	out := make(map[string][]db.File, len(recs))
	for i := range recs {
		out[recs[i].Key()] = lists[i]
	}
	return out
}

// leftBy returns the old trees of the repair's roll-forward for the packages gone, of
// old's: trees that are not there (Tree ""), whose paths no package lists any more are
// kept in .pkg/saved, as what pkg cannot tell is its own.
func leftBy(old *oldRecords, gone []Gone) []db.OldTree {
	var trees []db.OldTree
	for _, g := range gone {
		key := g.Key()
		files, ok := old.gone[key]
		if !ok {
			continue
		}
		t := db.OldTree{Name: key, Version: g.Version, Kind: g.Kind, Files: oldPaths(files)}
		if i := slices.IndexFunc(old.pkgs, func(p db.Record) bool { return p.Key() == key }); i >= 0 {
			t.Into = old.pkgs[i].Into
		}
		trees = append(trees, t)
	}
	return trees
}

// laterRequests adds to old's requests, of inferred (unneeded's), those of the packages of
// recs that old has no record of: installed (or, an npm instance, upgraded) after the last
// commit a stale database holds, so that what it cannot tell was asked for is not taken
// for a dependency that autoremove removes.
func laterRequests(old *oldRecords, recs []*db.Record, inferred map[string]repo.Requirement) {
	known := make(map[string]bool, len(old.pkgs))
	for _, p := range old.pkgs {
		known[p.Key()] = true
	}
	if old.reqs == nil {
		old.reqs = make(map[string]repo.Requirement)
	}
	for _, p := range recs {
		if req, ok := inferred[p.Key()]; ok && !known[p.Key()] {
			old.reqs[p.Key()] = req
		}
	}
}

// recorded returns candidates with, first for each name, the archives its records in pkgs
// (the old database's: one, or an npm name's instances) name by sha256, described as
// those records say: a package from a local archive file, which no index describes, keeps
// its origin, commands, dependencies and the rest of its record, and an npm instance its
// kind, which its tree's name, NAME@VERSION, must match; a Bare record, an entry of
// candidates that describes its archive where there is one.
func recorded(pkgs []db.Record, candidates func(name string) ([]Candidate, error)) func(name string) ([]Candidate, error) {
	old := make(map[string][]db.Record)
	for _, p := range pkgs {
		old[p.Name] = append(old[p.Name], p)
	}
	return func(name string) ([]Candidate, error) {
		cs, err := candidates(name)
		if err != nil {
			return cs, err
		}
		var first []Candidate
		for _, p := range old[name] {
			for _, c := range cs {
				if c.Package.SHA256 == p.SHA256 && c.Package.Version == p.Version {
					pkg := db.Packages([]db.Record{p})[0]
					if p.Bare && !c.Bare { // an index describes what the record does not
						pkg = c.Package
					}
					first = append(first, Candidate{Package: pkg, Members: c.Members, Installed: p.Installed})
					break
				}
			}
		}
		return append(first, cs...), nil
	}
}

// unneeded returns, as asked for by name, linked (linkedNPM's npm instances), the packages
// of recs no other one depends on (repo.Dependencies), and each package of a cycle that
// nothing outside it needs, directly or through others, where none of it is linked (eslint
// and its plugin whose peer it is): a cycle has no package that nothing depends on, and
// what nothing asked for needs autoremove takes. Of a cycle with a link, the links alone
// tell what was asked for.
func unneeded(recs []*db.Record, linked map[string]repo.Requirement) map[string]repo.Requirement {
	pkgs := make([]db.Record, len(recs))
	for i, p := range recs {
		pkgs[i] = *p
	}
	deps := repo.Dependencies(db.Packages(pkgs))
	needed := make(map[string]bool)
	for _, names := range deps {
		for _, name := range names {
			needed[name] = true
		}
	}
	reaches := make(map[string]map[string]bool) // by key, the keys it leads to, itself included
	reachOf := func(key string) map[string]bool {
		m, ok := reaches[key]
		if !ok {
			m = reach(deps, map[string]bool{key: true}, key)
			reaches[key] = m
		}
		return m
	}
	reqs := maps.Clone(linked)
	if reqs == nil {
		reqs = make(map[string]repo.Requirement)
	}
	covered := make(map[string]bool) // what the packages asked for lead to
	for k := range linked {
		maps.Copy(covered, reachOf(k))
	}
	for _, p := range recs {
		if !needed[p.Key()] {
			reqs[p.Key()] = repo.Requirement{Name: p.Name}
			maps.Copy(covered, reachOf(p.Key()))
		}
	}
	keys := slices.Sorted(maps.Keys(deps))
	for _, k := range keys {
		if covered[k] {
			continue
		}
		from := reachOf(k)
		if slices.ContainsFunc(keys, func(o string) bool { return !from[o] && reachOf(o)[k] }) {
			continue // a package outside its cycle leads to it
		}
		for o := range from {
			if reachOf(o)[k] { // of its cycle
				reqs[o] = repo.Requirement{Name: recordOf(recs, o).Name}
			}
		}
		maps.Copy(covered, from)
	}
	return reqs
}

// linkedNPM returns, as asked for by name, the npm instances of recs that the root's
// lib/node_modules/NAME leads to: the layout makes that link for a requested instance
// alone (generated), so it tells what was asked for of a name that others need too.
func (r *Root) linkedNPM(recs []*db.Record) map[string]repo.Requirement {
	dst := r.prefixDirs()
	defer dst.close()
	reqs := make(map[string]repo.Requirement)
	for _, p := range recs {
		if p.Kind != repo.KindNPM {
			continue
		}
		link := nodeModules + "/" + p.Name
		dir, base, err := dst.parent(link)
		if err == nil && readlinkat(dir, base) == relTo(path.Dir(link), npmInto(p.Name, p.Version)) {
			reqs[p.Key()] = repo.Requirement{Name: p.Name}
		}
	}
	return reqs
}

// recordOf returns the record of recs whose key is key.
func recordOf(recs []*db.Record, key string) *db.Record {
	return recs[slices.IndexFunc(recs, func(p *db.Record) bool { return p.Key() == key })]
}

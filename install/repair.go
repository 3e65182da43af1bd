package install

import (
	"context"
	"errors"
	"os"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/repo"
	"pkg/tarutil"
)

// A Candidate is what a tree in pkgs/ may hold: a package and the members of its archive,
// with their digests, as a cache entry has them.
type Candidate struct {
	Package repo.Package
	Members []tarutil.Member
}

// Rebuilt says what Rebuild did.
type Rebuilt struct {
	Recorded []string // "NAME VERSION" of each tree recorded again
	Unknown  []string // the trees in pkgs/ no candidate matched: kept as they are, unrecorded
	Kept     string   // where the database it replaced is, "" if there was none
	// Salvaged says whether the records of repositories (their pins) and of what the user
	// asked for came from the database replaced; where not, every package nothing
	// recorded depends on is taken as asked for, and no repository is pinned.
	Salvaged bool
	Repos    int // records of repositories salvaged
}

// Rebuild replaces the root's database, which may be damaged, by one made from the trees
// in pkgs/: each is recorded as the first of candidates(name) whose member list it has
// the shape of (every path, of its type and size), and a tree none matches is kept,
// unrecorded. It deletes no tree of pkgs/, keeps the database it replaces beside the new
// one, takes the root's lock as Open does, and then makes bin/ agree with the records.
// The records of repositories and of what was asked for are read from the old database
// where it is only older than its last commit (db.ErrStale) or not damaged at all: its
// other pages are not read, as bbolt cannot read every damage safely.
func Rebuild(ctx context.Context, dir string, o Options, candidates func(name string) ([]Candidate, error)) (_ *Rebuilt, err error) {
	dir, fds, lock, err := openLock(dir)
	if err != nil {
		return nil, err
	}
	o.Context = ctx
	r := &Root{dir: dir, fd: fds, lock: lock, o: o, umask: umask()}
	if err := waitLock(ctx, lock, dir, o); err != nil {
		r.closeParts()
		return nil, err
	}
	defer func() {
		if r.db == nil {
			r.closeParts()
			return
		}
		err = errors.Join(err, r.Close())
	}()
	out := &Rebuilt{}
	recs, lists, err := r.match(candidates, out)
	if err != nil {
		return nil, err
	}
	repos, reqs, salvaged, err := r.salvageRecords()
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if unix.Fstatat(r.fd[meta], "db", &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		if out.Kept, err = r.keepDatabase(); err != nil {
			return nil, err
		}
	}
	if r.db, err = r.openDB(db.Options{Timeout: o.LockTimeout, Hold: true}); err != nil {
		return nil, err
	}
	files := make([]*db.FileList, len(recs))
	for i := range recs {
		if files[i], err = r.db.WriteFiles(slices.Values(lists[i])); err != nil {
			return nil, err
		}
	}
	if !salvaged {
		reqs = unneeded(recs)
	}
	if err := r.db.CommitRequested(recs, files, nil, reqs); err != nil {
		return nil, err
	}
	for _, rp := range repos {
		if err := r.db.PutRepo(rp); err != nil {
			return nil, err
		}
	}
	out.Salvaged, out.Repos = salvaged, len(repos)
	if err := r.reconcile(); err != nil {
		return out, err
	}
	if err := r.syncBins(true); err != nil {
		return out, &LinksError{Dir: r.path("bin"), Err: err}
	}
	return out, nil
}

// match finds the record of each tree in pkgs/ among its candidates.
func (r *Root) match(candidates func(name string) ([]Candidate, error), out *Rebuilt) ([]*db.Package, [][]db.File, error) {
	names, err := r.names(place{pkgs, ""})
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(names)
	var (
		recs  []*db.Package
		lists [][]db.File
	)
	for _, name := range names {
		fd, err := r.open(place{pkgs, name}, unix.O_PATH|unix.O_DIRECTORY)
		if err != nil { // not a directory: not a tree of pkg's
			continue
		}
		cands, err := candidates(name)
		if err == nil {
			rec, files, ok := matchTree(fd, name, cands)
			if !ok {
				out.Unknown = append(out.Unknown, r.pathOf(place{pkgs, name}))
			} else {
				recs, lists = append(recs, rec), append(lists, files)
				out.Recorded = append(out.Recorded, rec.Name+" "+rec.Version)
			}
		}
		unix.Close(fd)
		if err != nil {
			return nil, nil, err
		}
	}
	return recs, lists, nil
}

// matchTree returns the record of the tree pkgs/name, open at fd, as the first of cands it
// has the shape of would have made it, installed when the tree was renamed into pkgs/ (its
// ctime).
func matchTree(fd int, name string, cands []Candidate) (*db.Package, []db.File, bool) {
	for _, c := range cands {
		p := c.Package
		if p.Name != name || tarutil.Validate(c.Members) != nil {
			continue
		}
		order := byName(c.Members)
		members := executable(p.Bin, slices.Clone(c.Members), order)
		files := slices.Collect(fileRecords(members, order))
		if !hasShape(fd, files) {
			continue
		}
		res := summarize(p, members)
		var st unix.Stat_t
		installed := time.Now()
		if unix.Fstat(fd, &st) == nil {
			installed = time.Unix(st.Ctim.Unix())
		}
		return &db.Package{Name: p.Name, Version: p.Version, SHA256: p.SHA256, Depends: p.Depends, Bin: p.Bin, Lib: p.Lib,
			Summary: p.Summary, Files: res.Files, Size: res.Bytes, Installed: installed.UTC()}, files, true
	}
	return nil, nil, false
}

// keepDatabase moves the root's database aside, to .pkg/db.damaged-N, with its sum file.
func (r *Root) keepDatabase() (string, error) {
	fd := r.fd[meta]
	for n := 1; ; n++ {
		kept := "db.damaged-" + strconv.Itoa(n)
		err := unix.Renameat2(fd, "db", fd, kept, unix.RENAME_NOREPLACE)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return "", &os.LinkError{Op: "rename", Old: r.path(".pkg", "db"), New: r.path(".pkg", kept), Err: err}
		}
		if err := unix.Unlinkat(fd, "db.sum", 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return "", &os.PathError{Op: "remove", Path: r.path(".pkg", "db.sum"), Err: err}
		}
		if err := unix.Fsync(fd); err != nil {
			return "", &os.PathError{Op: "fsync", Path: r.path(".pkg"), Err: err}
		}
		return r.path(".pkg", kept), nil
	}
}

// salvageRecords reads the records of repositories and of what was asked for from the
// root's database, where it can be trusted that far (see Rebuild); ok is false where it
// cannot. A wait for another process's transaction that ended (a *db.BusyError, an
// interrupt) is err: the repair stops rather than go on without the records.
func (r *Root) salvageRecords() (repos []db.Repo, reqs map[string]string, ok bool, err error) {
	defer func() {
		if err == nil {
			return
		}
		repos, reqs, ok = nil, nil, false
		if !errors.As(err, new(*db.BusyError)) && (r.o.Context == nil || r.o.Context.Err() == nil) {
			err = nil
		}
	}()
	o := db.Options{Timeout: r.o.LockTimeout, NoCreate: true}
	d, err := r.openDB(o)
	if err != nil {
		return nil, nil, false, err
	}
	defer func() { r.metaDir.Close(); r.metaDir = nil }()
	_, err = d.List()
	if errors.Is(err, db.ErrStale) {
		r.metaDir.Close()
		o.Unchecked = true
		d, err = r.openDB(o)
	}
	if err == nil {
		repos, err = d.Repos()
	}
	if err == nil {
		reqs, err = d.Requested()
	}
	return repos, reqs, err == nil, err
}

// unneeded returns, as asked for by name, the packages of recs no other one depends on.
func unneeded(recs []*db.Package) map[string]string {
	needed := make(map[string]bool)
	for _, p := range recs {
		for _, dep := range p.Depends {
			if req, err := repo.ParseRequirement(dep); err == nil {
				needed[req.Name] = true
			}
		}
	}
	reqs := make(map[string]string)
	for _, p := range recs {
		if !needed[p.Name] {
			reqs[p.Name] = p.Name
		}
	}
	return reqs
}

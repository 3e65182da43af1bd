package session

import (
	"context"
	"slices"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/repo"
	"pkg/txn"
)

// Op is what a Request asks of the root.
type Op int

const (
	Install    Op = iota // Requires installed, with their dependencies
	Upgrade              // the installed packages Requires names (all, with none) moved up; one with a constraint is held there from now on
	Reinstall            // the installed packages Names installed again, same version and archive
	Remove               // the installed packages Names removed
	Autoremove           // the packages no package asked for needs removed
	Sync                 // the root made to hold exactly the packages of Lock
)

// Request is a change a command asks of the root, or (Session.Lock) the lockfile to write.
type Request struct {
	Op       Op
	Requires []repo.Requirement // Install, Upgrade, and what Session.Lock locks
	Names    []string           // Reinstall, Remove
	// Lock is the lockfile at LockPath that Sync installs (read by repo.ReadLockFor) or that
	// Session.Lock writes again (nil: none yet); with LockRepos, its repositories are
	// those in effect, ahead of the configured ones.
	Lock      *repo.Lock
	LockPath  string
	LockRepos bool
	KeepExtra bool     // Sync: keep the installed packages Lock does not list, and the requests of those it has as dependencies alone
	Frozen    bool     // Sync: refuse unless the indexes in effect still resolve Lock's requirements to its packages
	Platforms []string // Session.Lock: the platforms to lock for
}

// Plan returns the plan of r, made from the root's records and, but for a removal, the
// indexes in effect (a sync's lockfile checked first: its signatures, and with Frozen its
// resolution). Unless a dry run, the plan holds the root's lock from here on, the records
// read again under it: apply it (txn.Plan.Apply) or Close it. A dry run reads the root
// without its lock and returns a plan checked as the change would check it before it
// downloads (txn.Plan.Check; offline, that the cache holds what it needs), to show: Apply
// refuses it. It refuses, as the change does, a root this process cannot change
// (install.Changeable: ErrReadOnly, ErrNotYours).
func (s *Session) Plan(ctx context.Context, r Request) (*txn.Plan, error) {
	switch r.Op {
	case Remove, Autoremove:
		return s.removal(ctx, r)
	case Sync:
		return s.sync(ctx, r)
	}
	return s.change(ctx, r)
}

// planner makes the plan of an install, upgrade or reinstall.
type planner struct {
	r         Request
	requested map[string]repo.Requirement // the root's requests (db.DB.Requested)
}

// records reads the root's records, and for an upgrade refuses names not installed; a
// reinstall's names become the keys of the packages they name (db.Keys).
func (pl *planner) records(d *db.DB) (recs []db.Record, err error) {
	recs, pl.requested, err = d.State()
	switch {
	case err != nil:
	case pl.r.Op == Upgrade:
		err = needNames("upgrade", upgradeNames(pl.r.Requires), recs)
	case pl.r.Op == Reinstall:
		pl.r.Names, err = db.Keys("reinstall", pl.r.Names, recs)
	}
	return recs, err
}

// needNames refuses names, the arguments of op that name packages by name (an upgrade's,
// of every version installed), that installed lacks.
func needNames(op string, names []string, installed []db.Record) error {
	if err := repo.CheckNames(op, names); err != nil {
		return err
	}
	for _, n := range names {
		if !slices.ContainsFunc(installed, func(r db.Record) bool { return r.Name == n }) {
			return db.NotInstalled(op, n, installed)
		}
	}
	return nil
}

func (pl *planner) plan(dir string, ix *txn.Catalog, recs []db.Record, f *txn.Fetcher) (*txn.Plan, error) {
	a := txn.Install
	switch pl.r.Op {
	case Reinstall:
		a = txn.Reinstall
	case Upgrade:
		a = txn.Upgrade
	}
	return txn.NewPlan(txn.Spec{Action: a, Requires: pl.r.Requires, Names: pl.r.Names, Root: dir, Records: recs, Requested: pl.requested, Catalog: ix, Cache: f.Cache})
}

// requests returns what the commit records as asked for: an install's requirements, an
// upgrade's new holds.
func (pl *planner) requests() []repo.Requirement {
	switch pl.r.Op {
	case Install:
		return pl.r.Requires
	case Upgrade:
		return newHolds(pl.r.Requires, pl.requested)
	}
	return nil
}

// change is Plan of an install, upgrade or reinstall: the indexes read, the root's
// records read (again under the root's lock, as another command may have changed them),
// the repositories of local archive files added, given and installed
// (txn.Catalog.WithLocal), the plan made.
func (s *Session) change(ctx context.Context, r Request) (*txn.Plan, error) {
	pl := &planner{r: r}
	if r.Op == Upgrade { // a typo needs no index
		if err := s.peekRoot(func(d *db.DB) error { _, err := pl.records(d); return err }); err != nil {
			return nil, err
		}
	}
	f, ix, err := s.openFetcher(ctx, s.DryRun, &r) // the root's accepted index bounds a rollback
	if err != nil {
		return nil, err
	}
	if s.DryRun {
		if err := install.Changeable(s.Root); err != nil {
			return nil, err
		}
		var rs []db.Record
		if err := s.peekRoot(func(d *db.DB) (err error) { rs, err = pl.records(d); return err }); err != nil {
			return nil, err
		}
		if ix, err = s.catalog(pl, f, ix, rs); err != nil {
			return nil, err
		}
		dir, err := s.rootDir()
		if err != nil {
			return nil, err
		}
		p, err := pl.plan(dir, ix, rs, f)
		if err == nil {
			err = s.checkDry(p, f.Cache)
		}
		return p, err
	}
	root, f, ix, err := s.openRootFor(ctx, f, ix)
	if err != nil {
		return nil, err
	}
	p, err := s.planIn(root, f, ix, pl)
	if err != nil {
		root.Abandon()
		return nil, err
	}
	p.Bind(s.target(root, f, pl.requests()))
	return p, nil
}

// planIn makes pl's plan in root, held.
func (s *Session) planIn(root *install.Root, f *txn.Fetcher, ix *txn.Catalog, pl *planner) (*txn.Plan, error) {
	rs, err := pl.records(root.DB())
	if err != nil {
		return nil, err
	}
	if ix, err = s.catalog(pl, f, ix, rs); err != nil {
		return nil, err
	}
	return pl.plan(root.Dir(), ix, rs, f)
}

// repoless reports whether the change r can be made with no repository in effect: it
// installs local archive files, given or installed, or, offline, it reinstalls, which
// takes the archives the records name from the cache.
func (s *Session) repoless(r Request) bool {
	return len(s.Local) > 0 || r.Op == Reinstall && s.Offline || s.localInstalled()
}

// catalog returns ix, the indexes in effect, with the repositories of the local archive
// files given and installed (withLocal); where none is in effect (nil), or they do not
// offer the installed archive of a package it names, an offline reinstall takes the
// installed packages rs as recorded (recorded), whose archives only the cache has.
func (s *Session) catalog(pl *planner, f *txn.Fetcher, ix *txn.Catalog, rs []db.Record) (*txn.Catalog, error) {
	if pl.r.Op == Reinstall && s.Offline && (ix == nil || !offersAll(ix.Index, rs, pl.r.Names)) {
		var err error
		if ix, err = recorded(rs); err != nil {
			return nil, err
		}
	}
	return s.withLocal(f, ix, rs)
}

// offersAll reports whether ix offers the installed archive of each package keys names,
// of those rs records but for local archive files (withLocal's).
func offersAll(ix *repo.Index, rs []db.Record, keys []string) bool {
	for _, k := range keys {
		r, ok := db.Find(rs, k)
		if ok && r.Origin == "" && !slices.ContainsFunc(ix.Packages, func(p repo.Package) bool {
			return p.Name == r.Name && p.Version == r.Version && p.SHA256 == r.SHA256
		}) {
			return false
		}
	}
	return true
}

// recorded returns a catalog of no repository offering the installed packages rs as
// recorded: each record names its archive by sha256, which an offline fetcher takes
// from the cache and, as the catalog has no source, never downloads. Those installed
// from local archive files are withLocal's; nil where none is left.
func recorded(rs []db.Record) (*txn.Catalog, error) {
	var pkgs []repo.Package
	for i, p := range db.Packages(rs) {
		if p.Origin == "" {
			p.Archive = "sha256/" + p.SHA256 // of no repository: a name the index's check takes
			p.InstalledSize, p.Files = rs[i].Size, rs[i].Files
			pkgs = append(pkgs, p)
		}
	}
	if len(pkgs) == 0 {
		return nil, nil
	}
	ix, err := repo.NewIndex(pkgs...)
	if err != nil {
		return nil, err
	}
	return &txn.Catalog{Index: ix}, nil
}

// target is where a plan is applied: root, held, and f, with what the commit records as
// asked for and what is said once per root.
func (s *Session) target(root *install.Root, f *txn.Fetcher, requests []repo.Requirement) txn.Target {
	return txn.Target{Root: root, Fetcher: f, Requests: requests, Notices: s.notices, Cache: s.Cache, Path: s.Path, Quiet: s.Quiet}
}

// checkDry refuses the plan p of a dry run as the change would before it downloads
// (txn.Plan.Check), reading the root without its lock (checkIn).
func (s *Session) checkDry(p *txn.Plan, cache *fetch.Cache) error {
	root, err := s.readOnlyRoot()
	if err != nil {
		return err
	}
	if root != nil {
		defer root.Close()
	}
	return s.checkIn(p, root, cache)
}

// checkIn refuses the plan p of a dry run as the change would in root, read without its
// lock (nil: none yet), and as its use of cache (nil: none) would: an entry of another size
// than declared, and, offline, an archive the cache lacks.
func (s *Session) checkIn(p *txn.Plan, root *install.Root, cache *fetch.Cache) error {
	return p.Check(root, cache, s.Offline)
}

// removal is Plan of a remove or an autoremove, with the indexes in effect where the
// root records a package Bare (describing).
func (s *Session) removal(ctx context.Context, r Request) (*txn.Plan, error) {
	spec := txn.Spec{Action: txn.Remove, Names: r.Names, Unneeded: r.Op == Autoremove}
	var err error
	if spec.Catalog, err = s.describing(ctx); err != nil {
		return nil, err
	}
	plan := func(dir string, d *db.DB) (p *txn.Plan, err error) {
		if d != nil { // nil: no root
			spec.Records, spec.Requested, err = d.State()
		}
		if err == nil && !spec.Unneeded {
			spec.Names, err = db.Keys("remove", r.Names, spec.Records)
		}
		if err == nil {
			spec.Root = dir
			p, err = txn.NewPlan(spec)
		}
		return p, err
	}
	if s.DryRun {
		if err := install.Changeable(s.Root); err != nil {
			return nil, err
		}
		dir, err := s.rootDir()
		if err != nil {
			return nil, err
		}
		var p *txn.Plan
		if err := s.peekRoot(func(d *db.DB) (err error) { p, err = plan(dir, d); return err }); err != nil {
			return nil, err
		}
		if p == nil {
			if p, err = plan(dir, nil); err != nil {
				return nil, err
			}
		}
		return p, s.checkDry(p, nil)
	}
	root, err := s.openRoot(ctx)
	if err != nil {
		return nil, err
	}
	p, err := plan(root.Dir(), root.DB())
	if err != nil {
		root.Abandon()
		return nil, err
	}
	p.Bind(s.target(root, nil, nil))
	return p, nil
}

// describing returns the indexes in effect (offline, the cache's copies) where the root
// records a package Bare (db.Record.Bare), whose relations only its entry tells a removal
// (txn.Spec.Catalog); nil where it records none, or no repository is in effect. It reads
// them before the root's lock is taken, as a change does.
func (s *Session) describing(ctx context.Context) (*txn.Catalog, error) {
	bare := false
	err := s.peekRoot(func(d *db.DB) error {
		recs, err := d.List()
		bare = slices.ContainsFunc(recs, func(r db.Record) bool { return r.Bare })
		return err
	})
	if err != nil || !bare {
		return nil, err
	}
	rs, err := s.Repositories()
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	_, ix, err := s.openFetcher(ctx, true, nil)
	return ix, err
}

// upgradeNames returns the names an upgrade's requirements give, each once.
func upgradeNames(reqs []repo.Requirement) []string {
	var names []string
	for _, r := range reqs {
		if !slices.Contains(names, r.Name) {
			names = append(names, r.Name)
		}
	}
	return names
}

// newHolds returns the requirements of reqs with a constraint, each keeping the repository
// its package was requested from (requested, db.Requested): the requests to record.
func newHolds(reqs []repo.Requirement, requested map[string]repo.Requirement) []repo.Requirement {
	var holds []repo.Requirement
	for _, r := range reqs {
		if len(r.Constraints) == 0 {
			continue
		}
		for _, was := range requested { // by key: an npm name's instances have one each
			if was.Name == r.Name && was.Repo != "" {
				r.Repo = was.Repo
			}
		}
		holds = append(holds, r)
	}
	return holds
}

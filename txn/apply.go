package txn

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"syscall"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/pin"
	"pkg/repo"
)

// Outcome is what Apply did: the data a command words for the user.
type Outcome struct {
	Root    string            // the root's directory
	Results []*install.Result // of the packages installed, in the plan's order
	Along   map[string]string // of Removed, by key, those taken along as others' dependents, with why (removePlan)
	Removed []db.Record       // the records of the packages removed, as they were, but the npm instances another version replaced (its Result's Previous)
	Before  []db.Record       // the root's records before the change
	Origins map[string]string // the local archive file of each package installed from one, by name
	Again   bool              // a reinstall: the installed packages were put back as they were, beside the dependencies they lacked (Result.Previous "")
	Locked  bool              // the archives were a lockfile's (a sync)
	// Committed says the change is in the root, its bin/ links wrong (*install.LinksError)
	// or not; Salvaged is what the commit kept of the trees it replaced or removed.
	Committed bool
	Salvaged  []install.Salvage
	// Commands are the packages kept across the change whose commands changed, and
	// Unneeded those that another package depended on before and none does now, which the
	// user did not ask for, in this command or before, and that autoremove takes (nothing
	// removes them by itself); Stranded those that only Unneeded need now, directly or
	// through one another, which autoremove takes with them. Both read a Bare record's
	// relations as the plan did (described).
	Commands []CommandChange
	Unneeded []db.Record
	Stranded []db.Record
	// Unshared says the cache could not record the root as one it serves, so that a prune
	// from another root may remove what this one installed from; Unsettled that entries
	// were left unsynced, which costs a full check at their first use after a reboot.
	Unshared, Unsettled error
	// Copied is the first package whose data were copied rather than sharing blocks with
	// the cache at Cache, and OffPath the root's bin/, holding commands, where it is not on
	// Target.Path: each set only where the root has not been told so (Target.Notices).
	Copied  *install.Result
	Cache   string
	OffPath string
}

// CommandChange is a package kept across a change whose commands changed.
type CommandChange struct {
	Name, Version string
	Gone, Added   []string // command names
}

// Target is what Apply makes a plan in, given by the one who took the root's lock: from
// Bind on, the plan owns the root.
type Target struct {
	Root     *install.Root      // held (install.Open); Apply or Close gives it up
	Fetcher  *Fetcher           // of the plan's packages; nil for a plan that installs none
	Requests []repo.Requirement // recorded by the commit as asked for (install.Root.Request)
	// Notices, if not nil, holds what the root was told once (install.Notices): Apply sets
	// Outcome.Copied and OffPath only where it has not been, and records them as told
	// unless Quiet (the command shows no notes). Cache and Path are the cache's directory
	// and the PATH that bin/ is looked for on.
	Notices     *install.Notices
	Cache, Path string
	Quiet       bool

	offPath string // the bin/ off Path whose note the commit records (foreseePath)
	// copied is the Result tell says how the data were copied of, if any, and copySaid
	// the state the commit records, "" for none or the condition's end (foreseeCopy).
	copied   *install.Result
	copySaid string
}

// ErrNotBound is Apply of a plan that holds no root: a dry run's, one not bound, or one
// already applied or closed.
var ErrNotBound = errors.New("txn: plan holds no root")

// errNoFetcher is Apply of a plan that installs packages bound with no Fetcher.
var errNoFetcher = errors.New("txn: plan installs packages and has no fetcher")

// Bind makes t where p is applied; p owns t.Root from then on.
func (p *Plan) Bind(t Target) { p.target = &t }

// Close gives up the root p holds, unchanged, for a plan not applied: a root its Open
// made is taken away again (install.Root.Abandon). It may be called more than once, and
// after Apply.
func (p *Plan) Close() error {
	if p.target == nil {
		return nil
	}
	t := p.target
	p.target = nil
	return t.Root.Abandon()
}

// Apply makes the change p plans in the root it holds (Bind), which must be locked as it
// was when p was made, and gives the root up, whether the change succeeds or fails (a
// first install that failed leaves no root: install.Root.Abandon). A plan that changes
// nothing and records no request leaves the root as it was, with an empty Outcome.
// It records that the root accepted the index p comes from (pin.Accept), then fetches the
// packages through the fetcher, stages each as soon as it is in the cache, and once all
// are staged commits them and the removals together: a download that fails changes
// nothing in the root, and the root never holds a package without the dependencies
// installed with it. On success, the cache records the root as one it serves and makes
// the entries installed durable. A *install.LinksError comes with the Outcome of a change
// committed all the same.
func (p *Plan) Apply(ctx context.Context) (out *Outcome, err error) {
	t := p.target
	if t == nil {
		return nil, ErrNotBound
	}
	p.target = nil
	defer func() {
		if err != nil {
			t.Root.Abandon()
		} else if cerr := t.Root.Close(); cerr != nil {
			err = cerr
		}
	}()
	if len(p.Changes) == 0 && len(t.Requests) == 0 && len(p.asks) == 0 && len(p.unasks) == 0 {
		return &Outcome{Root: t.Root.Dir(), Before: p.before}, ctx.Err()
	}
	if len(t.Requests) > 0 {
		t.Root.Request(t.Requests)
	}
	t.foreseePath()
	if len(p.asks) > 0 {
		t.Root.RequestAt(p.asks)
	}
	if len(p.unasks) > 0 {
		t.Root.Unrequest(p.unasks)
	}
	if f := t.Fetcher; f != nil && f.Observer != nil {
		err = f.Observer.During(p.install, func() error { out, err = p.apply(ctx, t, f); return err })
	} else {
		out, err = p.apply(ctx, t, t.Fetcher)
	}
	if out == nil {
		return nil, err
	}
	out.Root, out.Locked, out.Salvaged, out.Cache = t.Root.Dir(), p.locked, t.Root.Salvaged(), t.Cache
	out.Committed = err == nil || errors.As(err, new(*install.LinksError))
	t.tell(out)
	return out, err
}

// tell sets what out has to say once per root (Target.Notices): how the data were copied,
// for the first package that copied them (one that shared blocks ends the condition), and,
// once a change that fetched committed, a bin/ that is not on Path; of a change not
// committed, only what its commit recorded all the same (recorded).
func (t *Target) tell(out *Outcome) {
	n := t.Notices
	if n == nil {
		return
	}
	if out.Committed || t.recorded("copy", t.copySaid) {
		out.Copied = t.copied // the commit recorded it (foreseeCopy)
	}
	if out.Committed && t.Fetcher != nil {
		bin := t.Root.BinOffPath(t.Path)
		switch {
		case bin == "":
			n.End("path")
		case n.Due("path", bin):
			out.OffPath = bin
			t.said(n, "path", bin)
		case bin == t.offPath: // due before the change, recorded by its commit (foreseePath)
			out.OffPath = bin
		}
	} else if t.recorded("path", t.offPath) {
		out.OffPath = t.offPath
	}
}

// recorded reports whether a change not committed had its commit record, all the same,
// that the user was told of key in state (foreseePath, foreseeCopy): a commit whose
// error comes after its transaction is in the file (a new root's seal whose sync failed,
// install.Root.Apply then keeping the change), where a note not said now never would be.
func (t *Target) recorded(key, state string) bool {
	return state != "" && t.Notices.Told(key) == state
}

// foreseePath has the commit record the note tell says of a bin/ not on Path, where it is
// due and bin/ holds commands once the change is done (install.Root.SayOffPath): said
// after a change that fetched committed, it would otherwise be recorded by a transaction
// of its own, which costs a new root's first install with commands, the common case, two
// more fdatasyncs.
func (t *Target) foreseePath() {
	n := t.Notices
	if n == nil || t.Quiet || t.Fetcher == nil {
		return
	}
	t.offPath = t.Root.SayOffPath(t.Path, "path", func(bin string) bool { return n.Due("path", bin) })
}

// foreseeCopy has the commit record what tell says of how the data of the packages staged
// were copied (copyNote): a root whose installs copy (a cache on another filesystem, a
// filesystem that cannot share blocks, as ext4) would otherwise record it in a
// transaction of its own, two more fdatasyncs, at its first install.
func (t *Target) foreseeCopy(staged []*install.Staged) {
	n := t.Notices
	if n == nil {
		return
	}
	results := make([]*install.Result, len(staged))
	for i, s := range staged {
		results[i] = s.Result()
	}
	told := n.Told("copy")
	copied, state := copyNote(results, t.Cache, told, t.Quiet)
	if state != told {
		t.Root.SayWithCommit("copy", state)
		t.copySaid = state
	}
	t.copied = copied
}

// copyNote returns what is said of how the data of results were copied, where the root
// records that it was told state told (Notices): the first Result that copied, where its
// condition (copyState) is not the state left by then (told, or its end where an earlier
// Result shared blocks), and the state to record once it is said.
// A Result that shared blocks ends the condition, so that it is said again should it
// return; a quiet command, which shows no notes, has it said and records nothing of it.
func copyNote(results []*install.Result, cache, told string, quiet bool) (copied *install.Result, state string) {
	state, seen := told, false
	for _, res := range results {
		switch {
		case res.Method == install.Clone && res.Fallback == nil:
			state = ""
		case res.Fallback != nil && !seen:
			seen = true
			if now := copyState(res, cache); now != state {
				copied = res
				if !quiet {
					state = now
				}
			}
		}
	}
	return copied, state
}

// said records that the user was told of key in state, unless the command is quiet: a
// note it leaves out is still due.
func (t *Target) said(n *install.Notices, key, state string) {
	if !t.Quiet {
		n.Said(key, state)
	}
}

// copyState is the condition of a root whose install copied res's data: how, and why:
// the cache (at cache) on another filesystem, a filesystem that cannot share blocks, or
// another error.
func copyState(res *install.Result, cache string) string {
	why := res.Fallback.Error()
	switch {
	case errors.Is(res.Fallback, syscall.EXDEV):
		why = "other filesystem than the cache " + cache
	case errors.Is(res.Fallback, syscall.EOPNOTSUPP):
		why = "no shared blocks"
	}
	return string(res.Method) + ": " + why
}

// apply is Apply's change in t's root, through f.
func (p *Plan) apply(ctx context.Context, t *Target, f *Fetcher) (*Outcome, error) {
	root := t.Root
	if err := ctx.Err(); err != nil { // interrupted while waiting for the root
		return nil, err
	}
	if err := p.check(root); err != nil {
		return nil, err
	}
	for _, res := range p.indexes {
		if err := pin.Accept(root.DB(), res); err != nil {
			return nil, err
		}
	}
	staged, err := p.stage(ctx, root, f)
	if err != nil {
		return nil, err
	}
	t.foreseeCopy(staged)
	out := &Outcome{Before: p.before, Again: p.again, Origins: map[string]string{}, Along: p.alongWhy()}
	for _, pk := range p.install {
		if pk.Origin != "" {
			out.Origins[pk.Name] = pk.Origin
		}
	}
	results, err := root.Apply(ctx, staged, p.remove)
	out.Results = results
	var links *install.LinksError // committed all the same
	if err != nil && !errors.As(err, &links) {
		return out, err
	}
	replaced := p.replacedInstances() // an npm upgrade is an instance removed and another installed
	for i, res := range results {
		if old, ok := replaced[p.install[i].Key()]; ok && res != nil {
			res.Previous = old.Version
		}
	}
	for _, key := range p.remove {
		rec, ok := db.Find(p.before, key)
		if !ok {
			rec.Name = key
		}
		if !slices.ContainsFunc(slices.Collect(maps.Values(replaced)), func(r db.Record) bool { return r.Key() == key }) {
			out.Removed = append(out.Removed, rec)
		}
	}
	after, lerr := root.DB().List()
	asked, rerr := root.DB().Requested()
	if lerr == nil && rerr == nil { // by the relations the plan read, as autoremove would (unneeded)
		before, _ := described(p.in, p.before)
		after, unknown := described(p.in, after)
		// What autoremove takes, a graph of the root: made only where a package lost its
		// last dependent, not on most changes (1 ms for 229 npm packages).
		auto := sync.OnceValue(func() []string {
			remove, _, _ := unneeded(after, unknown, asked)
			return remove
		})
		out.Commands, out.Unneeded = changed(before, after, func(key string) bool {
			_, ok := asked[key] // autoremove keeps it: a request the change kept
			return ok || p.wanted(key) || !slices.Contains(auto(), key)
		})
		if len(out.Unneeded) > 0 {
			out.Stranded = stranded(after, out.Unneeded, auto())
		}
	}
	if len(p.install) > 0 {
		// The root recorded in the cache, so that a prune from another root keeps its
		// entries, while they are settled: each waits for the disk, and neither needs the other.
		var wg sync.WaitGroup
		wg.Go(func() { out.Unshared = f.Cache.AddRoot(root.Dir()) })
		shas := make([]string, len(p.install))
		for i, pk := range p.install {
			shas[i] = pk.SHA256
		}
		// The fetches did not wait for the disk; now that the packages are installed, their
		// cache entries are worth making durable, so that a reboot (or a cache restored on
		// another machine) does not mean hashing all of their data again.
		out.Unsettled = f.Cache.Settle(shas...)
		wg.Wait()
	}
	if links != nil {
		return out, links
	}
	return out, nil
}

// stage fetches the packages p installs through f (offline, only if the cache holds them
// all) and stages each in root as soon as it is in the cache; on an error it discards
// what it staged. A reinstall has the cache check each entry whole (fetch.Cache.Whole),
// as it is asked for where an installed file differs, which damage to the entry that
// the check of an ordinary use samples past would explain.
func (p *Plan) stage(ctx context.Context, root *install.Root, f *Fetcher) ([]*install.Staged, error) {
	staged := make([]*install.Staged, len(p.install))
	if len(p.install) == 0 {
		return staged, nil
	}
	if f == nil {
		return nil, errNoFetcher
	}
	if f.Offline { // Fetch's check, saying whether the lockfile gave the sha256s
		if err := checkCached(f.Cache, p.install, p.locked); err != nil {
			return nil, err
		}
	}
	if p.again {
		f.Cache.Whole = true
	}
	err := f.fetch(ctx, p.install, func(ctx context.Context, i int, tar string) error {
		pk := p.install[i]
		members, err := f.Cache.Members(pk.SHA256)
		if err != nil {
			return fmt.Errorf("install %s %s: %w", pk.Name, pk.Version, err)
		}
		staged[i], err = root.Stage(ctx, tar, pk, members)
		return err
	})
	if err != nil {
		root.Discard(slices.DeleteFunc(staged, func(s *install.Staged) bool { return s == nil })...)
		return nil, err
	}
	return staged, nil
}

// Check refuses the plan where the commit would, on what the index, the root's records and
// its directories say alone (install.Root.Check): a dry run checks it so that it says what
// the change would do, and Apply checks it before it downloads anything. A nil root is one
// where nothing is installed yet (install.CheckChange). cache, if not nil, is the cache the
// change takes its archives from: offline, the plan is refused unless it holds every
// archive the plan installs (*NotCachedError), as Apply refuses it before it fetches; and
// an entry it holds of another size than the plan declares is refused (*fetch.SizeError),
// as its use would refuse it.
func (p *Plan) Check(root *install.Root, cache *fetch.Cache, offline bool) error {
	if err := p.check(root); err != nil || cache == nil {
		return err
	}
	if offline {
		if err := checkCached(cache, p.install, p.locked); err != nil {
			return err
		}
	}
	for _, pk := range p.install {
		if err := fetch.CheckSize(cache, pk); err != nil {
			return err
		}
	}
	return nil
}

// check is Check of the change alone, asked for as askedOf says.
func (p *Plan) check(root *install.Root) error {
	var err error
	if root == nil {
		err = install.CheckChange(p.Root, nil, p.install, p.remove)
	} else {
		err = root.Check(p.install, p.remove)
	}
	return p.askedOf(err)
}

// askedOf returns err; of a removal refused as others depend on what it removes, it says
// whether that was asked for, and which of those others were, first.
func (p *Plan) askedOf(err error) error {
	if de := (*install.DependentsError)(nil); errors.As(err, &de) {
		_, de.Asked = p.asked[de.Removed.Key()]
		de.AskedFirst(func(key string) bool { _, ok := p.asked[key]; return ok })
	}
	return err
}

// changed returns the command changes of the packages kept from before to after, and the
// packages no longer needed by another that are not wanted.
func changed(before, after []db.Record, wanted func(string) bool) (cmds []CommandChange, unneeded []db.Record) {
	for _, p := range after {
		old, ok := db.Find(before, p.Key())
		if !ok || slices.Equal(old.Bin, p.Bin) {
			continue
		}
		if gone, added := commandNames(old.Bin, p.Bin), commandNames(p.Bin, old.Bin); len(gone)+len(added) > 0 {
			cmds = append(cmds, CommandChange{Name: p.Name, Version: p.Version, Gone: gone, Added: added})
		}
	}
	neededBefore := dependedOn(before)
	var needed map[string]bool // made for the first package needed before: a first install has none
	for _, p := range after {
		if !neededBefore[p.Key()] {
			continue
		}
		if needed == nil {
			needed = dependedOn(after)
		}
		if !needed[p.Key()] && !wanted(p.Key()) {
			unneeded = append(unneeded, p)
		}
	}
	return cmds, unneeded
}

// stranded returns the packages of after that only those of unneeded need, directly or
// through one another: of auto (db.Unneeded of after, what autoremove removes, sorted),
// those that a package of unneeded leads to by its dependencies, in auto's order.
func stranded(after, unneeded []db.Record, auto []string) []db.Record {
	deps := repo.Dependencies(db.Packages(after))
	reached := make(map[string]bool, len(unneeded))
	var todo []string
	for _, p := range unneeded {
		reached[p.Key()] = true
		todo = append(todo, p.Key())
	}
	for len(todo) > 0 {
		key := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, d := range deps[key] {
			if !reached[d] && slices.Contains(auto, d) {
				reached[d] = true
				todo = append(todo, d)
			}
		}
	}
	var out []db.Record
	for _, key := range auto {
		rec, ok := db.Find(after, key)
		if ok && reached[key] && !slices.ContainsFunc(unneeded, func(p db.Record) bool { return p.Key() == key }) {
			out = append(out, rec)
		}
	}
	return out
}

// commandNames returns the command names of bin entries a that b lacks.
func commandNames(a, b []repo.Command) []string {
	var names []string
	for _, p := range a {
		if !slices.ContainsFunc(b, func(q repo.Command) bool { return q.Name == p.Name }) {
			names = append(names, p.Name)
		}
	}
	return names
}

// dependedOn returns the keys of pkgs that a package of pkgs depends on (repo.Dependencies).
func dependedOn(pkgs []db.Record) map[string]bool {
	on := make(map[string]bool)
	for _, names := range repo.Dependencies(db.Packages(pkgs)) {
		for _, n := range names {
			on[n] = true
		}
	}
	return on
}

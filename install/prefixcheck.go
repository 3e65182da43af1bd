package install

import (
	"maps"
	"path"
	"slices"

	"pkg/db"
	"pkg/repo"
	"pkg/tarutil"
)

// prefixChange checks the prefix paths of the staged packages against their owners once
// the packages remove names and those staged replace are gone, and returns the new owners
// of every path the change touches and the trees it takes out of the prefix (their Tree
// still to be set). A path is refused, with a *ConflictError, where an owner that stays
// lists it too, unless both list it as a directory, or one package replaces the other
// (Replaces, at the other's version): the incoming package then goes on top of the
// path's stack, its file in the prefix, or under the installed one that replaces it. A
// command link in bin/ and another package's member there are a conflict too, and so is a
// generated path of the node_modules layout (layoutChange) where another has a member,
// which requests and unasked, the change's, decide too. It reads one key per path of the
// change, and decides what the change folds (planFolds).
//
// An npm instance new to the root folds its own directory whole (ownDir): the paths
// beneath it are its alone, recorded by the directory's key, and linked by its rename, so
// the plan first leaves them out (7,050 of the 8,000 paths of the npm tree of
// bench/peers.sh). Where that plan does not fold every such directory, or refuses the
// change, the plan is made again with every path, which decides as it always did.
func (r *Root) prefixChange(recs []db.Record, staged []*Staged, remove []string, requests map[string]repo.Requirement, unasked []string) (*prefixPlan, error) {
	installed := named(recs)
	if own := newOwnDirs(installed, staged); len(own) > 0 {
		plan, err := r.planPrefix(installed, staged, remove, requests, unasked, own)
		if err == nil && foldsAll(staged, own) {
			return plan, nil
		}
	}
	return r.planPrefix(installed, staged, remove, requests, unasked, nil)
}

// newOwnDirs returns, by staged package, the prefix path of the own directory (ownDir) of
// each npm instance staged that is not installed already.
func newOwnDirs(installed map[string]*db.Record, staged []*Staged) map[*Staged]string {
	var own map[*Staged]string
	for _, s := range staged {
		if s.rec.Kind != repo.KindNPM || s.rec.Into == "" || installed[s.rec.Key()] != nil {
			continue
		}
		if own == nil {
			own = make(map[*Staged]string)
		}
		own[s] = s.rec.Into
	}
	return own
}

// foldsAll reports whether the staged packages fold each directory of own (planFolds).
func foldsAll(staged []*Staged, own map[*Staged]string) bool {
	for s, d := range own {
		if !slices.Contains(foldsOf(s.rec), d) {
			return false
		}
	}
	return true
}

// strictlyIn reports whether e is strictly beneath dir, a directory or "" (none).
func strictlyIn(e prefixEntry, dir string) bool {
	return dir != "" && e.path != dir && within(e.path, dir)
}

// planPrefix is prefixChange's plan, leaving out the paths strictly beneath the
// directories of own; installed is every installed package by key.
func (r *Root) planPrefix(installed map[string]*db.Record, staged []*Staged, remove []string, requests map[string]repo.Requirement, unasked []string, own map[*Staged]string) (*prefixPlan, error) {
	leaving := make(map[string]bool)
	for _, n := range remove {
		leaving[n] = true
	}
	incoming := make(map[string]*db.Record, len(staged))
	for _, s := range staged {
		incoming[s.rec.Key()] = s.rec
		if installed[s.rec.Key()] != nil {
			leaving[s.rec.Key()] = true
		}
	}
	lay, err := r.newLayout(installed, incoming, leaving, requests, unasked)
	if err != nil {
		return nil, err
	}
	n := len(lay.paths)
	for _, s := range staged {
		n += len(s.entries) + len(s.rec.Bin)
	}
	keys := append(make([]string, 0, n), lay.paths...) // not nil: Owners(nil) reads every path
	var olds []db.OldTree
	if len(leaving) > 0 {
		oldRecs, files, err := r.db.Installed(slices.Sorted(maps.Keys(leaving))...)
		if err != nil {
			return nil, err
		}
		for i := range oldRecs {
			for _, e := range fileEntries(oldRecs[i].Into, files[i]) {
				keys = append(keys, e.path)
			}
			olds = append(olds, db.OldTree{Name: oldRecs[i].Key(), Version: oldRecs[i].Version, Kind: oldRecs[i].Kind, Into: oldRecs[i].Into, Files: oldPaths(files[i])})
		}
	}
	for _, s := range staged {
		dir := own[s]
		for _, e := range s.entries {
			if !strictlyIn(e, dir) {
				keys = append(keys, e.path)
			}
		}
		for _, b := range s.rec.Bin {
			keys = append(keys, "bin/"+b.Name)
		}
	}
	owners, err := r.db.Owners(keys)
	if err != nil {
		return nil, err
	}
	r.looked = len(keys)
	under, err := r.ownersUnder(installed, leaving, keys, owners)
	if err != nil {
		return nil, err
	}
	next := make(map[string]db.Owners, len(keys))
	for _, k := range keys {
		o, ok := owners[k]
		if !ok {
			o = under[k]
		}
		o.Names = slices.DeleteFunc(slices.Clone(o.Names), func(n string) bool { return leaving[n] })
		next[k] = o
	}
	c := &conflicts{installed: installed, incoming: incoming, leaving: leaving,
		bins: func(p *db.Record) []repo.Command { return r.bins(p.Kind, p.Name, p.Version, p.Bin) }}
	for _, s := range staged {
		key, dir := s.rec.Key(), own[s]
		for _, e := range s.entries {
			if strictlyIn(e, dir) {
				continue
			}
			o, err := c.add(next[e.path], e, s.rec, key)
			if err != nil {
				return nil, err
			}
			next[e.path] = o
		}
	}
	if err := c.commands(staged, next); err != nil {
		return nil, err
	}
	oldLinks, err := lay.apply(next, owners, c)
	if err != nil {
		return nil, err
	}
	folds, folded, err := r.planFolds(installed, staged, leaving, next)
	if err != nil {
		return nil, err
	}
	return &prefixPlan{paths: next, recorded: toRecord(next, owners, staged), olds: olds, folds: folds, folded: folded, links: lay.paths, oldLinks: oldLinks}, nil
}

// toRecord returns the keys of the paths bucket a change writes, given next, the new
// owners of every path it touches, and owners, those recorded: a path strictly beneath a
// directory a staged package folds has no key of its own (the directory's stands for it),
// and one no package lists any more none; either is deleted where recorded.
func toRecord(next, owners map[string]db.Owners, staged []*Staged) map[string]db.Owners {
	folds := make(map[string]string)
	for _, s := range staged {
		for _, d := range foldsOf(s.rec) {
			folds[d] = s.rec.Key()
		}
	}
	in := newFoldIndex(folds)
	keys := make(map[string]db.Owners, len(next))
	for p, o := range next {
		if len(o.Names) > 0 && in.above(p) == "" {
			keys[p] = o
		} else if _, ok := owners[p]; ok {
			keys[p] = db.Owners{}
		}
	}
	return keys
}

// foldIndex answers which folded directory a path is strictly beneath, remembering the
// answer for each directory it looks at: a change's paths share their parents.
type foldIndex struct {
	folds map[string]string // folded directory → its package
	memo  map[string]string // directory → the folded directory it is, or is beneath; "" none
}

func newFoldIndex(folds map[string]string) *foldIndex {
	return &foldIndex{folds: folds, memo: make(map[string]string)}
}

// foldOwners returns each directory folded by a package of recs, by key, that leaving
// lacks, with that package.
func foldOwners(recs map[string]*db.Record, leaving map[string]bool) map[string]string {
	folds := make(map[string]string)
	for n, p := range recs {
		if !leaving[n] {
			for _, d := range foldsOf(p) {
				folds[d] = n
			}
		}
	}
	return folds
}

// above returns the folded directory p is strictly beneath, "" if none.
func (x *foldIndex) above(p string) string {
	if len(x.folds) == 0 {
		return ""
	}
	return x.at(tarutil.Parent(p))
}

// at returns the folded directory that d is or is beneath, "" if none.
func (x *foldIndex) at(d string) string {
	if d == "." {
		return ""
	}
	if f, ok := x.memo[d]; ok {
		return f
	}
	f := d
	if x.folds[d] == "" {
		f = x.at(tarutil.Parent(d))
	}
	x.memo[d] = f
	return f
}

// ownersUnder returns the owners of the keys that owners lacks and that are beneath a
// directory an installed package that stays has folded: that directory's key stands for
// them (toRecord). Such a path is its package's alone, a directory or not as its file
// list says; a key its package does not list stays unowned. It reads the file list of each
// package found so, and nothing where no path of the change is beneath a fold.
func (r *Root) ownersUnder(installed map[string]*db.Record, leaving map[string]bool, keys []string, owners map[string]db.Owners) (map[string]db.Owners, error) {
	owner := foldOwners(installed, leaving)
	if len(owner) == 0 {
		return nil, nil
	}
	in := newFoldIndex(owner)
	hit := make(map[string][]string) // package → its folded directories that keys are beneath
	for _, k := range keys {
		if _, ok := owners[k]; ok {
			continue
		}
		if d := in.above(k); d != "" && !slices.Contains(hit[owner[d]], d) {
			hit[owner[d]] = append(hit[owner[d]], d)
		}
	}
	under := make(map[string]db.Owners)
	for _, n := range slices.Sorted(maps.Keys(hit)) {
		_, files, err := r.db.Installed(n)
		if err != nil {
			return nil, err
		}
		for _, e := range fileEntries(installed[n].Into, files[0]) {
			if slices.ContainsFunc(hit[n], func(d string) bool { return strictlyIn(e, d) }) {
				under[e.path] = db.Owners{Dir: e.dir, Names: []string{n}}
			}
		}
	}
	return under, nil
}

// prefixPlan is what a change does to the prefix.
type prefixPlan struct {
	paths    map[string]db.Owners  // the new owners of every path the change touches
	recorded map[string]db.Owners  // the keys of the paths bucket it writes (toRecord)
	olds     []db.OldTree          // the trees it takes out, their Tree still to be set
	folds    []db.Fold             // the directories it moves, the Back of the olds' still to be set
	folded   map[string][]string   // the new Record.Folded of packages it unfolds and does not record again
	links    []string              // the generated paths it changes
	oldLinks map[string]db.OldLink // the links it moves or takes out, as they were
}

// newLayout returns the change to the generated paths of a change that installs incoming
// and takes out leaving, recording requests and taking those of unasked away: a root with
// no npm instance before or after reads nothing.
func (r *Root) newLayout(installed, incoming map[string]*db.Record, leaving map[string]bool, requests map[string]repo.Requirement, unasked []string) (*layoutChange, error) {
	after := make(map[string]*db.Record, len(installed)+len(incoming))
	npm := false
	for n, p := range installed {
		npm = npm || p.Kind == repo.KindNPM
		if !leaving[n] {
			after[n] = p
		}
	}
	for n, p := range incoming {
		npm = npm || p.Kind == repo.KindNPM
		after[n] = p
	}
	if !npm {
		return &layoutChange{}, nil
	}
	before, err := r.db.Requested()
	if err != nil {
		return nil, err
	}
	next := make(map[string]repo.Requirement, len(before)+len(requests))
	for n, q := range before {
		if after[n] != nil {
			next[n] = q
		}
	}
	for _, n := range unasked {
		delete(next, n)
	}
	for n, q := range requests {
		if after[n] != nil {
			next[n] = q
		}
	}
	lay := newLayoutChange(installed, after, incoming, before, next)
	if _, ok := lay.after[hoisted]; ok {
		done, err := r.hoistRecorded()
		if err != nil {
			return nil, err
		}
		if !done { // a root installed before the hoisted links: all of them
			lay.hoistAll()
		}
	}
	return lay, nil
}

// conflicts decides who may have a path of the prefix.
type conflicts struct {
	installed, incoming map[string]*db.Record
	leaving             map[string]bool
	bins                func(*db.Record) []repo.Command // the commands bin/ holds of a package (Root.bins)
}

// rec returns the record of name as the root will hold it.
func (c *conflicts) rec(name string) *db.Record {
	if p := c.incoming[name]; p != nil {
		return p
	}
	return c.installed[name]
}

// replaces reports whether a declares that it replaces b at b's version.
func replaces(a, b *db.Record) bool {
	return slices.ContainsFunc(a.Replaces, func(r repo.Requirement) bool { return r.Met(b.Kind, b.Name, b.Version, b.Provides) })
}

// add returns o, the owners of e's path, with p, whose key is key, which lists e.
func (c *conflicts) add(o db.Owners, e prefixEntry, p *db.Record, key string) (db.Owners, error) {
	switch {
	case len(o.Names) == 0:
		return db.Owners{Dir: e.dir, Names: []string{key}}, nil
	case o.Dir && e.dir:
		i, _ := slices.BinarySearch(o.Names, key)
		o.Names = slices.Insert(o.Names, i, key)
		return o, nil
	case o.Dir != e.dir:
		return o, c.conflict(e.path, p, o.Names[0], e.dir, o.Dir)
	}
	at := len(o.Names) // above the first owner p replaces; each owner above must replace p
	for i, n := range o.Names {
		if replaces(p, c.rec(n)) {
			at = i
			break
		}
	}
	for _, n := range o.Names[:at] {
		if !replaces(c.rec(n), p) {
			return o, c.conflict(e.path, p, n, false, false)
		}
	}
	o.Names = slices.Insert(slices.Clone(o.Names), at, key)
	return o, nil
}

func (c *conflicts) conflict(path string, p *db.Record, other string, dir, otherDir bool) *ConflictError {
	q := c.rec(other)
	return &ConflictError{Path: path, Package: p.Name, Version: p.Version, Other: q.Name, OtherVersion: q.Version,
		Incoming: c.incoming[other] != nil, dirInPackage: dir, dirInOther: otherDir}
}

// commands refuses a command link of one package, bin/CMD, where another package has a
// member, given next, the owners of the paths of the change, which hold every incoming
// package's command paths.
func (c *conflicts) commands(staged []*Staged, next map[string]db.Owners) error {
	after := make(map[string]*db.Record, len(c.installed)+len(c.incoming)) // the root the change leaves
	for k, p := range c.installed {
		if !c.leaving[k] {
			after[k] = p
		}
	}
	maps.Copy(after, c.incoming)
	stacks, _, err := commandStacks(after, keysOf(slices.Collect(maps.Values(c.incoming))), c.bins)
	if err != nil {
		return err
	}
	holds := tops(stacks)
	links := make(map[string]string) // bin/CMD → the package whose command link it is
	for _, p := range after {
		addLinks(links, p, holds, c.bins(p))
	}
	for _, s := range staged {
		for _, b := range c.bins(s.rec) {
			k := "bin/" + b.Name
			if links[k] != s.rec.Key() {
				continue
			}
			if o := next[k]; len(o.Names) > 0 && o.Names[0] != s.rec.Key() {
				e := c.conflict(k, s.rec, o.Names[0], false, o.Dir)
				e.Command = true
				return e
			}
		}
		for _, e := range s.entries {
			if owner, ok := links[e.path]; ok && owner != s.rec.Key() {
				ce := c.conflict(e.path, s.rec, owner, e.dir, false)
				ce.Command = true
				return ce
			}
		}
	}
	return nil
}

// addLinks adds to links the command links p's commands bins need: those it holds (holds,
// by command) whose prefix path is not bin/CMD itself.
func addLinks(links map[string]string, p *db.Record, holds map[string]string, bins []repo.Command) {
	for _, b := range bins {
		if k := "bin/" + b.Name; holds[b.Name] == p.Key() && prefixPath(path.Clean(b.Path), p.Into) != k {
			links[k] = p.Key()
		}
	}
}

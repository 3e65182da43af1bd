package txn

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/repo"
	"pkg/trust"
)

// Schema names the version of Plan's JSON form (docs/json/plan.md).
const Schema = "pkg.plan/1"

// Action is what a change does to one package.
type Action string

const (
	Install   Action = "install"   // not installed before
	Upgrade   Action = "upgrade"   // to a newer version
	Downgrade Action = "downgrade" // to an older version
	Replace   Action = "replace"   // the same version from another archive, or with other metadata
	Reinstall Action = "reinstall" // the same version and archive, its files put back
	Remove    Action = "remove"
	Keep      Action = "keep" // asked for and installed as asked: nothing to do
)

// Change is what a plan does to one package.
type Change struct {
	Action   Action `json:"action"`
	Name     string `json:"name"`
	Version  string `json:"version"`        // installed after the change; for a removal, before
	From     string `json:"from,omitempty"` // the version installed before, when it is replaced
	Download int64  `json:"download_bytes"` // bytes of archive to download: 0 when cached
	Why      string `json:"why"`            // "requested", "dependency of NAME", "in the lockfile", ...
	// WasDependency is of a Keep: the package was installed as another's dependency, and
	// the change records it as asked for (autoremove keeps it), as apt-mark manual does.
	WasDependency bool `json:"was_dependency,omitempty"`
	// WasRequested is of a sync: the package was asked for, and the lockfile has it as
	// another's dependency alone, which the change records it as (autoremove takes it once
	// nothing needs it), as apt-mark auto does.
	WasRequested bool `json:"was_requested,omitempty"`
}

// Plan is a change to a root, as resolved and not yet made: what it downloads, installs,
// upgrades, reinstalls and removes, and why each package is in it. Its JSON form, with
// Schema, is the documented output of a dry run. Apply makes the change: only a Plan made
// by this package's functions, not one read back from JSON, which describes.
type Plan struct {
	Schema    string   `json:"schema"`
	Root      string   `json:"root"`
	Changes   []Change `json:"changes"`             // in the order they are fetched, removals last; none: the plan changes nothing
	Unchanged []Change `json:"unchanged,omitempty"` // asked for and already installed as asked
	Held      []Held   `json:"held,omitempty"`      // an upgrade's packages kept from their newest version
	Download  int64    `json:"download_bytes"`      // bytes to download in all
	// Disk is the change of the bytes of installed files, as the index records the new
	// packages' sizes (where it does not, they count as 0): negative when it frees space.
	Disk int64 `json:"disk_bytes"`
	// Kept are, of an autoremove that removes nothing for them, the packages no request
	// needs that packages recorded Bare and needed may need, their dependencies unknown:
	// KeptBy, by key (db.Record.Key), which Why names.
	Kept   []Change `json:"kept,omitempty"`
	KeptBy []string `json:"kept_by,omitempty"`

	install []repo.Package
	remove  []string
	indexes []trust.Result // accepted into the root before anything of them is installed
	before  []db.Record    // the root's records the plan was made from
	in      *repo.Index    // what describes its Bare records (described); nil: none
	again   bool           // a reinstall
	locked  bool           // from a lockfile: its sha256s, not the index's
	why     func(name string) string
	along   map[string][]string         // removed as dependents of others removed: the names of those (removePlan)
	asked   map[string]repo.Requirement // the root's requests (db.DB.Requested), of a removal: whether what it removes was asked for
	asks    map[string]repo.Requirement // of a sync, the lockfile's requirements the commit records, by the key of the instance each asks for
	unasks  []string                    // of a sync, the keys the commit records as dependencies alone (Unrequest)
	target  *Target                     // where Apply makes the change (Bind)
}

// Held is an installed package an upgrade keeps from the newest version.
type Held struct {
	Name    string             `json:"name"`
	From    string             `json:"from"`    // installed now
	Version string             `json:"version"` // after the upgrade
	Newest  string             `json:"newest,omitempty"`
	HeldBy  string             `json:"held_by,omitempty"` // the package's hold (db.Holds), when that is what keeps it
	HeldTo  string             `json:"held_to,omitempty"` // the repository it was asked from (REPO/NAME), when that is what keeps it
	Gone    *repo.PinGoneError `json:"-"`                 // HeldTo is not in use, or no longer offers it: the upgrade keeps it as installed
	Origin  string             `json:"origin,omitempty"`  // the local archive file it was installed from, when that is what keeps it
	Detail  repo.Held          `json:"-"`                 // what the resolver says of it
	// Beside is, of an npm instance not asked for that the ranges leading to it keep at
	// its version, the newer version of its name the upgrade leaves installed beside it
	// for other dependents: nothing for the user to act on.
	Beside string `json:"beside,omitempty"`
}

// HeldError refuses an upgrade naming installed packages that their holds (db.Holds) keep
// below their newest versions, as brew refuses to upgrade a pinned formula named: a hold
// moves only by a requirement with a new constraint.
type HeldError struct{ Held []Held }

func (e *HeldError) Error() string {
	var s []string
	for _, h := range e.Held {
		s = append(s, fmt.Sprintf("upgrade %s: %s %s is held by its request %s (newest %s)", h.Name, h.Name, h.From, h.HeldBy, h.Newest))
	}
	return strings.Join(s, "; ")
}

// wanted reports whether the user asked for the package name: they named it, or it is
// in the lockfile synced.
func (p *Plan) wanted(name string) bool { return p.locked || p.why(name) == "requested" }

// fill computes the changes of p from its packages and the root's records, with cache
// (if not nil) telling what need not be downloaded.
func (p *Plan) fill(cache *fetch.Cache) *Plan {
	p.Schema = Schema
	p.Changes = []Change{}
	replaced := p.replacedInstances()
	for _, pk := range p.install {
		c := Change{Action: Install, Name: pk.Name, Version: pk.Version, Why: p.why(pk.Key())}
		if cache == nil || !cache.Has(pk.SHA256) {
			c.Download = pk.Size
		}
		size := pk.InstalledSize
		cur, ok := db.Find(p.before, pk.Key())
		if old, upgraded := replaced[pk.Key()]; upgraded {
			cur, ok = old, true
		}
		if ok {
			size -= cur.Size
			c.From = cur.Version
			switch n := pk.CompareVersion(repo.Package{Version: cur.Version}); {
			case p.again:
				c.Action, c.From = Reinstall, ""
			case n > 0:
				c.Action = Upgrade
			case n < 0:
				c.Action = Downgrade
			case cur.Installs(pk):
				c.Action, c.From = Reinstall, "" // a sync puts back a tree deleted by hand
			default:
				c.Action = Replace
			}
			if c.Action == Reinstall {
				size = 0 // the archive installed: its files as recorded, whatever the index says of them
			}
		}
		p.Disk += size
		p.Download += c.Download
		p.Changes = append(p.Changes, c)
	}
	for _, key := range p.remove {
		cur, ok := db.Find(p.before, key)
		if slices.ContainsFunc(slices.Collect(maps.Values(replaced)), func(r db.Record) bool { return r.Key() == key }) {
			continue // shown as its upgrade
		}
		p.Disk -= cur.Size
		if !ok {
			cur.Name = key
		}
		p.Changes = append(p.Changes, Change{Action: Remove, Name: cur.Name, Version: cur.Version, Why: p.why(key)})
	}
	return p
}

// replacedInstances pairs the npm instances the plan installs with those of the same name
// it removes, by the key of the one installed: an upgrade or downgrade of an npm package
// is an instance removed and another installed (Package.Key holds the version). The
// instances are paired newest with newest.
func (p *Plan) replacedInstances() map[string]db.Record {
	gone := make(map[string][]db.Record) // name → the instances removed, newest first
	for _, key := range p.remove {
		if cur, ok := db.Find(p.before, key); ok && cur.Kind == repo.KindNPM {
			gone[cur.Name] = append(gone[cur.Name], cur)
		}
	}
	for _, rs := range gone {
		slices.SortFunc(rs, func(a, b db.Record) int {
			return db.Packages([]db.Record{b})[0].CompareVersion(db.Packages([]db.Record{a})[0])
		})
	}
	out := make(map[string]db.Record)
	for _, pk := range p.install {
		if rs := gone[pk.Name]; pk.Kind == repo.KindNPM && len(rs) > 0 {
			out[pk.Key()], gone[pk.Name] = rs[0], rs[1:]
		}
	}
	return out
}

// installed reports whether recs hold p as resolved: its archive, with its entry.
func installed(recs []db.Record, p repo.Package) bool {
	r, ok := db.Find(recs, p.Key())
	return ok && r.Installs(p)
}

// reasons says why each package of all is wanted, by key (Package.Key): "requested" for
// the names asked for, "dependency of A, B" for those others depend on (by name or by what
// they provide), and def for the rest.
func reasons(all []repo.Package, requested []string, def string) func(string) string {
	by, deps := make(map[string][]string), repo.Dependencies(all)
	nameOf := make(map[string]string, len(all))
	for _, p := range all {
		nameOf[p.Key()] = p.Name
		for _, d := range deps[p.Key()] {
			if !slices.Contains(by[d], p.Name) {
				by[d] = append(by[d], p.Name)
			}
		}
	}
	return func(key string) string {
		switch {
		case slices.Contains(requested, key) || slices.Contains(requested, nameOf[key]):
			return "requested"
		case len(by[key]) > 0:
			return "dependency of " + strings.Join(by[key], ", ")
		}
		return def
	}
}

func names(reqs []repo.Requirement) []string {
	s := make([]string, len(reqs))
	for i, r := range reqs {
		s[i] = r.Name
	}
	return s
}

// Spec is what a plan is made of (NewPlan): an action on the packages a request names,
// and the root's state it starts from.
type Spec struct {
	Action    Action                      // Install, Upgrade, Reinstall or Remove
	Requires  []repo.Requirement          // Install; Upgrade: the installed packages to move (all, with none)
	Names     []string                    // Reinstall, Remove: installed packages, by key (db.Record.Key)
	Unneeded  bool                        // Remove: in place of Names, the packages no request needs (db.Unneeded)
	Root      string                      // the root's directory
	Records   []db.Record                 // the root's records, read under its lock unless a dry run
	Requested map[string]repo.Requirement // the root's requests (db.DB.Requested): their holds for Install and Upgrade, what Unneeded keeps
	Catalog   *Catalog                    // the indexes in effect; for Remove, any (nil: none), which describe Bare records alone (described)
	Cache     *fetch.Cache                // if not nil, tells what need not be downloaded (a removal downloads nothing)
}

// NewPlan makes the plan of s, resolved against s.Catalog but for a removal: installing
// what the root does not hold as resolved, an upgrade, a reinstall, or a removal. It
// refuses a Spec giving the action an input the action does not read.
func NewPlan(s Spec) (*Plan, error) {
	if err := s.fits(); err != nil {
		return nil, err
	}
	switch s.Action {
	case Install:
		return installPlan(s.Root, s.Catalog, s.Records, s.Requires, s.Requested, s.Cache)
	case Upgrade:
		return upgradePlan(s.Root, s.Catalog, s.Records, s.Requires, s.Requested, s.Cache)
	case Reinstall:
		return reinstallPlan(s.Root, s.Catalog, s.Records, s.Names, s.Requested, s.Cache)
	}
	var in *repo.Index
	if s.Catalog != nil {
		in = s.Catalog.Index
	}
	if s.Unneeded {
		return unneededPlan(s.Root, in, s.Records, s.Requested), nil
	}
	return removePlan(s.Root, in, s.Records, s.Names, s.Requested)
}

// fits refuses a Spec giving its action an input it does not read, rather than ignore it.
func (s Spec) fits() error {
	byNames := s.Action == Reinstall || s.Action == Remove
	switch {
	case !byNames && s.Action != Install && s.Action != Upgrade:
		return fmt.Errorf("plan %s: not an action a plan is made of", s.Action)
	case len(s.Requires) > 0 && byNames:
		return fmt.Errorf("plan %s: takes names, not requirements", s.Action)
	case len(s.Names) > 0 && !byNames:
		return fmt.Errorf("plan %s: takes requirements, not names", s.Action)
	case s.Unneeded && (s.Action != Remove || len(s.Names) > 0):
		return fmt.Errorf("plan %s: the unneeded packages are a removal's, in place of names", s.Action)
	case s.Catalog == nil && s.Action != Remove:
		return fmt.Errorf("plan %s: takes a catalog", s.Action)
	}
	return nil
}

// installPlan resolves reqs against ix, with the root's records before, into the plan of
// installing what the root does not hold as resolved. An installed package reqs do not
// name stays within its hold (db.Holds of requested, db.Requested); one a local archive file
// of ix offers as another archive is replaced by it (a rebuild, or another version: rebuilt). A held
// npm instance whose hold a requirement of reqs replaces is resolved again by it, and
// removed where nothing else leads to it (repo.Index.ResolveInstalled). The cache, if not
// nil, tells what is downloaded.
func installPlan(root string, ix *Catalog, before []db.Record, reqs []repo.Requirement, requested map[string]repo.Requirement, cache *fetch.Cache) (*Plan, error) {
	pkgs, err := ix.ResolveInstalled(ix.rebuilt(db.Packages(before)), reqs, db.Holds(before, requested, nil, nil)...)
	if err != nil {
		return nil, ix.about(err)
	}
	p := &Plan{Root: root, indexes: ix.results(), before: before, in: ix.Index, remove: leftOut(before, pkgs), why: reasons(append(pkgs, db.Packages(before)...), names(reqs), "")}
	for _, pk := range pkgs {
		if !installed(before, pk) {
			p.install = append(p.install, pk)
		} else if slices.ContainsFunc(reqs, func(q repo.Requirement) bool { return answers(q, pk, pkgs) }) {
			_, asked := requested[pk.Key()]
			p.Unchanged = append(p.Unchanged, Change{Action: Keep, Name: pk.Name, Version: pk.Version, Why: "requested", WasDependency: !asked})
		}
	}
	return p.fill(cache), nil
}

// leftOut returns the keys of the npm instances of before that pkgs, a resolution of the
// root's change, leaves out: replaced by another version, or led to by nothing any more.
func leftOut(before []db.Record, pkgs []repo.Package) []string {
	var keys []string
	for _, r := range before {
		if r.Kind == repo.KindNPM && !slices.ContainsFunc(pkgs, func(q repo.Package) bool { return q.Key() == r.Key() }) {
			keys = append(keys, r.Key())
		}
	}
	return keys
}

// answers reports whether pk, of the packages pkgs resolved, is what q asked for: the
// package of its name, or, of an npm name's several versions, the newest q allows.
func answers(q repo.Requirement, pk repo.Package, pkgs []repo.Package) bool {
	if q.Name != pk.Name {
		return false
	}
	if pk.Kind != repo.KindNPM {
		return true
	}
	return q.Allows(pk.Version) && !slices.ContainsFunc(pkgs, func(o repo.Package) bool {
		return o.Name == pk.Name && o.Kind == repo.KindNPM && q.Allows(o.Version) && o.CompareVersion(pk) > 0
	})
}

// reinstallPlan is the plan of installing again the installed packages keys (Record.Key):
// the same version and archive, as the index has them, so that nothing changes but their
// files; a package asked for from a repository (requested, db.Requested) as that one has it.
// What their requirements need and nothing installed meets is installed with them, as
// their dependencies (lacking), as apt-get install -f does; an installed package that
// meets one and whose tree is gone (install.TreesGone) is installed again with them, as
// recorded (treeless).
func reinstallPlan(root string, ix *Catalog, before []db.Record, keys []string, requested map[string]repo.Requirement, cache *fetch.Cache) (*Plan, error) {
	use, gone := ix.pins(before, requested)
	in, err := ix.indexFor(use)
	if err != nil {
		return nil, err
	}
	p := &Plan{Root: root, indexes: ix.results(), before: before, in: in, again: true, why: reasons(nil, keys, "")}
	for _, key := range keys {
		if slices.ContainsFunc(p.install, func(q repo.Package) bool { return q.Key() == key }) {
			continue // named twice
		}
		cur, ok := db.Find(before, key)
		if !ok {
			return nil, fmt.Errorf("reinstall %s: not installed (pkg install %s installs it)", key, key)
		}
		pk, err := ix.again(in, cur, gone, cache)
		if err != nil {
			return nil, err
		}
		p.install = append(p.install, pk)
	}
	restored, err := ix.treeless(in, before, p.install, install.TreesGone(root, before), gone, cache)
	if err != nil {
		return nil, err
	}
	deps, err := ix.lacking(in, before, p.install, db.Holds(before, requested, nil, nil))
	if err != nil {
		return nil, err
	}
	deps = append(restored, deps...)
	if len(deps) > 0 { // installed first, as dependencies: "dependency of NAME"
		p.install = append(deps, p.install...)
		p.why = reasons(append(planned(in, before, p.install), deps...), keys, "")
	}
	return p.fill(cache), nil
}

// again returns the entry of in, ix's index, that installs cur again: its version and
// archive, with the entry's commands, library directories and env and cur's relations;
// a *repo.NotOfferedError where in has none, saying whether cache (nil: not known) holds the
// archive. gone is the packages whose pinned repository no longer offers them
// (Catalog.pins).
func (ix *Catalog) again(in *repo.Index, cur db.Record, gone map[string]*repo.PinGoneError, cache *fetch.Cache) (repo.Package, error) {
	if g := gone[cur.Name]; g != nil && cur.Kind != repo.KindNPM {
		g.Op = "reinstall"
		return repo.Package{}, g
	}
	pk, err := in.Lookup(repo.Requirement{Name: cur.Name, Constraints: []repo.Constraint{{Op: "=", Version: cur.Version}}})
	if err != nil {
		return repo.Package{}, &repo.NotOfferedError{Name: cur.Name, Version: cur.Version, Kind: cur.Kind, Repos: ix.urls(),
			Cached: cache != nil && cache.Has(cur.SHA256), Err: err}
	}
	if pk.SHA256 != cur.SHA256 {
		return repo.Package{}, &RepublishedError{Name: cur.Name, Version: cur.Version, Index: pk.SHA256, Installed: cur.SHA256}
	}
	// The entry may have been republished for the same archive (repo add --replace):
	// the reinstall takes its commands, library directories and env, which its links
	// and wrappers are made of, and keeps the relations, which only a resolve changes;
	// a Bare record has none to keep (unknown, not none), and takes the entry's.
	pk.Into = cur.Into
	if !cur.Bare {
		pk.Depends, pk.Optional, pk.Peers, pk.Provides = cur.Depends, cur.Optional, cur.Peers, cur.Provides
		pk.Conflicts, pk.Replaces = cur.Conflicts, cur.Replaces
	}
	return pk, nil
}

// treeless returns, to install again with pkgs, the installed packages (of before) whose
// trees are gone (keys) that meet a requirement of pkgs, or of another such package: a
// reinstall of jq puts back libjq1 deleted by hand, as it would install it were it not
// recorded.
func (ix *Catalog) treeless(in *repo.Index, before []db.Record, pkgs []repo.Package, keys []string, gone map[string]*repo.PinGoneError, cache *fetch.Cache) ([]repo.Package, error) {
	var out []repo.Package
	taken := func(key string) bool {
		has := func(q repo.Package) bool { return q.Key() == key }
		return slices.ContainsFunc(pkgs, has) || slices.ContainsFunc(out, has)
	}
	for next := pkgs; len(next) > 0; {
		var found []repo.Package
		for _, p := range next {
			for _, q := range slices.Concat(p.Depends, p.Peers) {
				for _, r := range before {
					if !slices.Contains(keys, r.Key()) || taken(r.Key()) || !q.Met(r.Kind, r.Name, r.Version, r.Provides) {
						continue
					}
					pk, err := ix.again(in, r, gone, cache)
					if err != nil {
						return nil, fmt.Errorf("%w (needed by %s %s, and its tree is gone)", err, p.Name, p.Version)
					}
					out, found = append(out, pk), append(found, pk)
				}
			}
		}
		next = found
	}
	return out, nil
}

// RepublishedError refuses a reinstall of a package whose archive the repository replaced:
// a reinstall only puts back the archive installed.
type RepublishedError struct {
	Name, Version    string
	Index, Installed string // sha256s
}

func (e *RepublishedError) Error() string {
	return fmt.Sprintf("reinstall %s %s: the repository's archive (sha256 %s) is not the one installed (%s): the publisher replaced it, and a reinstall only puts back the archive installed",
		e.Name, e.Version, e.Index, e.Installed)
}

// upgradePlan is the plan of moving the installed packages named by reqs (all, with none)
// and those they depend on to the newest versions the other installed packages and the
// holds (db.Holds: what was requested, db.Requested, with a version constraint) allow, each
// pinned to a repository by what was requested taken from it alone. A requirement of reqs
// with a constraint is the package's hold from now on; one without that names a package
// its hold keeps below the newest version is refused (*HeldError), unless the plan moves
// another instance of its npm name, and the held one is in Held. A package from a local
// archive file that the plan does not move is in Held where a repository has a newer version.
// An npm instance kept by the ranges leading to it is in Held, with Beside where a newer
// instance of its name stays installed and neither the root's requests nor reqs name it.
func upgradePlan(root string, ix *Catalog, before []db.Record, reqs []repo.Requirement, requested map[string]repo.Requirement, cache *fetch.Cache) (*Plan, error) {
	cur, names := db.Packages(before), names(reqs)
	in, gone, err := ix.pinnedIndex(before, requested)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if g := gone[n]; g != nil {
			g.Op = "upgrade"
			return nil, g
		}
	}
	if err := db.UnheldBelow(before, requested, reqs, in.Versions); err != nil {
		return nil, err
	}
	holds := keepGone(db.Holds(before, requested, reqs, in.Versions), gone)
	pkgs, err := in.Upgrade(cur, names, holds...)
	if err != nil {
		return nil, err
	}
	p := &Plan{Root: root, indexes: ix.results(), before: before, in: in, remove: leftOut(before, pkgs), why: reasons(pkgs, names, "upgrade")}
	for _, pk := range pkgs {
		if !installed(before, pk) {
			p.install = append(p.install, pk)
		}
	}
	var named []Held
	for _, h := range in.HeldBack(cur, names, pkgs, holds...) {
		h = ownHold(h, pkgs, requested)
		held := Held{Name: h.Package.Name, From: h.Installed, Version: h.Package.Version, Newest: h.Newest, Detail: h}
		if g := gone[held.Name]; g != nil {
			held.Newest, held.HeldTo, held.Gone = "", g.Repo, g
		} else if h.Hold != nil {
			held.HeldBy = h.Hold.String()
			if slices.Contains(names, held.Name) && !slices.ContainsFunc(reqs, func(r repo.Requirement) bool { return r.Name == held.Name && len(r.Constraints) > 0 }) &&
				!movesOther(p.install, held) {
				named = append(named, held)
			}
		}
		if _, asked := requested[repo.InstanceKey(h.Package.Kind, held.Name, held.From)]; !asked && !slices.Contains(names, held.Name) && h.Package.Kind == repo.KindNPM && len(h.LedBy) > 0 {
			held.Beside = repo.NewerBeside(pkgs, repo.Package{Kind: repo.KindNPM, Name: held.Name, Version: held.Version}) // of what the upgrade leaves
		}
		p.Held = append(p.Held, held)
	}
	if len(named) > 0 {
		return nil, &HeldError{Held: named}
	}
	p.Held = append(p.Held, pinHeld(ix, before, requested, pkgs, names, gone, p.Held)...)
	for _, o := range ix.localNewer(before) {
		moved := slices.ContainsFunc(p.install, func(q repo.Package) bool { return q.Name == o.Name })
		if !moved && (len(names) == 0 || slices.Contains(names, o.Name)) {
			p.Held = append(p.Held, Held{Name: o.Name, From: o.Installed, Version: o.Installed, Newest: o.Newest, Origin: o.Origin})
		}
	}
	return p.fill(cache), nil
}

// ownHold returns h, of an upgrade that leaves pkgs, with the npm instance it is of at its
// installed version and held by its own request (requested) where the upgrade keeps it:
// the hold of a requirement given on its name (db.Holds) resolved the name's other
// instances, and the kept one stays as it was asked for.
func ownHold(h repo.Held, pkgs []repo.Package, requested map[string]repo.Requirement) repo.Held {
	key := repo.InstanceKey(repo.KindNPM, h.Package.Name, h.Installed)
	own, ok := requested[key]
	i := slices.IndexFunc(pkgs, func(q repo.Package) bool { return q.Key() == key })
	if h.Hold == nil || h.Package.Kind != repo.KindNPM || h.Package.Version == h.Installed || !ok || len(own.Constraints) == 0 || i < 0 {
		return h
	}
	h.Package, h.Hold = pkgs[i], &repo.Requirement{Name: own.Name, Constraints: own.Constraints}
	return h
}

// movesOther reports whether install, what an upgrade installs, moves an instance of h's
// npm name other than the held one: naming the name then upgrades that one, and h is kept.
func movesOther(install []repo.Package, h Held) bool {
	return slices.ContainsFunc(install, func(q repo.Package) bool {
		return q.Kind == repo.KindNPM && q.Name == h.Name && q.Version != h.Version
	})
}

// removePlan is the plan of removing the installed packages names, by key (Record.Key),
// and with them the installed packages that depend on them where no package asked for
// (requested, db.Requested) needs those, directly or through others: a dependency they
// brought that depends on them in turn (eslint's @eslint-community/eslint-utils, a peer
// of eslint), as apt removes a package's dependents. Where one asked for would lose a
// dependency through another that would go, it refuses naming every package asked for
// that would have to go too (*install.NeededError); where each would lose one of names
// itself, the plan is of names alone, which the commit refuses naming their dependents
// (install.Dependents), or, where a record is Bare, the plan refuses as the commit would
// (install.CheckChange). The records' relations are those described gives them, in (nil:
// none) describing Bare records; where one of those it does not describe stays, it may
// need any of what goes, and the removal is refused (*install.UnknownDependenciesError).
func removePlan(root string, in *repo.Index, before []db.Record, names []string, requested map[string]repo.Requirement) (*Plan, error) {
	recs, unknown := described(in, before)
	remove, along := slices.Clone(names), make(map[string][]string)
	deps := repo.Dependencies(db.Packages(recs))
	var needed []string // asked for, and losing a dependency: all of them, for the refusal to name
	for {
		users := install.Dependents(recs, remove)
		if len(users) == 0 {
			break
		}
		for _, u := range users {
			if _, asked := requested[u]; asked {
				needed = append(needed, u)
			} else {
				along[u] = dependsOnOf(before, deps[u], remove)
			}
		}
		remove = append(remove, users...)
	}
	if err := neededBy(before, names, remove, needed, deps); err != nil {
		return nil, err
	}
	if err := unknownStaying(names, remove, unknown); err != nil {
		return nil, err
	}
	if len(needed) > 0 {
		remove, along = names, nil
	}
	why := reasons(nil, names, "")
	p := &Plan{Root: root, before: before, in: in, remove: remove, along: along, asked: requested, why: func(key string) string {
		if on, ok := along[key]; ok {
			return alongText(on)
		}
		return why(key)
	}}
	if len(needed) > 0 && slices.ContainsFunc(before, func(r db.Record) bool { return r.Bare }) { // by the relations described gives, which the commit does not read
		if err := p.askedOf(install.CheckChange(root, recs, nil, names)); err != nil {
			return nil, err
		}
	}
	return p.fill(nil), nil
}

// neededBy refuses the removal of names where a package of needed, asked for, would lose a
// dependency through another of remove, which would go with names (*install.NeededError);
// nil where each of needed depends on one of names itself. deps are the keys of what each
// installed package depends on (repo.Dependencies).
func neededBy(before []db.Record, names, remove, needed []string, deps map[string][]string) error {
	e := &install.NeededError{Remove: names, Through: make(map[string][]db.Record)}
	direct := true
	for _, u := range needed {
		r, _ := db.Find(before, u)
		e.By = append(e.By, r)
		if slices.ContainsFunc(deps[u], func(d string) bool { return slices.Contains(names, d) }) {
			continue
		}
		direct = false
		for _, d := range deps[u] {
			if between, ok := db.Find(before, d); ok && slices.Contains(remove, d) && !slices.ContainsFunc(e.Through[u], func(t db.Record) bool { return t.Key() == d }) {
				e.Through[u] = append(e.Through[u], between)
			}
		}
	}
	if direct {
		return nil
	}
	return e
}

// alongWhy is p.along as the Outcome says it: by key, why the removal takes each along.
func (p *Plan) alongWhy() map[string]string {
	if len(p.along) == 0 {
		return nil
	}
	why := make(map[string]string, len(p.along))
	for key, on := range p.along {
		why[key] = alongText(on)
	}
	return why
}

// alongText says why a removal takes a package along: it depends on on, names of packages
// removed, and nothing asked for needs it.
func alongText(on []string) string {
	if len(on) == 0 {
		return "depends on what goes, and nothing asked for needs it"
	}
	return "depends on " + strings.Join(on, ", ") + ", and nothing asked for needs it"
}

// dependsOnOf returns the names of the packages of gone (keys of before) among deps, the
// keys of what a package depends on (repo.Dependencies), sorted.
func dependsOnOf(before []db.Record, deps, gone []string) []string {
	var on []string
	for _, d := range deps {
		if r, ok := db.Find(before, d); ok && slices.Contains(gone, d) && !slices.Contains(on, r.Name) {
			on = append(on, r.Name)
		}
	}
	slices.Sort(on)
	return on
}

// unneededPlan is the plan of removing the installed packages (before) that no package
// asked for (requested) needs, as the records' relations described by in (nil: none)
// tell (unneeded): each is in it as "no longer needed", not as requested. What a Bare
// record in does not describe may need is Kept.
func unneededPlan(root string, in *repo.Index, before []db.Record, requested map[string]repo.Requirement) *Plan {
	recs, unknown := described(in, before)
	names, kept, by := unneeded(recs, unknown, requested)
	why := func(string) string { return "no longer needed" }
	p := (&Plan{Root: root, before: before, in: in, remove: names, why: why}).fill(nil)
	p.Kept, p.KeptBy = kept, by
	return p
}

// SyncPlan is the plan of making root hold exactly the packages of l, as l asks for them,
// or, with keep, at least them, with the requests the root records; kept are the
// installed packages l does not list that keep keeps. A nil root is one where nothing is
// installed yet. Its commit records l's requirements of the packages it installs and of
// those it asks for anew (lockAsks), and, without keep, the packages l lists but asks for
// none of as dependencies alone (unask).
func SyncPlan(root *install.Root, l *repo.Lock, keep bool, cache *fetch.Cache) (p *Plan, kept []string, err error) {
	want, err := l.Order()
	if err != nil {
		return nil, nil, err
	}
	ip, dir, before := &install.Delta{Install: want}, "", []db.Record(nil)
	if root != nil {
		if ip, err = root.Plan(want); err != nil {
			return nil, nil, err
		}
		if before, err = root.DB().List(); err != nil {
			return nil, nil, err
		}
		dir = root.Dir()
	}
	if keep {
		kept, ip.Remove = ip.Remove, nil
	}
	def := func(name string) string {
		if slices.Contains(ip.Remove, name) {
			return "not in the lockfile"
		}
		return "in the lockfile"
	}
	p = &Plan{Root: dir, before: before, install: ip.Install, remove: ip.Remove, locked: true, why: def}
	requested := map[string]repo.Requirement{}
	if root != nil {
		if requested, err = root.DB().Requested(); err != nil {
			return nil, nil, err
		}
	}
	p.asks, p.Unchanged = lockAsks(before, requested, want, l.Requires)
	p.fill(cache)
	if !keep {
		p.unask(requested, want, l.Requires)
	}
	return p, kept, nil
}

// unask has p, a sync's filled plan to want, record as dependencies alone the packages of
// want that the lockfile's requirements reqs ask for none of (answers), and marks
// WasRequested those the root records as asked for (requested), or, of an npm instance
// that replaces another, where that one was: on their change, or, installed as they are,
// as kept. A package it installs is recorded so whatever the root recorded (an npm
// instance's request is not carried to it).
func (p *Plan) unask(requested map[string]repo.Requirement, want []repo.Package, reqs []repo.Requirement) {
	replaced := p.replacedInstances()
	for _, pk := range want {
		if slices.ContainsFunc(reqs, func(q repo.Requirement) bool { return answers(q, pk, want) }) {
			continue
		}
		_, was := requested[pk.Key()]
		if old, ok := replaced[pk.Key()]; ok {
			_, was = requested[old.Key()]
		}
		i := slices.IndexFunc(p.Changes, func(c Change) bool {
			return c.Action != Remove && c.Name == pk.Name && c.Version == pk.Version
		})
		switch {
		case i >= 0:
			p.Changes[i].WasRequested = was
		case !was:
			continue // installed as it is, as a dependency
		default:
			p.Unchanged = append(p.Unchanged, Change{Action: Keep, Name: pk.Name, Version: pk.Version, Why: "a dependency in the lockfile", WasRequested: true})
		}
		p.unasks = append(p.unasks, pk.Key())
	}
}

// lockAsks returns the requirements of reqs, a lockfile's, that a sync to want records,
// by the key of the package of want each asks for (answers): those of the packages it
// installs, and those of packages installed as they are (before) that the root records
// as another's dependency (requested), which it records as asked for, as an install
// does, so that autoremove keeps them and an npm instance gets its link and commands;
// those are also returned as changes kept. A package installed as asked keeps its
// request, and its hold: a sync that records nothing leaves them too.
func lockAsks(before []db.Record, requested map[string]repo.Requirement, want []repo.Package, reqs []repo.Requirement) (map[string]repo.Requirement, []Change) {
	asks := make(map[string]repo.Requirement)
	var ks []Change
	for _, pk := range want {
		i := slices.IndexFunc(reqs, func(q repo.Requirement) bool { return answers(q, pk, want) })
		if i < 0 {
			continue
		}
		if installed(before, pk) {
			if _, asked := requested[pk.Key()]; asked {
				continue
			}
			ks = append(ks, Change{Action: Keep, Name: pk.Name, Version: pk.Version, Why: "requested", WasDependency: true})
		}
		q := reqs[i]
		for _, o := range reqs[i+1:] {
			if answers(o, pk, want) {
				q = q.With(o)
			}
		}
		asks[pk.Key()] = q
	}
	return asks, ks
}

// Relocate makes the plan fetch each archive of the lockfile l through the source of its
// repository in sources, by name ("" for a lock of one): a mirror, or the same repository
// with its credentials. A package whose repository has no source there keeps its URL. So
// does one that cannot be relocated (its repository directory gone) where cache (if not
// nil) holds it: a sync from a restored cache needs no repository. One the cache holds is
// relocated all the same where it can be, since the cache may drop it before the fetch (a
// damaged entry, a prune), which then reads it from the repository.
func (p *Plan) Relocate(l *repo.Lock, sources map[string]*fetch.Source, cache *fetch.Cache) error {
	for i, pk := range p.install {
		src, from, ok := sources[pk.Repo], "", false
		if r, in := l.Of(pk.Repo); in {
			from, ok = r.URL, src != nil
		}
		if !ok {
			continue
		}
		moved, err := src.Relocate(pk, from)
		switch {
		case err == nil:
			p.install[i] = moved
		case cache == nil || !cache.Has(pk.SHA256):
			return err
		}
	}
	return nil
}

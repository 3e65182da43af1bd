package repo

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// maxResolveWork bounds the checks of a version against a need that Resolve makes, so an
// index built to make the search exponential makes it give up, within seconds, instead of
// running for ever.
const maxResolveWork = 20_000_000

// errGaveUp stops a search that spent maxResolveWork.
var errGaveUp = errors.New("search too long")

// Resolve returns the packages needed for reqs: each requirement and its dependencies,
// transitively, at the newest versions satisfying every constraint on that name (releases
// before pre-releases: a pre-release is taken only as preferred says), ordered
// so every package comes after all its dependencies and, among packages that do not
// depend on each other, by name.
//
// Requirements on the same name combine. Names are decided in the order they are first
// required (reqs by name, then dependencies breadth-first), each at its newest version
// that keeps every constraint satisfiable; when a later constraint rules a decision out,
// Resolve backtracks and tries the next older version. It gives up, with an error, on an
// index that would keep it searching for more than a few seconds.
func (ix *Index) Resolve(reqs []Requirement) ([]Package, error) {
	pkgs, err := newResolver(ix).resolve(reqs)
	if err != nil {
		return nil, fmt.Errorf("repo: %w", err)
	}
	return pkgs, nil
}

// ResolveInstalled is Resolve for an install into a root that holds installed, one record
// per name: the installed packages stay, every depends of theirs still holds, and a name
// reqs does not ask for keeps its installed version unless a need rules that out, so that
// an install moves nothing it does not have to. The result holds the installed packages
// too, changed or not. An installed version the index no longer has can still be kept.
func (ix *Index) ResolveInstalled(installed []Package, reqs []Requirement) ([]Package, error) {
	byName := make(map[string]Package, len(installed))
	for _, p := range installed {
		byName[p.Name] = p
	}
	r := newResolver(withInstalled(ix, byName))
	r.use(installed)
	var keep []Requirement
	for _, p := range installed {
		if slices.ContainsFunc(reqs, func(q Requirement) bool { return q.Name == p.Name }) {
			continue
		}
		r.prefer[p.Name] = p.Version
		keep = append(keep, Requirement{Name: p.Name})
	}
	slices.SortFunc(keep, func(a, b Requirement) int { return strings.Compare(a.Name, b.Name) })
	pkgs, err := r.resolve(reqs, keep...)
	if err != nil {
		return nil, fmt.Errorf("repo: %w", err)
	}
	return pkgs, nil
}

// need is a requirement on a name and who imposed it: by names the package as "name
// version" and level is its decision's index in the queue; by is "" and level -1 for
// the caller's requirements.
type need struct {
	req   Requirement
	by    string
	level int
}

func (n need) String() string {
	if n.by == "" {
		return n.req.String() + " (requested)"
	}
	return n.req.String() + " (required by " + n.by + ")"
}

// choice is a selected package with its parsed depends and its decision's level.
type choice struct {
	pkg   Package
	deps  []Requirement
	level int
}

// levels is a set of decision levels: those a failure depends on.
type levels map[int]bool

func (l levels) add(m levels) {
	for k := range m {
		l[k] = true
	}
}

// softError is a failure that a different version of an earlier decision may avoid.
type softError struct{ error }

// resolver searches depth first for a selection that meets every need. A failure
// carries the levels whose decisions caused it, and the search backs up straight to the
// latest of them: versions tried at the levels in between cannot help (conflict-directed
// backjumping).
type resolver struct {
	versions map[string][]Package // newest first
	prefer   map[string]string    // name → the version tried first (ResolveInstalled)
	welcome  map[string][]string  // name → releases whose pre-releases rank with releases (see welcomeFor)
	needs    map[string][]need
	chosen   map[string]choice
	queue    []string // names in the order they are decided
	queued   map[string]bool
	log      []string // the name of each need added, for undo
	work     int      // version checks made, against maxResolveWork
	hard     error    // first failure whose message holds whatever else is chosen
	soft     error    // first softError
}

// mark records how far the log and the queue went, for undo.
type mark struct{ log, queue int }

func newResolver(ix *Index) *resolver {
	return &resolver{
		versions: ix.versions(),
		prefer:   make(map[string]string),
		welcome:  make(map[string][]string),
		needs:    make(map[string][]need),
		chosen:   make(map[string]choice),
		queued:   make(map[string]bool),
	}
}

// use welcomes the pre-releases of the release of each pre-release among pkgs, installed
// or locked: a user who took one stays on them until the release, never moved back.
func (r *resolver) use(pkgs []Package) {
	for _, p := range pkgs {
		r.welcomeFor(p.Name, releaseOf(p.Version))
	}
}

// welcomeFor adds rels to the releases whose pre-releases rank with the releases of name.
// Backtracking keeps them, so that the version chosen does not depend on the order in
// which names are decided: a need found late re-ranks the candidates left (solve).
func (r *resolver) welcomeFor(name string, rels []string) {
	for _, rel := range rels {
		if !slices.Contains(r.welcome[name], rel) {
			r.welcome[name] = append(r.welcome[name], rel)
		}
	}
}

// resolve selects packages for reqs and for keep, names that must be in the selection at
// any version, decided after reqs.
func (r *resolver) resolve(reqs []Requirement, keep ...Requirement) ([]Package, error) {
	reqs = slices.Clone(reqs)
	slices.SortStableFunc(reqs, func(a, b Requirement) int { return strings.Compare(a.Name, b.Name) })
	for _, q := range append(slices.Clip(reqs), keep...) {
		if _, err := r.require(need{q, "", -1}); err != nil {
			return nil, err
		}
	}
	if ok, _ := r.solve(0); !ok {
		return nil, r.failure(reqs)
	}
	return r.order()
}

// solve decides queue[i:], trying each candidate of queue[i] newest first. On failure it
// returns the earlier levels the failure depends on.
func (r *resolver) solve(i int) (bool, levels) {
	if i == len(r.queue) {
		return true, nil
	}
	name := r.queue[i]
	blame := r.imposers(name)
	cands, welcomed := r.candidates(name), len(r.welcome[name])
	for k := 0; k < len(cands); k++ {
		p := cands[k]
		if r.work > maxResolveWork {
			return false, nil
		}
		m := mark{len(r.log), len(r.queue)}
		cause, err := r.choose(p, i)
		if err == nil {
			var ok bool
			if ok, cause = r.solve(i + 1); ok {
				return true, nil
			}
		}
		r.note(err)
		r.undo(m, name)
		if err == nil && !cause[i] {
			return false, cause
		}
		blame.add(cause)
		if n := len(r.welcome[name]); n != welcomed { // a need asked for pre-releases of name
			welcomed = n
			tried := slices.Clip(cands[:k+1])
			cands = append(tried, slices.DeleteFunc(r.candidates(name), func(q Package) bool {
				return slices.ContainsFunc(tried, func(t Package) bool { return t.Version == q.Version })
			})...)
		}
	}
	delete(blame, i)
	return false, blame
}

// choose selects p at level i and adds the needs of its depends. On failure it returns
// the levels the failure depends on besides i.
func (r *resolver) choose(p Package, i int) (levels, error) {
	deps, err := parseDepends(p)
	if err != nil {
		return nil, err
	}
	r.chosen[p.Name] = choice{p, deps, i}
	by := p.Name + " " + p.Version
	for _, d := range deps {
		if cause, err := r.require(need{d, by, i}); err != nil {
			return cause, err
		}
	}
	return nil, nil
}

func parseDepends(p Package) ([]Requirement, error) {
	deps := make([]Requirement, 0, len(p.Depends))
	for _, s := range p.Depends {
		d, err := parseRequirement(s)
		if err != nil {
			return nil, fmt.Errorf("package %s %s: depends: %v", p.Name, p.Version, err)
		}
		deps = append(deps, d)
	}
	return deps, nil
}

// require adds n and queues its name. It fails when no version meets every need on the
// name, or when the version already chosen does not meet n, and then returns the levels
// of the decisions involved.
func (r *resolver) require(n need) (levels, error) {
	name := n.req.Name
	if r.work > maxResolveWork {
		return nil, errGaveUp
	}
	r.needs[name] = append(r.needs[name], n)
	r.log = append(r.log, name)
	r.welcomeFor(name, n.req.welcomes())
	if len(r.versions[name]) == 0 {
		if n.by == "" {
			return nil, errors.New(missing(name, r.versions))
		}
		return nil, fmt.Errorf("package %q not found (required by %s)", name, n.by)
	}
	if !slices.ContainsFunc(r.versions[name], func(p Package) bool { return r.allowed(name, p.Version) }) {
		return r.imposers(name), r.clash(name)
	}
	if c, ok := r.chosen[name]; ok && !n.req.Allows(c.pkg.Version) {
		cause := r.imposers(name)
		cause[c.level] = true
		return cause, softError{fmt.Errorf("%s requires %s, which excludes the chosen %s %s", n.by, n.req, name, c.pkg.Version)}
	}
	if !r.queued[name] {
		r.queued[name] = true
		r.queue = append(r.queue, name)
	}
	return nil, nil
}

// imposers returns the levels of the decisions that imposed needs on name.
func (r *resolver) imposers(name string) levels {
	l := levels{}
	for _, n := range r.needs[name] {
		if n.level >= 0 {
			l[n.level] = true
		}
	}
	return l
}

// candidates returns the versions of name that meet every need on it, newest first with
// releases before pre-releases (see preferred), but for a preferred one, first.
func (r *resolver) candidates(name string) []Package {
	var ok []Package
	for _, p := range r.versions[name] {
		if r.allowed(name, p.Version) {
			ok = append(ok, p)
		}
	}
	ok = preferred(ok, r.welcome[name])
	if i := slices.IndexFunc(ok, func(p Package) bool { return p.Version == r.prefer[name] }); i > 0 {
		p := ok[i]
		ok = slices.Insert(slices.Delete(ok, i, i+1), 0, p)
	}
	return ok
}

func (r *resolver) allowed(name, version string) bool {
	r.work += 1 + len(r.needs[name])
	for _, n := range r.needs[name] {
		if !n.req.Allows(version) {
			return false
		}
	}
	return true
}

// undo reverts the choice of name and everything added since m.
func (r *resolver) undo(m mark, name string) {
	for _, n := range r.log[m.log:] {
		r.needs[n] = r.needs[n][:len(r.needs[n])-1]
	}
	for _, n := range r.queue[m.queue:] {
		delete(r.queued, n)
	}
	r.log, r.queue = r.log[:m.log], r.queue[:m.queue]
	delete(r.chosen, name)
}

// note keeps the first failure of each kind.
func (r *resolver) note(err error) {
	_, soft := err.(softError)
	switch {
	case err == nil:
	case soft && r.soft == nil:
		r.soft = err
	case !soft && r.hard == nil:
		r.hard = err
	}
}

// failure explains why solve found no selection: the first failure on the path that
// preferred the newest versions, unless the search gave up.
func (r *resolver) failure(reqs []Requirement) error {
	switch {
	case r.work > maxResolveWork && r.hard != nil && r.hard != errGaveUp:
		return fmt.Errorf("resolving %s: gave up after %d version checks; first conflict: %v", joinReqs(reqs), maxResolveWork, r.hard)
	case r.work > maxResolveWork:
		return fmt.Errorf("resolving %s: gave up after %d version checks", joinReqs(reqs), maxResolveWork)
	case r.hard != nil:
		return r.hard
	case r.soft != nil:
		return r.soft
	}
	return fmt.Errorf("resolving %s: no selection satisfies every constraint", joinReqs(reqs))
}

// maxClashNeeds bounds the needs a conflict message lists.
const maxClashNeeds = 8

// clash names the constrained needs on name; together they allow no version.
func (r *resolver) clash(name string) error {
	var parts []string
	for _, n := range r.needs[name] {
		if len(n.req.Constraints) > 0 {
			parts = append(parts, n.String())
		}
	}
	if len(parts) > maxClashNeeds {
		parts = append(parts[:maxClashNeeds-1], fmt.Sprintf("%d more", len(parts)-maxClashNeeds+1))
	}
	return fmt.Errorf("no version of %q satisfies %s; %s", name, joinList(parts, "and"), offered(r.versions[name]))
}

// joinList joins as "a", "a and b", "a, b and c", with conj for "and".
func joinList(s []string, conj string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " " + conj + " " + s[len(s)-1]
}

func joinReqs(reqs []Requirement) string {
	s := make([]string, len(reqs))
	for i, q := range reqs {
		s[i] = q.String()
	}
	return strings.Join(s, ", ")
}

// order sorts the chosen packages topologically, taking the first ready name each time.
func (r *resolver) order() ([]Package, error) {
	waiting, users := r.graph()
	var ready []string
	for name, n := range waiting {
		if n == 0 {
			ready = append(ready, name)
		}
	}
	slices.Sort(ready)
	var out []Package
	for len(ready) > 0 {
		name := ready[0]
		ready = ready[1:]
		out = append(out, r.chosen[name].pkg)
		for _, u := range users[name] {
			if waiting[u]--; waiting[u] == 0 {
				i, _ := slices.BinarySearch(ready, u)
				ready = slices.Insert(ready, i, u)
			}
		}
	}
	if len(out) < len(r.chosen) {
		return nil, r.cycle(waiting)
	}
	return out, nil
}

// graph counts the dependencies of each chosen package and lists the users of each.
func (r *resolver) graph() (waiting map[string]int, users map[string][]string) {
	waiting = make(map[string]int, len(r.chosen))
	users = make(map[string][]string)
	for name, c := range r.chosen {
		deps := depNames(c.deps)
		waiting[name] = len(deps)
		for _, d := range deps {
			users[d] = append(users[d], name)
		}
	}
	return waiting, users
}

// depNames returns the distinct names in deps, sorted.
func depNames(deps []Requirement) []string {
	names := make([]string, len(deps))
	for i, d := range deps {
		names[i] = d.Name
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// cycle reports a cycle among the packages order could not place. Each of them waits on
// another, so following the first waiting dependency from the first name must repeat.
func (r *resolver) cycle(waiting map[string]int) error {
	var stuck []string
	for name, n := range waiting {
		if n > 0 {
			stuck = append(stuck, name)
		}
	}
	name := slices.Min(stuck)
	var path []string
	seen := make(map[string]int)
	for {
		if i, ok := seen[name]; ok {
			path = append(path[i:], name)
			return fmt.Errorf("dependency cycle: %s", strings.Join(path, " -> "))
		}
		seen[name] = len(path)
		path = append(path, name)
		name = r.nextWaiting(name, waiting)
	}
}

func (r *resolver) nextWaiting(name string, waiting map[string]int) string {
	for _, d := range depNames(r.chosen[name].deps) {
		if waiting[d] > 0 {
			return d
		}
	}
	panic("repo: " + name + " waits on no dependency")
}

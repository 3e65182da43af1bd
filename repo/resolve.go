package repo

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"pkg/internal/units"
)

// maxResolveWork bounds the versions Resolve looks at and the checks of a version against
// a need it makes, so an index built to make the search exponential makes it give up,
// within seconds, instead of running for ever.
const maxResolveWork = 20_000_000

// errGaveUp stops a search that spent maxResolveWork.
var errGaveUp = errors.New("search too long")

// Resolve returns the packages needed for reqs: each requirement and its dependencies,
// transitively, at the newest versions satisfying every constraint on that name (releases
// before pre-releases: a pre-release is taken only as preferred says), ordered
// so every package comes after all its dependencies and, among packages that do not
// depend on each other, by name; packages that depend on each other in a cycle come
// together, by name.
//
// Requirements on the same name combine. Names are decided in the order they are first
// required (reqs by name, then dependencies breadth-first), each at its newest version
// that keeps every constraint satisfiable; when a later constraint rules a decision out,
// Resolve backtracks and tries the next older version. A dependency that a package
// chosen already meets (Requirement.Met: by name, or by its provides) needs nothing
// more; else one with alternatives, or on a name that packages provide, is a decision of
// its own, taken in the same order: each alternative in turn, the package of its name
// first, then the packages providing it, those required already first, then by name. Two
// packages one of whose conflicts matches the other (Met again) are never chosen
// together. It gives up, with an error, on an index that would keep it searching for
// more than a few seconds.
//
// The requirements on npm packages (NAME@npm:RANGE, or a name ix has only npm versions
// of), of reqs and of the packages chosen, go to the npm resolver instead (npmresolve.go),
// whose instances, several versions of a name where ranges need them, come first.
func (ix *Index) Resolve(reqs []Requirement) ([]Package, error) {
	return newResolver(ix).resolve(reqs)
}

// resolveIn is Resolve in versions, ix.versions() of an index.
func resolveIn(versions map[string][]Package, reqs []Requirement) ([]Package, error) {
	return resolverFor(versions).resolve(reqs)
}

// ResolveInstalled is Resolve for an install into a root that holds installed, one record
// per name: the installed packages stay, every depends of theirs still holds, and a name
// reqs does not ask for keeps its installed version unless a need rules that out, so that
// an install moves nothing it does not have to. The result holds the installed packages
// too, changed or not. An installed version the index no longer has can still be kept. A
// name reqs does not ask for stays within its hold, if holds has one (as Upgrade takes them).
// A name reqs pin to a repository ("b/tool": ix takes it from that one alone, Merge) keeps
// its installed package only where ix has it, version and archive: else the request moves
// it to one ix has, as it would from another version.
//
// The installed npm instances stay too, each preferred where a range it satisfies is
// resolved (see the npm resolver), but for a held one that a requirement of reqs would
// take with another constraint than its hold (reheld): that requirement replaces the hold
// and takes the newest version it allows, and the instance, preferred still by the ranges
// of the others, is in the result only where an edge of the result leads to it.
func (ix *Index) ResolveInstalled(installed []Package, reqs []Requirement, holds ...Hold) ([]Package, error) {
	byKey := make(map[string]Package, len(installed))
	for _, p := range installed {
		if p.Kind == KindNPM || !pinnedAway(ix, reqs, p) {
			byKey[p.Key()] = p
		}
	}
	npm, installed := splitInstances(installed)
	r := newResolver(withInstalled(ix, byKey))
	r.use(installed)
	for _, p := range reheld(npm, reqs, holds) {
		r.npm.renew = append(r.npm.renew, p.Name)
		r.npm.loose = append(r.npm.loose, p.Key())
	}
	r.npm.prefer(npm)
	var keep []Requirement
	for _, p := range installed {
		if slices.ContainsFunc(reqs, func(q Requirement) bool { return q.Name == p.Name }) {
			continue
		}
		r.prefer[p.Name] = p.Version
		if h, ok := holdOf(holds, p); ok {
			keep = append(keep, h)
		} else {
			keep = append(keep, Requirement{Name: p.Name})
		}
	}
	slices.SortFunc(keep, func(a, b Requirement) int { return strings.Compare(a.Name, b.Name) })
	return r.resolve(reqs, keep...)
}

// reheld returns the held instances of npm, installed, whose holds a requirement of reqs
// replaces: one on the name with other constraints, which would take the instance, the
// newest of npm it allows.
func reheld(npm []Package, reqs []Requirement, holds []Hold) []Package {
	byName := make(map[string][]Package) // newest first
	for _, p := range npm {
		byName[p.Name] = append(byName[p.Name], p)
	}
	for _, vs := range byName {
		slices.SortFunc(vs, func(a, b Package) int { return compareKind(b, a) })
	}
	var out []Package
	for _, q := range reqs {
		p, ok := newestMeeting(byName[q.Name], q)
		if !ok || slices.ContainsFunc(out, func(o Package) bool { return o.Key() == p.Key() }) {
			continue
		}
		if h, held := holdOf(holds, p); held && !slices.Equal(q.Constraints, h.Constraints) {
			out = append(out, p)
		}
	}
	return out
}

// pinnedAway reports whether reqs pin p's name to a repository and ix, which takes the
// name from that repository alone, lacks p's version or has it from another archive.
func pinnedAway(ix *Index, reqs []Requirement, p Package) bool {
	if !slices.ContainsFunc(reqs, func(q Requirement) bool { return q.Name == p.Name && q.Repo != "" }) {
		return false
	}
	return !slices.ContainsFunc(ix.Packages, func(q Package) bool {
		return q.Name == p.Name && q.Version == p.Version && q.SHA256 == p.SHA256
	})
}

// need is a requirement on a name and who imposed it: by names the package as "name
// version" and level is its decision's index in the queue; by is "" and level -1 for
// the caller's requirements. req is one alternative, on the name, or, when virtual, on a
// name the package must provide. No version of the name outside [lo, hi) meets it (bounds).
type need struct {
	req     Requirement
	virtual bool
	by      string
	level   int
	lo, hi  int
}

// meets reports whether p, a version of the need's name, meets n.
func (n need) meets(p Package) bool {
	if n.virtual {
		return n.req.providedBy(p.Kind, p.Provides)
	}
	return n.req.AllowsOf(p.Kind, p.Version)
}

// orNeed is a dependency with alternatives, or on a provided name, that is a decision of
// its own (see Resolve): by and level as for a need.
type orNeed struct {
	req   Requirement
	by    string
	level int
}

// orKey is the prefix of an orNeed's entry in the queue, "|" and its index in ors: no
// package name holds a "|".
const orKey = "|"

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

func (e softError) Unwrap() error { return e.error }

// resolver searches depth first for a selection that meets every need. A failure
// carries the levels whose decisions caused it, and the search backs up straight to the
// latest of them: versions tried at the levels in between cannot help (conflict-directed
// backjumping).
type resolver struct {
	versions  map[string][]Package    // newest first
	npm       *npmResolver            // the requirements on npm packages (withNPM)
	elsewhere func(name string) error // a name's *platformError, if any; may be nil
	prefer    map[string]string       // name → the version tried first (ResolveInstalled)
	tries     map[string]int          // name → versions chosen, for the message of a search given up
	welcome   map[string][]string     // name → releases whose pre-releases rank with releases (see welcomeFor)
	relations
	needs  map[string][]need
	ors    []orNeed
	chosen map[string]choice
	queue  []string // names, and orKey entries, in the order they are decided
	queued map[string]bool
	log    []string // the name of each need added, for undo
	work   int      // version checks made, against maxResolveWork
	hard   error    // first failure whose message holds whatever else is chosen
	soft   error    // first softError
}

// mark records how far the log, the queue and ors went, for undo.
type mark struct{ log, queue, ors int }

func newResolver(ix *Index) *resolver {
	r := resolverFor(ix.versions())
	r.elsewhere = ix.elsewhere
	return r
}

// resolverFor returns a resolver over versions, ix.versions() of an index, which it does
// not change.
func resolverFor(versions map[string][]Package) *resolver {
	return &resolver{
		versions:  versions,
		npm:       newNPMResolver(versions),
		relations: relationsOf(versions),
		prefer:    make(map[string]string),
		tries:     make(map[string]int),
		welcome:   make(map[string][]string),
		needs:     make(map[string][]need),
		chosen:    make(map[string]choice),
		queued:    make(map[string]bool),
	}
}

// use welcomes the pre-releases of the release of each pre-release among pkgs, installed
// or locked: a user who took one stays on them until the release, never moved back.
func (r *resolver) use(pkgs []Package) {
	for _, p := range pkgs {
		r.welcomeFor(p.Name, releaseOf(p))
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
	for _, q := range reqs {
		if len(q.Or) > 0 {
			return nil, &reasonError{msg: fmt.Sprintf("requirement %q: alternatives are allowed only in a package's depends", q), reason: ErrAlternatives}
		}
	}
	npm, reqs := splitNPM(reqs, r.versions)
	slices.SortStableFunc(npm, func(a, b Requirement) int { return strings.Compare(a.Name, b.Name) })
	reqs = slices.Clone(reqs)
	slices.SortStableFunc(reqs, func(a, b Requirement) int { return strings.Compare(a.Name, b.Name) })
	for _, q := range append(slices.Clip(reqs), keep...) {
		if _, err := r.require(q.Name, need{req: q, level: -1}); err != nil {
			return nil, err
		}
	}
	if ok, _ := r.solve(0); !ok {
		return nil, r.failure(reqs)
	}
	return r.withNPM(npm, r.order())
}

// withNPM returns pkgs, the packages chosen, after the npm instances that npm, the
// caller's requirements on npm packages, and the npm depends of pkgs resolve to (with
// those r.npm holds already), which depend on nothing of pkgs.
func (r *resolver) withNPM(npm []Requirement, pkgs []Package) ([]Package, error) {
	by := make([]string, len(npm))
	for _, p := range pkgs {
		for _, d := range p.Depends {
			if isNPMRequirement(d, r.versions) {
				npm, by = append(npm, d), append(by, p.Name+" "+p.Version)
			}
		}
	}
	if len(npm) == 0 && len(r.npm.keep) == 0 && len(r.npm.held) == 0 {
		return pkgs, nil
	}
	set, err := r.npm.resolve(npm, by)
	if err != nil {
		return nil, err
	}
	return append(set, pkgs...), nil
}

// solve decides queue[i:], trying each candidate of queue[i] in turn (see cursor). On
// failure it returns the earlier levels the failure depends on.
func (r *resolver) solve(i int) (bool, levels) {
	if i == len(r.queue) {
		return true, nil
	}
	name := r.queue[i]
	if strings.HasPrefix(name, orKey) {
		return r.solveOr(i)
	}
	blame := r.imposers(name)
	c, welcomed := r.cursor(name), len(r.welcome[name])
	for {
		if r.work > maxResolveWork {
			return false, nil
		}
		p, more := c.next()
		if !more {
			break
		}
		r.tries[name]++
		m := r.mark()
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
			c.rerank()
		}
	}
	delete(blame, i)
	return false, blame
}

func (r *resolver) mark() mark { return mark{len(r.log), len(r.queue), len(r.ors)} }

// solveOr decides the orNeed queue[i]: nothing when a package chosen meets it, else each
// of its options in turn, as solve does a name's versions.
func (r *resolver) solveOr(i int) (bool, levels) {
	o := r.ors[r.orIndex(i)]
	if _, ok := r.chosenFor(o.req); ok {
		return r.solve(i + 1)
	}
	blame := levels{}
	if o.level >= 0 {
		blame[o.level] = true
	}
	for _, opt := range r.options(o.req) {
		if r.work > maxResolveWork {
			return false, nil
		}
		m := r.mark()
		cause, err := r.require(opt.name, need{req: opt.req, virtual: opt.virtual, by: o.by, level: i})
		if err == nil {
			var ok bool
			if ok, cause = r.solve(i + 1); ok {
				return true, nil
			}
		}
		r.note(err)
		r.undo(m, "")
		if err == nil && !cause[i] {
			return false, cause
		}
		blame.add(cause)
	}
	delete(blame, i)
	return false, blame
}

// orIndex is the index in ors of the orNeed queue[i].
func (r *resolver) orIndex(i int) int {
	k, _ := strconv.Atoi(strings.TrimPrefix(r.queue[i], orKey))
	return k
}

// choose selects p at level i and adds the needs of its depends. On failure it returns
// the levels the failure depends on besides i.
func (r *resolver) choose(p Package, i int) (levels, error) {
	r.chosen[p.Name] = choice{p, p.Depends, i}
	if cause, err := r.conflicts(p); err != nil {
		return cause, err
	}
	by := p.Name + " " + p.Version
	for _, d := range p.Depends {
		if cause, err := r.depend(d, by, i); err != nil {
			return cause, err
		}
	}
	return nil, nil
}

// depend adds d, a dependency of the package by chosen at level i: a need on its name,
// or, with alternatives or on a provided name, an orNeed unless a package chosen meets it.
func (r *resolver) depend(d Requirement, by string, i int) (levels, error) {
	if isNPMRequirement(d, r.versions) { // withNPM's
		return nil, nil
	}
	if len(d.Or) == 0 && len(r.providers[d.Name]) == 0 {
		return r.require(d.Name, need{req: d, by: by, level: i})
	}
	if _, ok := r.chosenFor(d); ok {
		return nil, nil
	}
	if !r.meetable(d) {
		return nil, &MissingError{Name: d.String(), By: by, Providers: r.providersOf(d)}
	}
	r.queue = append(r.queue, orKey+strconv.Itoa(len(r.ors)))
	r.ors = append(r.ors, orNeed{req: d, by: by, level: i})
	return nil, nil
}

// require adds n, a need on name, and queues name. It fails when no version meets every
// need on the name, or when the version already chosen does not meet n, and then returns
// the levels of the decisions involved.
func (r *resolver) require(name string, n need) (levels, error) {
	if r.work > maxResolveWork {
		return nil, errGaveUp
	}
	n.lo, n.hi = r.bounds(name, n)
	r.needs[name] = append(r.needs[name], n)
	r.log = append(r.log, name)
	if !n.virtual {
		r.welcomeFor(name, n.req.welcomes())
	}
	if len(r.versions[name]) == 0 {
		var err error
		if r.elsewhere != nil {
			err = r.elsewhere(name)
		}
		switch {
		case err != nil && n.by != "":
			return nil, fmt.Errorf("%w (required by %s)", err, n.by)
		case err != nil:
			return nil, err
		case n.by == "" && len(r.providers[name]) > 0:
			return nil, &MissingError{Name: name, Near: r.providers[name][:min(len(r.providers[name]), maxNear)]}
		case n.by == "":
			return nil, missing(name, r.versions)
		}
		return nil, &MissingError{Name: name, By: n.by}
	}
	if !r.satisfiable(name) {
		return r.imposers(name), r.clash(name)
	}
	if c, ok := r.chosen[name]; ok && !n.meets(c.pkg) {
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

// satisfiable reports whether some version of name meets every need on it.
func (r *resolver) satisfiable(name string) bool {
	lo, hi := r.span(name)
	for i := lo; i < hi; i++ {
		if r.allowed(name, i) {
			return true
		}
	}
	return false
}

// span returns the range of r.versions[name] outside which no version meets every need.
func (r *resolver) span(name string) (lo, hi int) {
	lo, hi = 0, len(r.versions[name])
	for _, n := range r.needs[name] {
		lo, hi = max(lo, n.lo), min(hi, n.hi)
	}
	return lo, hi
}

// allowed reports whether r.versions[name][i] meets every need on name.
func (r *resolver) allowed(name string, i int) bool {
	p := r.versions[name][i]
	r.work += 1 + len(r.needs[name])
	for _, n := range r.needs[name] {
		if !n.meets(p) {
			return false
		}
	}
	return true
}

// cursor walks the versions of a name that meet every need on it in the order solve
// tries them: the preferred version (ResolveInstalled) first, then newest first with
// releases before pre-releases (see preferred). It checks a version against the needs
// only when it comes to it, so that taking the newest costs one check, not one per
// version. The needs on the name do not change between calls of next: solve undoes what
// each choice added before it asks for the next.
type cursor struct {
	r        *resolver
	name     string
	prefer   int   // index of the preferred version in r.versions[name], or -1
	step     int   // 0: the preferred version; 1: releases and welcomed pre-releases; 2: the rest
	i        int   // next index to look at in steps 1 and 2
	tried    []int // indices next returned
	reranked bool  // the walk started again, skipping tried
	late     bool  // step 1 passed a pre-release for step 2
}

func (r *resolver) cursor(name string) cursor {
	c := cursor{r: r, name: name, prefer: -1}
	if v, ok := r.prefer[name]; ok {
		vs := r.versions[name]
		if i, found := slices.BinarySearchFunc(vs, v, func(p Package, v string) int { return compareFor(p.Kind, v, p.Version) }); found {
			c.prefer = i
		}
	}
	return c
}

// rerank starts the walk again, for a welcome that changed the order of the versions
// not yet tried.
func (c *cursor) rerank() { c.step, c.reranked, c.late = 0, true, false }

// next returns the next version to try, or false when there is none.
func (c *cursor) next() (Package, bool) {
	vs := c.r.versions[c.name]
	lo, hi := c.r.span(c.name)
	if c.step == 0 {
		c.step, c.i = 1, lo
		if k := c.prefer; lo <= k && k < hi && !c.done(k) && c.r.allowed(c.name, k) {
			return c.take(k), true
		}
	}
	for ; c.step == 1 || c.step == 2 && c.late; c.step, c.i = c.step+1, lo {
		for ; c.i < hi; c.i++ {
			k := c.i
			c.r.work++
			late := ranksLate(vs[k], c.r.welcome[c.name])
			c.late = c.late || late
			if k == c.prefer || late != (c.step == 2) || c.done(k) {
				continue
			}
			if c.r.allowed(c.name, k) {
				c.i++
				return c.take(k), true
			}
		}
	}
	return Package{}, false
}

func (c *cursor) take(k int) Package {
	c.tried = append(c.tried, k)
	return c.r.versions[c.name][k]
}

// done reports whether next returned k already, before the walk started again.
func (c *cursor) done(k int) bool { return c.reranked && slices.Contains(c.tried, k) }

// bounds returns the range of r.versions[name] outside which no version meets n. Its
// constraints bound the range exactly but for "!=", and "@" only nearly (1.07 sorts
// among the versions of @1.7; an "@" of a pre-release or revision bounds only below, and
// one of KindDeb not at all);
// those of a virtual need bound provided versions, not the range.
func (r *resolver) bounds(name string, n need) (lo, hi int) {
	vs := r.versions[name]
	lo, hi = 0, len(vs)
	if n.virtual || len(vs) == 0 {
		return lo, hi
	}
	kind := vs[0].Kind
	order := versionOrder(kind)
	for _, c := range n.req.Constraints {
		first := func(past func(v string) bool) int { // the first index, newest first, past c
			return sort.Search(len(vs), func(i int) bool { r.work++; return past(vs[i].Version) })
		}
		lt := func() int { return first(func(v string) bool { return order(v, c.Version) < 0 }) }
		le := func() int { return first(func(v string) bool { return order(v, c.Version) <= 0 }) }
		switch c.Op {
		case "=":
			lo, hi = max(lo, le()), min(hi, lt())
		case "<":
			lo = max(lo, lt())
		case "<=":
			lo = max(lo, le())
		case ">":
			hi = min(hi, le())
		case ">=":
			hi = min(hi, lt())
		case "@": // spellings of v0 ("v1.7" for "1.7") sort on either side of it
			if kind == KindDeb { // dpkg's order keeps no extension beside v0
				continue
			}
			hi = min(hi, first(func(v string) bool { return compareParts(v, c.Version) < 0 }))
			if end, ok := extensionsEnd(c.Version); ok {
				lo = max(lo, first(func(v string) bool { return CompareVersions(v, end) < 0 }))
			}
		}
	}
	return lo, hi
}

// undo reverts the choice of name and everything added since m.
func (r *resolver) undo(m mark, name string) {
	for _, n := range r.log[m.log:] {
		r.needs[n] = r.needs[n][:len(r.needs[n])-1]
	}
	for _, n := range r.queue[m.queue:] {
		delete(r.queued, n)
	}
	r.log, r.queue, r.ors = r.log[:m.log], r.queue[:m.queue], r.ors[:m.ors]
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

// ErrGaveUp is what the error of a resolution that stopped at its budget of version checks
// is: requiring exact versions of the packages it names may let it finish.
var ErrGaveUp = errors.New("repo: resolution gave up")

// gaveUpError is an ErrGaveUp that says where the search was stuck.
type gaveUpError struct {
	reqs    []Requirement
	busiest []string // the packages whose versions it tried most often, at most maxBusiest
	first   error    // the first conflict, or nil
}

func (e *gaveUpError) Error() string {
	msg := fmt.Sprintf("resolving %s: gave up after %d version checks", joinReqs(e.reqs), maxResolveWork)
	if len(e.busiest) > 0 {
		msg += ", backtracking over " + units.List(e.busiest, 0)
	}
	if e.first != nil {
		msg += fmt.Sprintf("; first conflict: %v", e.first)
	}
	return msg
}

func (e *gaveUpError) Is(target error) bool { return target == ErrGaveUp }

// failure explains why solve found no selection: the first failure on the path that
// preferred the newest versions, unless the search gave up.
func (r *resolver) failure(reqs []Requirement) error {
	switch {
	case r.work > maxResolveWork && r.hard != nil && r.hard != errGaveUp:
		return &gaveUpError{reqs, r.busiest(), r.hard}
	case r.work > maxResolveWork:
		return &gaveUpError{reqs, r.busiest(), nil}
	case r.hard != nil:
		return r.hard
	case r.soft != nil:
		return r.soft
	}
	return fmt.Errorf("resolving %s: no selection satisfies every constraint", joinReqs(reqs))
}

// maxBusiest bounds the names busiest lists.
const maxBusiest = 3

// busiest names, for a search given up, the packages whose versions it tried most often,
// most first.
func (r *resolver) busiest() []string {
	var names []string
	for name, n := range r.tries {
		if n > 1 {
			names = append(names, name)
		}
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(r.tries[b]-r.tries[a], strings.Compare(a, b)) })
	return names[:min(len(names), maxBusiest)]
}

// maxClashNeeds bounds the needs a conflict message lists, and the requirements a message
// about a whole resolution does.
const maxClashNeeds = 8

// clash names the constrained needs on name; together they allow no version.
func (r *resolver) clash(name string) error {
	e := &conflictError{Name: name, Offered: r.versions[name]}
	for _, n := range r.needs[name] {
		if len(n.req.Constraints) > 0 || n.virtual {
			e.Needs = append(e.Needs, imposed{Requirement: n.req, By: n.by, Provided: n.virtual})
		}
	}
	if len(e.Needs) > maxClashNeeds {
		e.More = len(e.Needs) - maxClashNeeds + 1
		e.Needs = e.Needs[:maxClashNeeds-1]
	}
	return e
}

// A conflictError is a name no version of which meets every need on it together.
type conflictError struct {
	Name    string
	Needs   []imposed // the constrained requirements on Name
	More    int       // how many more needs there are than Needs lists
	Offered []Package // the versions the index has of Name, newest first
}

// An imposed is a requirement and who imposed it: By names the package as "name version",
// or is "" for a requirement of the caller's. Provided is a requirement on a name the
// package must provide.
type imposed struct {
	Requirement
	By       string
	Provided bool
}

func (n imposed) String() string {
	req := n.Requirement.String()
	if n.Provided {
		req = "providing " + req
	}
	if n.By == "" {
		return req + " (requested)"
	}
	return req + " (required by " + n.By + ")"
}

func (e *conflictError) Error() string {
	parts := make([]string, 0, len(e.Needs)+1)
	for _, n := range e.Needs {
		parts = append(parts, n.String())
	}
	return fmt.Sprintf("no version of %q satisfies %s; %s", e.Name, units.List(parts, e.More), offered(e.Offered))
}

// A MissingError is a package name the resolver found no version of in the index.
type MissingError struct {
	Name      string
	By        string   // the package that requires it, as "name version"; "" if the caller does
	Near      []string // names in the index close to Name, when the caller requires it
	Providers []string // packages that provide a name it asks for, though at no version it allows
	Range     string   // the npm range of a requirement on an npm package that no version satisfies
}

func (e *MissingError) Error() string {
	if e.Range != "" {
		return fmt.Sprintf("no version of %q satisfies %s (%s)", e.Name, e.Range, e.by())
	}
	if e.By != "" && len(e.Providers) > 0 {
		return fmt.Sprintf("package %q not found (required by %s); provided by %s, at no version it allows", e.Name, e.By, units.List(e.Providers, 0))
	}
	if e.By != "" {
		return fmt.Sprintf("package %q not found (required by %s)", e.Name, e.By)
	}
	return fmt.Sprintf("package %q not found", e.Name) + didYouMean(e.Near)
}

// by says who requires the missing package, for a message.
func (e *MissingError) by() string {
	if e.By == "" {
		return "requested"
	}
	return "required by " + e.By
}

// orList joins as "a", "a or b", "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// joinReqs lists reqs, up to maxClashNeeds of them: "a, b and 12 more".
func joinReqs(reqs []Requirement) string {
	s := make([]string, len(reqs))
	for i, q := range reqs {
		s[i] = q.String()
	}
	return units.Some(s, maxClashNeeds-1)
}

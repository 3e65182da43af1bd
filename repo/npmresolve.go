package repo

import (
	"maps"
	"slices"
)

// The npm resolver (docs/design.md, "The npm resolver"): the requirements on npm
// packages are resolved as npm and pnpm resolve them, not by resolver's search. Each edge
// (a dependent instance, a name and a range) takes the newest version of the name that
// satisfies the range among the instances already in the set (installed, locked, or
// chosen in this resolution), else the newest the index offers: so one instance serves
// every range it satisfies (dedupe), and two ranges no one version satisfies take two
// instances. A cycle is no matter; an optional dependency that nothing satisfies, or whose
// own dependencies cannot be met, is left out with everything it brought; a required one
// is a *MissingError naming the dependent, the name and the range.

// npmResolver chooses the npm instances of a resolution.
type npmResolver struct {
	versions map[string][]Package // the index's versions of each name, newest first
	set      map[string][]Package // name → the instances of the set, newest first
	keep     []Package            // installed or locked instances, resolved first
	renew    []string             // names whose caller's requirements take the index's newest they allow, not the set's
	loose    []string             // keys of instances of keep that stay only where the result leads to them (drop)
	held     []Requirement        // holds taken from the index after everything else, so that a range that wants newer takes another instance
	added    []string             // the keys of the instances chosen, in order, for undo
	visited  map[string]bool      // keys whose dependencies are resolved or being resolved
}

func newNPMResolver(versions map[string][]Package) *npmResolver {
	return &npmResolver{versions: versions, set: make(map[string][]Package), visited: make(map[string]bool)}
}

// prefer puts the instances pkgs in the set before anything is resolved: a range they
// satisfy takes them, and their own dependencies are resolved first.
func (n *npmResolver) prefer(pkgs []Package) {
	for _, p := range pkgs {
		if n.insert(p) {
			n.keep = append(n.keep, p)
		}
	}
}

// insert adds p to the set, newest first; false if an instance of its key is there.
func (n *npmResolver) insert(p Package) bool {
	vs := n.set[p.Name]
	if slices.ContainsFunc(vs, func(q Package) bool { return q.Version == p.Version }) {
		return false
	}
	i := slices.IndexFunc(vs, func(q Package) bool { return compareKind(p, q) > 0 })
	if i < 0 {
		i = len(vs)
	}
	n.set[p.Name] = slices.Insert(vs, i, p)
	return true
}

// remove takes the instance key out of the set.
func (n *npmResolver) remove(key string) {
	for name, vs := range n.set {
		if i := slices.IndexFunc(vs, func(q Package) bool { return q.Key() == key }); i >= 0 {
			n.set[name] = slices.Delete(vs, i, i+1)
			if len(n.set[name]) == 0 {
				delete(n.set, name)
			}
			delete(n.visited, key)
			return
		}
	}
}

// resolve resolves reqs, the requirements of the caller (by "") and of the packages that
// are not npm's (by names each one's dependent, "name version"), with the instances put
// in the set by prefer, and returns the set in dependency order.
func (n *npmResolver) resolve(reqs []Requirement, by []string) ([]Package, error) {
	for _, p := range n.keep {
		if err := n.visit(p); err != nil {
			return nil, err
		}
	}
	took := make([]Package, 0, len(reqs))
	for i, q := range reqs {
		resolve := n.edge
		if by[i] == "" && slices.Contains(n.renew, q.Name) {
			resolve = n.take
		}
		p, err := resolve(q, by[i])
		if err != nil {
			return nil, err
		}
		took = append(took, p)
	}
	for _, q := range n.held {
		p, err := n.take(q, "")
		if err != nil {
			return nil, err
		}
		took = append(took, p)
	}
	n.drop(took)
	return n.order(), nil
}

// drop takes out of the set, when n.loose names instances, those that neither took (what
// reqs resolved to), the instances of keep not loose, nor the edges of what they reach
// lead to.
func (n *npmResolver) drop(took []Package) {
	if len(n.loose) == 0 {
		return
	}
	var all []Package
	for _, vs := range n.set {
		all = append(all, vs...)
	}
	edges := Edges(all)
	todo := slices.Clone(took)
	for _, p := range n.keep {
		if !slices.Contains(n.loose, p.Key()) {
			todo = append(todo, p)
		}
	}
	reached := make(map[string]bool)
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if !reached[p.Key()] {
			reached[p.Key()] = true
			todo = slices.AppendSeq(todo, maps.Values(edges[p.Key()]))
		}
	}
	for _, p := range all {
		if !reached[p.Key()] {
			n.remove(p.Key())
		}
	}
}

// visit resolves the dependencies of p, an instance of the set, once.
func (n *npmResolver) visit(p Package) error {
	if n.visited[p.Key()] {
		return nil
	}
	n.visited[p.Key()] = true
	by := p.Name + " " + p.Version
	for _, d := range npmDepends(p) {
		if _, err := n.edge(d, by); err != nil {
			return err
		}
	}
	for _, d := range p.Optional {
		mark := len(n.added)
		if _, err := n.edge(d, by); err != nil {
			for _, key := range slices.Backward(n.added[mark:]) {
				n.remove(key)
			}
			n.added = n.added[:mark]
		}
	}
	return nil
}

// edge resolves the requirement d of by and returns the instance it takes.
func (n *npmResolver) edge(d Requirement, by string) (Package, error) {
	if p, ok := newestMeeting(n.set[d.Name], d); ok {
		return p, nil
	}
	return n.take(d, by)
}

// take resolves the requirement d of by to the newest version of the index it allows,
// which joins the set unless an instance of it is there, and returns it.
func (n *npmResolver) take(d Requirement, by string) (Package, error) {
	p, ok := newestMeeting(n.versions[d.Name], d)
	if !ok {
		return Package{}, n.missing(d, by)
	}
	if !n.insert(p) {
		return p, nil
	}
	n.added = append(n.added, p.Key())
	return p, n.visit(p)
}

// missing is the *MissingError of d, a requirement of by that nothing meets.
func (n *npmResolver) missing(d Requirement, by string) error {
	rng, _ := d.NPMRange()
	return &MissingError{Name: d.Name, By: by, Range: rng}
}

// newestMeeting returns the newest of vs, newest first, that d allows: of a requirement
// without a range, the newest release, else the newest pre-release (npm's latest).
func newestMeeting(vs []Package, d Requirement) (Package, bool) {
	if len(d.Constraints) == 0 {
		if i := slices.IndexFunc(vs, func(p Package) bool { _, pre := PreRelease(p.Version); return !pre }); i >= 0 {
			return vs[i], true
		}
	}
	i := slices.IndexFunc(vs, func(p Package) bool { return d.Allows(p.Version) })
	if i < 0 {
		return Package{}, false
	}
	return vs[i], true
}

// order returns the set with every instance after the instances its edges lead to, the
// instances of a cycle together, by key.
func (n *npmResolver) order() []Package {
	var all []Package
	for _, name := range slices.Sorted(maps.Keys(n.set)) {
		all = append(all, n.set[name]...)
	}
	edges := Edges(all)
	byKey := make(map[string]Package, len(all))
	var keys []string
	for _, p := range all {
		byKey[p.Key()] = p
		keys = append(keys, p.Key())
	}
	slices.Sort(keys)
	t := tarjan{deps: func(k string) []string {
		var on []string
		for _, q := range edges[k] {
			on = append(on, q.Key())
		}
		slices.Sort(on)
		return on
	}, index: make(map[string]int), low: make(map[string]int), on: make(map[string]bool), of: make(map[string]int)}
	for _, k := range keys {
		if _, seen := t.index[k]; !seen {
			t.visit(k)
		}
	}
	out := make([]Package, 0, len(all))
	for _, comp := range t.comps { // Tarjan gives each component after those it leads to
		for _, k := range comp {
			out = append(out, byKey[k])
		}
	}
	return out
}

// npmDepends are the dependencies of an npm instance that must be met: its depends and
// its peers (pulled in and linked as npm 7 and later do).
func npmDepends(p Package) []Requirement {
	return append(slices.Clip(p.Depends), p.Peers...)
}

// Edges returns, for each npm instance of set (by Key), the instance of set each of its
// dependencies (depends, peers and optional ones) resolves to, by the dependency's name:
// the newest instance of set that its range allows, as the npm resolver chose it. A
// dependency that no instance meets (an optional one left out) has no edge; a package that
// is not npm's has none.
func Edges(set []Package) map[string]map[string]Package {
	byName := make(map[string][]Package)
	for _, p := range set {
		if p.npm() {
			byName[p.Name] = append(byName[p.Name], p)
		}
	}
	for _, vs := range byName {
		slices.SortFunc(vs, func(a, b Package) int { return compareKind(b, a) })
	}
	out := make(map[string]map[string]Package)
	for _, p := range set {
		if !p.npm() {
			continue
		}
		m := make(map[string]Package)
		for _, d := range append(npmDepends(p), p.Optional...) {
			if q, ok := newestMeeting(byName[d.Name], d); ok {
				if _, dup := m[d.Name]; !dup {
					m[d.Name] = q
				}
			}
		}
		out[p.Key()] = m
	}
	return out
}

// splitNPM returns, of reqs, the requirements on npm packages (npm ranges, or names the
// index has only npm versions of) and the others.
func splitNPM(reqs []Requirement, versions map[string][]Package) (npm, other []Requirement) {
	for _, q := range reqs {
		if isNPMRequirement(q, versions) {
			npm = append(npm, q)
		} else {
			other = append(other, q)
		}
	}
	return npm, other
}

// isNPMRequirement reports whether q is on an npm package: an npm range, or a name the
// index has only npm versions of.
func isNPMRequirement(q Requirement, versions map[string][]Package) bool {
	if len(q.Or) > 0 {
		return false
	}
	if _, ok := q.NPMRange(); ok {
		return true
	}
	vs := versions[q.Name]
	return len(vs) > 0 && !slices.ContainsFunc(vs, func(p Package) bool { return !p.npm() })
}

// splitInstances returns the npm instances of pkgs and the other packages.
func splitInstances(pkgs []Package) (npm, other []Package) {
	for _, p := range pkgs {
		if p.npm() {
			npm = append(npm, p)
		} else {
			other = append(other, p)
		}
	}
	return npm, other
}

// npmUpgrade returns, of the installed npm instances, those an upgrade of names (every
// name, with none) keeps where they are, a requirement for each it resolves again from
// no installed instance (npmRoots): its hold, or its name, which takes the newest
// release; and the holds of the held ones others lead to, taken once the roots are
// resolved (npmResolver.held).
func npmUpgrade(npm []Package, names []string, holds []Hold, versions map[string][]Package) (pinned []Package, roots, held []Requirement) {
	pinned, free := npmRoots(npm, names, holds, versions)
	led := led(npm)
	for _, p := range free {
		root := Requirement{Name: p.Name}
		h, ok := holdOf(holds, p)
		switch {
		case ok && led[p.Key()]:
			held = append(held, h)
			continue
		case ok:
			root = h
		}
		roots = append(roots, root)
	}
	return pinned, roots, held
}

// led returns the keys of the instances of npm an instance of npm leads to (Edges).
func led(npm []Package) map[string]bool {
	out := make(map[string]bool)
	for _, m := range Edges(npm) {
		for _, q := range m {
			out[q.Key()] = true
		}
	}
	return out
}

// npmRoots returns, of the installed npm instances, those an upgrade of names (every name,
// with none) keeps where they are, and the roots of those it may move (the instances of
// names, and those they lead to): each that no installed instance leads to, and each
// that holds has a hold of, which keeps it whatever range leads to it. An instance of a
// name versions (the index's) lacks stays.
func npmRoots(npm []Package, names []string, holds []Hold, versions map[string][]Package) (pinned, roots []Package) {
	edges := Edges(npm)
	free := make(map[string]bool)
	var todo []Package
	for _, p := range npm {
		if len(names) == 0 || slices.Contains(names, p.Name) {
			todo = append(todo, p)
		}
	}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if free[p.Key()] || len(versions[p.Name]) == 0 {
			continue
		}
		free[p.Key()] = true
		for _, q := range edges[p.Key()] {
			todo = append(todo, q)
		}
	}
	led := led(npm)
	for _, p := range npm {
		_, held := holdOf(holds, p)
		switch {
		case !free[p.Key()]:
			pinned = append(pinned, p)
		case !led[p.Key()] || held:
			roots = append(roots, p)
		}
	}
	return pinned, roots
}

// npm reports whether p is an npm package (KindNPM), of which a root may hold several
// versions.
func (p Package) npm() bool { return p.Kind == KindNPM }

// compareKind orders the versions of a and b, of one kind (Package.CompareVersion).
func compareKind(a, b Package) int { return a.CompareVersion(b) }

package repo

import (
	"cmp"
	"slices"
	"strings"
)

// Outdated is an installed package that the index has a newer version of, or whose
// version the index has from another archive where an upgrade keeps that version.
type Outdated struct {
	Name      string
	Kind      string // the package's kind: "npm" for an npm instance, of which a name may have several
	Installed string
	// Allowed is the newest version an upgrade of every installed package can take that
	// the depends of the installed packages and the requirements the user asked for the
	// packages by allow; Installed when none newer is.
	Allowed string
	Newest  string // the newest version the index has, releases first unless Installed is a pre-release
	Held    string // the requirement that holds it below Newest (Upgrade's holds), if one does
	Origin  string // the local archive file it was installed from, which keeps it at Installed
	// HeldTo is the repository the package was asked from (REPO/NAME), where another has a
	// newer version or where it is Unused: not in use, or no longer offering the package,
	// which keeps it at Installed.
	HeldTo string
	Unused bool
	// Republished is set where Allowed is Installed and the index has that version from
	// another archive or with another entry (Package.SameEntry) than the one installed,
	// which an upgrade installs in its place.
	Republished bool
	// Bare is set where Allowed is Installed, the package was recorded Bare (its entry
	// unknown: Package.Bare) and the index offers that version, whose entry an upgrade
	// records in its place.
	Bare bool
	// Beside is, of an npm instance that stays at Installed by the ranges that lead to it
	// (not Held), the newest version of its name installed beside it, where one is newer.
	Beside string
}

// Outdated returns the installed packages for which ix has a newer version than
// installed, or, where an upgrade keeps the installed version, has it from another archive
// or entry (Republished) or has it for a package recorded Bare (Bare), sorted by name; holds are the requirements the user keeps packages to, as
// Upgrade takes them. Where those cannot hold together with an upgrade (one older than
// what is installed, say), Allowed is what the depends alone allow.
//
// An npm instance is outdated where the index has a newer version of its name; its
// Allowed is the newest version its hold allows, or without one, that every installed
// instance leading to it (Edges) allows; its Beside, where that keeps it, the newer version
// of its name installed.
func (ix *Index) Outdated(installed []Package, holds []Hold) []Outdated {
	npm, installed := splitInstances(installed)
	out := ix.outdated(installed, holds)
	out = append(out, ix.outdatedNPM(npm, holds)...)
	slices.SortFunc(out, func(a, b Outdated) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), compareKind(Package{Kind: a.Kind, Version: a.Installed}, Package{Kind: b.Kind, Version: b.Installed}))
	})
	return out
}

// outdated is Outdated of installed, one package a name.
func (ix *Index) outdated(installed []Package, holds []Hold) []Outdated {
	allowed := make(map[string]string, len(installed))
	byName := make(map[string]Package, len(installed))
	for _, p := range installed {
		byName[p.Name], allowed[p.Name] = p, p.Version
	}
	reqs, free := upgradeReqs(byName, installed, nil, holds)
	plan, err := withInstalled(ix, kept(ix, byName, free)).Resolve(reqs)
	if err != nil {
		plan, _ = ix.Upgrade(installed, nil)
	}
	for _, p := range plan {
		if _, ok := allowed[p.Name]; ok {
			allowed[p.Name] = p.Version
		}
	}
	versions := ix.versions()
	var out []Outdated
	for _, p := range installed {
		vs := preferred(versions[p.Name], releaseOf(p))
		kept := allowed[p.Name] == p.Version
		bare := kept && rerecorded(versions[p.Name], p)
		again := kept && republished(versions[p.Name], p) && (!bare || !slices.ContainsFunc(versions[p.Name], p.sameArchive))
		if !again && !bare && (len(vs) == 0 || compareKind(vs[0], p) <= 0) {
			continue
		}
		o := Outdated{Name: p.Name, Installed: p.Version, Allowed: allowed[p.Name], Newest: p.Version, Republished: again, Bare: bare}
		if len(vs) > 0 && compareKind(vs[0], p) > 0 {
			o.Newest = vs[0].Version
		}
		if h, ok := holdOf(holds, p); ok && !h.AllowsOf(p.Kind, o.Newest) {
			o.Held = h.String()
		}
		out = append(out, o)
	}
	return out
}

// outdatedNPM is Outdated of the npm instances npm.
func (ix *Index) outdatedNPM(npm []Package, holds []Hold) []Outdated {
	versions, edges := ix.versions(), Edges(npm)
	var out []Outdated
	for _, p := range npm {
		vs := versions[p.Name]
		newest, ok := newestMeeting(vs, Requirement{Name: p.Name})
		if !ok || compareKind(newest, p) <= 0 {
			continue
		}
		var ranges []Requirement
		for _, d := range npm {
			for _, r := range append(npmDepends(d), d.Optional...) {
				if q, ok := edges[d.Key()][r.Name]; ok && r.Name == p.Name && q.Key() == p.Key() {
					ranges = append(ranges, r)
				}
			}
		}
		o := Outdated{Name: p.Name, Kind: p.Kind, Installed: p.Version, Allowed: p.Version, Newest: newest.Version}
		if h, ok := holdOf(holds, p); ok {
			ranges = []Requirement{h} // an upgrade keeps a held instance within its hold, whatever leads to it
			if !h.AllowsOf(p.Kind, o.Newest) {
				o.Held = h.String()
			}
		}
		for _, v := range vs {
			if compareKind(v, p) > 0 && !slices.ContainsFunc(ranges, func(r Requirement) bool { return !r.AllowsOf(v.Kind, v.Version) }) {
				o.Allowed = v.Version
				break
			}
		}
		if o.Allowed == o.Installed && o.Held == "" {
			o.Beside = NewerBeside(npm, p)
		}
		out = append(out, o)
	}
	return out
}

// NewerBeside returns the newest version of the npm instance p's name among the npm
// instances of pkgs where it is newer than p's, else "".
func NewerBeside(pkgs []Package, p Package) string {
	newest := p
	for _, q := range pkgs {
		if q.Kind == KindNPM && q.Name == p.Name && compareKind(q, newest) > 0 {
			newest = q
		}
	}
	if newest.Version == p.Version {
		return ""
	}
	return newest.Version
}

// Why returns why key, one of installed (by Key: an npm instance's is NAME@VERSION, any
// other package's its name), is installed: the installed packages that depend on it
// directly (by its name, or by a name it provides: Dependencies), and for each package of
// requested (keys of packages the user asked for) that needs it, through its
// dependencies, the shortest chain of keys from that package to key, both included; each
// sorted.
func Why(installed []Package, requested []string, key string) (dependents []string, chains [][]string) {
	deps := Dependencies(installed)
	for _, p := range installed {
		if slices.Contains(deps[p.Key()], key) {
			dependents = append(dependents, p.Key())
		}
	}
	slices.Sort(dependents)
	for _, r := range slices.Sorted(slices.Values(requested)) {
		if r == key {
			continue
		}
		if chain := shortestChain(deps, r, key); chain != nil {
			chains = append(chains, chain)
		}
	}
	return dependents, chains
}

// Unneeded returns the keys of the installed packages that none of requested (keys of
// packages the user asked for) needs, directly or through other packages, sorted.
func Unneeded(installed []Package, requested []string) []string {
	deps := Dependencies(installed)
	needed := make(map[string]bool)
	todo := slices.Clone(requested)
	for len(todo) > 0 {
		n := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if _, ok := deps[n]; ok && !needed[n] {
			needed[n] = true
			todo = append(todo, deps[n]...)
		}
	}
	var out []string
	for _, p := range installed {
		if !needed[p.Key()] {
			out = append(out, p.Key())
		}
	}
	slices.Sort(out)
	return out
}

// Dependencies maps the Key of each package of installed, one package a name but for npm
// instances, to the keys of the packages of installed it depends on, sorted: for each of
// its depends, the package that meets it (its alternatives in order, each by name, then by
// provides), or, where none does at the version it asks, a package of one of its
// alternatives' names; for an npm instance, or a depends on an npm package, the newest
// instance its range allows (Edges).
func Dependencies(installed []Package) map[string][]string {
	npm, other := splitInstances(installed)
	byName := make(map[string]Package, len(other))
	versions := make(map[string][]Package, len(other))
	for _, p := range other {
		byName[p.Name], versions[p.Name] = p, []Package{p}
	}
	instances := make(map[string][]Package)
	for _, p := range npm {
		instances[p.Name] = append(instances[p.Name], p)
	}
	for _, vs := range instances {
		slices.SortFunc(vs, func(a, b Package) int { return compareKind(b, a) })
	}
	providers := relationsOf(versions).providers
	get := func(name string) (Package, bool) { p, ok := byName[name]; return p, ok }
	deps := make(map[string][]string, len(installed))
	for _, p := range installed {
		deps[p.Key()] = nil
	}
	add := func(p, q Package) {
		if q.Key() != p.Key() && !slices.Contains(deps[p.Key()], q.Key()) {
			deps[p.Key()] = append(deps[p.Key()], q.Key())
		}
	}
	edges := Edges(installed)
	for _, p := range npm {
		for _, q := range edges[p.Key()] {
			add(p, q)
		}
	}
	for _, p := range other {
		for _, r := range p.Depends {
			q, ok := metBy(r, providers, get)
			for a := range r.Alternatives() {
				if !ok {
					q, ok = get(a.Name)
				}
			}
			if !ok {
				q, ok = newestMeeting(instances[r.Name], r)
			}
			if ok {
				add(p, q)
			}
		}
	}
	for _, ds := range deps {
		slices.Sort(ds) // so that of equally short chains the first by key is found
	}
	return deps
}

// shortestChain returns the shortest chain of dependencies from one name to another,
// both included, or nil if from does not need to.
func shortestChain(deps map[string][]string, from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n == to {
			var chain []string
			for ; n != ""; n = prev[n] {
				chain = append(chain, n)
			}
			slices.Reverse(chain)
			return chain
		}
		for _, d := range deps[n] {
			if _, seen := prev[d]; !seen {
				prev[d] = n
				queue = append(queue, d)
			}
		}
	}
	return nil
}

// Versions returns the versions ix offers of name, newest first.
func (ix *Index) Versions(name string) []string {
	var out []string
	for _, p := range ix.versions()[name] {
		out = append(out, p.Version)
	}
	return out
}

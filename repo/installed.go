package repo

import (
	"slices"
	"strings"
)

// Outdated is an installed package that the index has a newer version of.
type Outdated struct {
	Name      string
	Installed string
	// Allowed is the newest version an upgrade of every installed package can take that
	// the depends of the installed packages and the requirements the user asked for the
	// packages by allow; Installed when none newer is.
	Allowed string
	Newest  string // the newest version the index has, releases first unless Installed is a pre-release
	Held    string // the requirement that holds it below Newest (Upgrade's holds), if one does
	Origin  string // the local archive file it was installed from, which keeps it at Installed
}

// Outdated returns the installed packages for which ix has a newer version than
// installed, sorted by name; holds are the requirements the user keeps packages to, as
// Upgrade takes them. Where those cannot hold together with an upgrade (one older than
// what is installed, say), Allowed is what the depends alone allow.
func (ix *Index) Outdated(installed []Package, holds []Requirement) []Outdated {
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
		vs := preferred(versions[p.Name], releaseOf(p.Version))
		if len(vs) == 0 || CompareVersions(vs[0].Version, p.Version) <= 0 {
			continue
		}
		o := Outdated{Name: p.Name, Installed: p.Version, Allowed: allowed[p.Name], Newest: vs[0].Version}
		if h, ok := holdOf(holds, p); ok && !h.Allows(o.Newest) {
			o.Held = h.String()
		}
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b Outdated) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Why returns why name, one of installed, is installed: the installed packages that
// depend on it directly (by its name, or by a name it provides: Dependencies), and for
// each package of requested (names the user asked for)
// that needs it, through its dependencies, the shortest chain of names from that package
// to name, both included; each sorted.
func Why(installed []Package, requested []string, name string) (dependents []string, chains [][]string) {
	deps := Dependencies(installed)
	for _, p := range installed {
		if slices.Contains(deps[p.Name], name) {
			dependents = append(dependents, p.Name)
		}
	}
	slices.Sort(dependents)
	for _, r := range slices.Sorted(slices.Values(requested)) {
		if r == name {
			continue
		}
		if chain := shortestChain(deps, r, name); chain != nil {
			chains = append(chains, chain)
		}
	}
	return dependents, chains
}

// Unneeded returns the installed packages that none of requested (names the user asked
// for) needs, directly or through other packages, sorted by name.
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
		if !needed[p.Name] {
			out = append(out, p.Name)
		}
	}
	slices.Sort(out)
	return out
}

// Dependencies maps each name of installed, one package a name, to the names of
// installed it depends on, sorted: for each of its depends, the package that meets it
// (its alternatives in order, each by name, then by provides), or, where none does at the
// version it asks, a package of one of its alternatives' names.
func Dependencies(installed []Package) map[string][]string {
	byName := make(map[string]Package, len(installed))
	versions := make(map[string][]Package, len(installed))
	for _, p := range installed {
		byName[p.Name], versions[p.Name] = p, []Package{p}
	}
	providers := relationsOf(versions).providers
	get := func(name string) (Package, bool) { p, ok := byName[name]; return p, ok }
	deps := make(map[string][]string, len(installed))
	for _, p := range installed {
		deps[p.Name] = nil
	}
	for _, p := range installed {
		for _, r := range p.Depends {
			q, ok := metBy(r, providers, get)
			for _, a := range r.Alternatives() {
				if !ok {
					q, ok = get(a.Name)
				}
			}
			if ok && q.Name != p.Name && !slices.Contains(deps[p.Name], q.Name) {
				deps[p.Name] = append(deps[p.Name], q.Name)
			}
		}
	}
	for _, ds := range deps {
		slices.Sort(ds) // so that of equally short chains the first by name is found
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

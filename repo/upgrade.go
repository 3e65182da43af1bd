package repo

import (
	"fmt"
	"slices"
)

// Upgrade resolves the upgrade of installed packages: the named ones and the installed
// packages they depend on, transitively, move to the newest versions ix offers, never
// older than installed, that the depends of every installed package allow; the others stay
// as they are. With no names every installed package may move. A newer version's new
// dependencies are added. An installed version missing from ix is kept as installed.
//
// installed lists one record per installed name. The result holds every package of the
// upgraded set, changed or not, in dependency order.
func (ix *Index) Upgrade(installed []Package, names []string) ([]Package, error) {
	byName := make(map[string]Package, len(installed))
	for _, p := range installed {
		byName[p.Name] = p
	}
	for _, n := range names {
		if _, ok := byName[n]; !ok {
			return nil, fmt.Errorf("repo: upgrade %s: not installed", n)
		}
	}
	free := movable(byName, names)
	reqs := make([]Requirement, 0, len(installed))
	for _, p := range installed {
		op := "="
		if free[p.Name] {
			op = ">="
		}
		reqs = append(reqs, Requirement{Name: p.Name, Constraints: []Constraint{{Op: op, Version: p.Version}}})
	}
	return withInstalled(ix, byName).Resolve(reqs)
}

// movable returns the names Upgrade may move: names and what they depend on among the
// installed packages, or every installed name when names is empty.
func movable(installed map[string]Package, names []string) map[string]bool {
	free := make(map[string]bool)
	if len(names) == 0 {
		for n := range installed {
			free[n] = true
		}
		return free
	}
	todo := slices.Clone(names)
	for len(todo) > 0 {
		n := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		p, ok := installed[n]
		if !ok || free[n] {
			continue
		}
		free[n] = true
		for _, d := range p.Depends {
			if r, err := parseRequirement(d); err == nil {
				todo = append(todo, r.Name)
			}
		}
	}
	return free
}

// withInstalled returns ix with each installed package in place of the index's entry of
// the same name and version, so that keeping an installed version keeps it exactly.
func withInstalled(ix *Index, installed map[string]Package) *Index {
	out := &Index{Format: ix.Format}
	for _, p := range ix.Packages {
		if q, ok := installed[p.Name]; !ok || q.Version != p.Version {
			out.Packages = append(out.Packages, p)
		}
	}
	for _, p := range installed {
		out.Packages = append(out.Packages, p)
	}
	return out
}

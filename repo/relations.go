package repo

import (
	"fmt"
	"slices"
)

// relations indexes the provides and conflicts of the versions a resolver chooses from.
type relations struct {
	providers    map[string][]string // a provided name → the names of the packages providing it, sorted
	conflictedBy map[string][]string // a name → the names of the packages with a conflicts entry on it, sorted
}

// relationsOf returns the relations of versions, ix.versions() of an index.
func relationsOf(versions map[string][]Package) relations {
	rel := relations{providers: make(map[string][]string), conflictedBy: make(map[string][]string)}
	for name, vs := range versions {
		for _, p := range vs {
			for _, q := range p.Provides {
				addName(rel.providers, q.Name, name)
			}
			for _, c := range p.Conflicts {
				addName(rel.conflictedBy, c.Name, name)
			}
		}
	}
	for _, m := range []map[string][]string{rel.providers, rel.conflictedBy} {
		for _, names := range m {
			slices.Sort(names)
		}
	}
	return rel
}

// addName adds name to m[key] unless it is there already: a name's versions are added
// one after another, so only the last can be it.
func addName(m map[string][]string, key, name string) {
	if l := m[key]; key != name && (len(l) == 0 || l[len(l)-1] != name) {
		m[key] = append(l, name)
	}
}

// chosenFor returns the chosen package that meets d, as metBy finds it.
func (r *resolver) chosenFor(d Requirement) (Package, bool) {
	return metBy(d, r.providers, func(name string) (Package, bool) {
		r.work++
		c, ok := r.chosen[name]
		return c.pkg, ok
	})
}

// metBy returns the package that meets d among those get finds by name, one a name, of
// which providers names those providing each name: it tries d's alternatives in order,
// for each the package of its name, then those providing it, by name.
func metBy(d Requirement, providers map[string][]string, get func(name string) (Package, bool)) (Package, bool) {
	for a := range d.Alternatives() {
		if p, ok := get(a.Name); ok && a.AllowsOf(p.Kind, p.Version) {
			return p, true
		}
		for _, name := range providers[a.Name] {
			if p, ok := get(name); ok && a.providedBy(p.Kind, p.Provides) {
				return p, true
			}
		}
	}
	return Package{}, false
}

// meetable reports whether d has an option (options), without listing them.
func (r *resolver) meetable(d Requirement) bool {
	for a := range d.Alternatives() {
		if len(r.versions[a.Name]) > 0 || slices.ContainsFunc(r.providers[a.Name], func(name string) bool { return r.provides(name, a) }) {
			return true
		}
	}
	return false
}

// providersOf returns, sorted, up to maxNear of the packages that provide a name of one
// of d's alternatives, at whatever version, for a *MissingError.
func (r *resolver) providersOf(d Requirement) []string {
	var names []string
	for a := range d.Alternatives() {
		names = append(names, r.providers[a.Name]...)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	return names[:min(len(names), maxNear)]
}

// provides reports whether a version of name provides a, an alternative.
func (r *resolver) provides(name string, a Requirement) bool {
	return slices.ContainsFunc(r.versions[name], func(p Package) bool { r.work++; return a.providedBy(p.Kind, p.Provides) })
}

// option is a way to meet an orNeed: a need on name.
type option struct {
	name    string
	req     Requirement
	virtual bool
}

// options returns the ways to meet d in the order the resolver tries them: for each
// alternative, the package of its name if the index has it, then the packages some
// version of which provides it, those queued already first, each part by name.
func (r *resolver) options(d Requirement) []option {
	var out []option
	for a := range d.Alternatives() {
		if len(r.versions[a.Name]) > 0 {
			out = append(out, option{name: a.Name, req: a})
		}
		var later []option
		for _, name := range r.providers[a.Name] {
			if !r.provides(name, a) {
				continue
			}
			if o := (option{name: name, req: a, virtual: true}); r.queued[name] {
				out = append(out, o)
			} else {
				later = append(later, o)
			}
		}
		out = append(out, later...)
	}
	return out
}

// conflicts returns, for p about to be chosen, a *ConflictsError if p and a package chosen
// rule each other out (either's conflicts entry matches the other), with the level of
// that package's decision.
func (r *resolver) conflicts(p Package) (levels, error) {
	for _, c := range p.Conflicts {
		names := append([]string{c.Name}, r.providers[c.Name]...)
		for _, name := range names {
			r.work++
			if q, ok := r.chosen[name]; ok && name != p.Name && c.Met(q.pkg.Kind, q.pkg.Name, q.pkg.Version, q.pkg.Provides) {
				return levels{q.level: true}, softError{&ConflictsError{Name: p.Name, Version: p.Version, Conflicts: c, Other: q.pkg.Name, OtherVersion: q.pkg.Version}}
			}
		}
	}
	targets := []string{p.Name}
	for _, v := range p.Provides {
		targets = append(targets, v.Name)
	}
	for _, t := range targets {
		for _, name := range r.conflictedBy[t] {
			q, ok := r.chosen[name]
			if !ok || name == p.Name {
				continue
			}
			for _, c := range q.pkg.Conflicts {
				r.work++
				if c.Met(p.Kind, p.Name, p.Version, p.Provides) {
					return levels{q.level: true}, softError{&ConflictsError{Name: q.pkg.Name, Version: q.pkg.Version, Conflicts: c, Other: p.Name, OtherVersion: p.Version}}
				}
			}
		}
	}
	return nil, nil
}

// A ConflictsError is two packages that cannot be installed together: an entry of the
// conflicts of Name at Version matches Other at OtherVersion.
type ConflictsError struct {
	Name, Version       string
	Conflicts           Requirement
	Other, OtherVersion string
}

func (e *ConflictsError) Error() string {
	return fmt.Sprintf("%s %s conflicts with %s %s (its conflicts list %s)", e.Name, e.Version, e.Other, e.OtherVersion, e.Conflicts)
}

package txn

import (
	"fmt"
	"slices"
	"strings"

	"pkg/db"
	"pkg/internal/units"
	"pkg/repo"
)

// lacking returns what a reinstall of again (packages of before, the root's records, as
// the plan installs them) installs beside them: the packages their requirements (depends,
// and an npm package's peers) need that nothing of before meets, as a repair that could
// not record a dependency whose tree was deleted leaves them, resolved in in as an install
// would resolve them (a name at the newest version allowed; an npm range by an installed
// instance it allows first), within holds. Every installed package stays as it is: one
// the resolution would change refuses the reinstall. Nil where nothing is lacking.
func (ix *Catalog) lacking(in *repo.Index, before []db.Record, again []repo.Package, holds []repo.Hold) ([]repo.Package, error) {
	installed := planned(in, before, again)
	m := metBy(installed)
	var short []string // of each of again lacking something, "NAME VERSION (REQUIREMENT, ...)"
	for _, p := range again {
		var unmet []string
		for _, q := range slices.Concat(p.Depends, p.Peers) {
			if !m.met(q) {
				unmet = append(unmet, q.String())
			}
		}
		if len(unmet) > 0 {
			short = append(short, p.Name+" "+p.Version+" ("+strings.Join(unmet, ", ")+")")
		}
	}
	if len(short) == 0 {
		return nil, nil
	}
	what := strings.Replace(short[0], " (", " lacks (", 1) // "what app 1.0 lacks (lib>=1)"
	if len(short) > 1 {
		what = units.List(short, 0) + " lack"
	}
	// Only again's depends and peers are resolved: the others', and every optional
	// dependency, that nothing installed meets are left as they are.
	for i := range installed {
		p := &installed[i]
		p.Optional = m.only(p.Optional)
		if !slices.ContainsFunc(again, func(q repo.Package) bool { return q.Key() == p.Key() }) {
			p.Depends, p.Peers = m.only(p.Depends), m.only(p.Peers)
		}
	}
	pkgs, err := in.ResolveInstalled(installed, nil, holds...)
	if err != nil {
		return nil, ix.about(fmt.Errorf("reinstall: installing what %s: %w", what, err))
	}
	var out []repo.Package
	for _, pk := range pkgs {
		cur, ok := db.Find(before, pk.Key())
		switch {
		case !ok:
			out = append(out, pk)
		case cur.Version != pk.Version || cur.SHA256 != pk.SHA256: // as installed, but for the requirements left out
			return nil, fmt.Errorf("reinstall: installing what %s would change %s %s to %s, and a reinstall changes no other package",
				what, cur.Name, cur.Version, pk.Version)
		}
	}
	return out, nil
}

// planned returns the packages of before with the relations a plan reads (described),
// but for those again gives them (Catalog.again).
func planned(in *repo.Index, before []db.Record, again []repo.Package) []repo.Package {
	recs, _ := described(in, before)
	pkgs := db.Packages(recs)
	for i := range pkgs {
		p := &pkgs[i]
		if j := slices.IndexFunc(again, func(q repo.Package) bool { return q.Key() == p.Key() }); j >= 0 {
			relate(p, again[j])
		}
	}
	return pkgs
}

// relate gives p the relations of e.
func relate(p *repo.Package, e repo.Package) {
	p.Depends, p.Optional, p.Peers, p.Provides = e.Depends, e.Optional, e.Peers, e.Provides
	p.Conflicts, p.Replaces = e.Conflicts, e.Replaces
}

// meets tells which requirements installed packages meet (repo.Requirement.Met): by
// name and by what they provide, each the packages of that name or providing it.
type meets map[string][]repo.Package

func metBy(pkgs []repo.Package) meets {
	m := make(meets)
	for _, p := range pkgs {
		m[p.Name] = append(m[p.Name], p)
		for _, v := range p.Provides {
			if v.Name != p.Name {
				m[v.Name] = append(m[v.Name], p)
			}
		}
	}
	return m
}

func (m meets) met(q repo.Requirement) bool {
	for a := range q.Alternatives() {
		if slices.ContainsFunc(m[a.Name], func(p repo.Package) bool { return q.Met(p.Kind, p.Name, p.Version, p.Provides) }) {
			return true
		}
	}
	return false
}

// only returns the requirements of reqs that m meets, in a new slice.
func (m meets) only(reqs []repo.Requirement) []repo.Requirement {
	return slices.DeleteFunc(slices.Clone(reqs), func(q repo.Requirement) bool { return !m.met(q) })
}

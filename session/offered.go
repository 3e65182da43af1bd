package session

import (
	"fmt"
	"slices"

	"pkg/db"
	"pkg/internal/units"
	"pkg/repo"
	"pkg/txn"
)

// A NotOfferedError is a name neither installed nor in the index of Source. ProvidedBy
// lists the packages of both that provide it, a virtual name, and Close, when none does,
// offers the names close to it among both (repo.DidYouMean).
type NotOfferedError struct {
	Name, Source, Close string
	ProvidedBy          []string
}

func (e *NotOfferedError) Error() string {
	if len(e.ProvidedBy) > 0 {
		verb := "provides"
		if len(e.ProvidedBy) > 1 {
			verb = "provide"
		}
		return fmt.Sprintf("%s: not installed, and %s has no package of that name; %s %s it", e.Name, e.Source, units.List(e.ProvidedBy, 0), verb)
	}
	return fmt.Sprintf("%s: not installed, and %s has no package of that name%s", e.Name, e.Source, e.Close)
}

// offeredPackage returns name's package in ix at the version a new install takes, or a
// *NotOfferedError where ix has no package of that name and installed lacks it.
func offeredPackage(ix *txn.Catalog, name string, installed []db.Record) (repo.Package, error) {
	p, err := ix.Lookup(repo.Requirement{Name: name})
	if len(ix.Versions(name)) == 0 {
		var names, providers []string
		for _, q := range append(db.Packages(installed), ix.Search("")...) {
			if !slices.Contains(names, q.Name) {
				names = append(names, q.Name)
			}
			if slices.ContainsFunc(q.Provides, func(v repo.Requirement) bool { return v.Name == name }) && !slices.Contains(providers, q.Name) {
				providers = append(providers, q.Name)
			}
		}
		if len(providers) > 0 {
			slices.Sort(providers)
			return p, &NotOfferedError{Name: name, Source: ix.Source.String(), ProvidedBy: providers}
		}
		return p, &NotOfferedError{Name: name, Source: ix.Source.String(), Close: repo.DidYouMean(name, names)}
	}
	return p, err
}

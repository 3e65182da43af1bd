package session

import (
	"fmt"
	"slices"

	"pkg/db"
	"pkg/repo"
	"pkg/txn"
)

// A NotOfferedError is a name neither installed nor in the index of Source; Close offers
// the names close to it among both (repo.DidYouMean).
type NotOfferedError struct {
	Name, Source, Close string
}

func (e *NotOfferedError) Error() string {
	return fmt.Sprintf("%s: not installed, and %s has no package of that name%s", e.Name, e.Source, e.Close)
}

// offeredPackage returns name's package in ix at the version a new install takes, or a
// *NotOfferedError where ix has no package of that name and installed lacks it.
func offeredPackage(ix *txn.Catalog, name string, installed []db.Record) (repo.Package, error) {
	p, err := ix.Lookup(repo.Requirement{Name: name})
	if len(ix.Versions(name)) == 0 {
		var names []string
		for _, q := range append(db.Packages(installed), ix.Search("")...) {
			if !slices.Contains(names, q.Name) {
				names = append(names, q.Name)
			}
		}
		return p, &NotOfferedError{Name: name, Source: ix.Source.String(), Close: repo.DidYouMean(name, names)}
	}
	return p, err
}

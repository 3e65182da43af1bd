package repo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Removal names what Remove removes: the entries of Name, or only the one of Version.
type Removal struct {
	Name    string
	Version string // "" for every version
	Force   bool   // remove even what the packages left in the index depend on
}

func (rm Removal) String() string {
	if rm.Version == "" {
		return rm.Name
	}
	return rm.Name + " " + rm.Version
}

// Removed is what Remove did.
type Removed struct {
	Packages []Package // the entries removed
	Broken   []Need    // with Force, the dependencies nothing in the index satisfies now
	Meta     Meta      // the index's, as written
	Dropped            // the archives of Packages no entry names now
}

// Need is a dependency of a package in the index.
type Need struct {
	Name, Version string      // the package that depends
	Depends       Requirement // its dependency
}

func (n Need) String() string { return n.Name + " " + n.Version + " (" + n.Depends.String() + ")" }

// NeededError is Remove's refusal of entries that packages left in the index depend on,
// when no other entry satisfies them.
type NeededError struct {
	Removal Removal
	Needs   []Need
}

func (e *NeededError) Error() string {
	by := make([]string, len(e.Needs))
	for i, n := range e.Needs {
		by[i] = n.String()
	}
	return fmt.Sprintf("%s is needed by %s, which nothing else in the index satisfies", e.Removal, strings.Join(by, ", "))
}

// notFoundError is Remove's error for a package or version the index does not have.
type notFoundError struct {
	Removal Removal
	Have    []string // the versions of the name the index has
}

func (e *notFoundError) Error() string {
	if len(e.Have) == 0 {
		return fmt.Sprintf("the index has no package %s", e.Removal.Name)
	}
	return fmt.Sprintf("the index has no %s (it has %s %s)", e.Removal, e.Removal.Name, strings.Join(e.Have, ", "))
}

// Remove removes rm's entries from dir's index.json, signed by s if not nil, as Add
// writes it, and then deletes each local archive they name that no entry left names (one
// it cannot delete is Left, not an error: the index is written). It refuses, changing nothing, entries that a package left in the index depends on and no
// other entry satisfies (a *NeededError), unless rm.Force; and a name or version the index
// lacks (a *notFoundError). Adds, removes and signs of one directory take turns.
func Remove(ctx context.Context, dir string, rm Removal, s *Signer) (*Removed, error) {
	res, err := remove(ctx, dir, rm, s)
	if err != nil {
		return nil, fmt.Errorf("remove %s from %s: %w", rm, dir, err)
	}
	return res, nil
}

func remove(ctx context.Context, dir string, rm Removal, s *Signer) (*Removed, error) {
	if !validName(rm.Name) {
		return nil, badName(rm.Name)
	}
	if rm.Version != "" {
		if err := checkVersion(rm.Version); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(dir, indexName)); err != nil {
		return nil, err
	}
	ix, unlock, err := lockedIndex(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	gone, kept := []Package{}, []Package{}
	for _, p := range ix.Packages {
		if p.Name == rm.Name && (rm.Version == "" || p.Version == rm.Version) {
			gone = append(gone, p)
		} else {
			kept = append(kept, p)
		}
	}
	if len(gone) == 0 {
		return nil, notFound(rm, ix)
	}
	needs := needed(gone, kept)
	if len(needs) > 0 && !rm.Force {
		return nil, &NeededError{Removal: rm, Needs: needs}
	}
	if err := stamp(dir, ix, s); err != nil {
		return nil, err
	}
	ix.Packages = kept
	if err := writeIndex(dir, ix, s); err != nil {
		return nil, err
	}
	res := &Removed{Packages: gone, Broken: needs, Meta: ix.Meta}
	res.Dropped = dropArchives(dir, gone, kept)
	return res, nil
}

// keptArchive reports whether a, an entry's archive, is a file the repository directory
// keeps for it: a local path, neither the index nor its signature.
func keptArchive(a string) bool { return validLocal(a) && a != indexName && a != SignatureName }

func notFound(rm Removal, ix *Index) error {
	e := &notFoundError{Removal: rm}
	for _, p := range ix.Packages {
		if p.Name == rm.Name {
			e.Have = append(e.Have, p.Version)
		}
	}
	return e
}

// needed returns the dependencies of kept that an entry of gone meets (Requirement.Met)
// and none of kept.
func needed(gone, kept []Package) []Need {
	var needs []Need
	for _, q := range kept {
		for _, d := range q.Depends {
			allows := func(p Package) bool { return d.Met(p.Kind, p.Name, p.Version, p.Provides) }
			if slices.ContainsFunc(gone, allows) && !slices.ContainsFunc(kept, allows) {
				needs = append(needs, Need{Name: q.Name, Version: q.Version, Depends: d})
			}
		}
	}
	return needs
}

package repo

import (
	"fmt"
	"slices"
	"strings"
)

// Lookup returns the newest package satisfying r, or an error naming r.
func (ix *Index) Lookup(r Requirement) (Package, error) {
	vs := ix.versions()[r.Name]
	if len(vs) == 0 {
		return Package{}, fmt.Errorf("repo: package %q not found", r.Name)
	}
	for _, p := range vs {
		if r.Allows(p.Version) {
			return p, nil
		}
	}
	return Package{}, fmt.Errorf("repo: no version of %q satisfies %s", r.Name, r)
}

// Search returns the newest version of every package whose name or summary contains word
// (case-insensitive; all packages when word is empty), sorted by name. Only the newest
// version's summary is searched.
func (ix *Index) Search(word string) []Package {
	word = strings.ToLower(word)
	var found []Package
	for _, vs := range ix.versions() {
		if p := vs[0]; matches(p, word) {
			found = append(found, p)
		}
	}
	slices.SortFunc(found, func(a, b Package) int { return strings.Compare(a.Name, b.Name) })
	return found
}

func matches(p Package, lowerWord string) bool {
	return strings.Contains(strings.ToLower(p.Name), lowerWord) || strings.Contains(strings.ToLower(p.Summary), lowerWord)
}

// versions maps each name to its packages, newest first.
func (ix *Index) versions() map[string][]Package {
	m := make(map[string][]Package)
	for _, p := range ix.Packages {
		m[p.Name] = append(m[p.Name], p)
	}
	for _, vs := range m {
		slices.SortFunc(vs, func(a, b Package) int { return CompareVersions(b.Version, a.Version) })
	}
	return m
}

package repo

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"pkg/internal/units"
)

// Lookup returns the package satisfying r that pkg would choose for r alone, the newest
// with releases first (see preferred), or an error naming r.
func (ix *Index) Lookup(r Requirement) (Package, error) {
	var vs []Package
	for _, p := range ix.Packages {
		if p.Name == r.Name && p.runsOn(ix.target()) {
			vs = append(vs, p)
		}
	}
	if len(vs) == 0 {
		if err := ix.elsewhere(r.Name); err != nil {
			return Package{}, err
		}
		return Package{}, missing(r.Name, ix.versions())
	}
	sortNewestFirst(vs)
	for _, p := range preferred(vs, r.welcomes()) {
		if r.AllowsOf(p.Kind, p.Version) {
			return p, nil
		}
	}
	return Package{}, &conflictError{Name: r.Name, Needs: []imposed{{Requirement: r}}, Offered: vs}
}

// missing says that the index has no package name, and names the packages it may mean.
func missing(name string, all map[string][]Package) error {
	return &MissingError{Name: name, Near: Similar(name, slices.Collect(maps.Keys(all)))}
}

// DidYouMean returns `; did you mean "a" or "b"?` for the names close to name, a name
// not found among names, or "" when none is.
func DidYouMean(name string, names []string) string {
	return didYouMean(Similar(name, names))
}

// didYouMean returns `; did you mean "a" or "b"?` for found, or "" for none.
func didYouMean(found []string) string {
	if len(found) == 0 {
		return ""
	}
	found = slices.Clone(found)
	for i, n := range found {
		found[i] = strconv.Quote(n)
	}
	return "; did you mean " + orList(found) + "?"
}

// maxNear bounds the names a *MissingError suggests.
const maxNear = 3

// Similar returns up to three (maxNear) of names that are close to name (a misspelling) or contain
// it, closest first.
func Similar(name string, names []string) []string {
	type candidate struct {
		name string
		d    int
	}
	var found []candidate
	limit := max(1, len(name)/4)
	for _, other := range names {
		if other == name {
			continue
		}
		contains := len(name) >= 3 && strings.Contains(other, name)
		if !contains && abs(len(other)-len(name)) > limit {
			continue // at least that many insertions or deletions
		}
		if d := editDistance(name, other); d <= limit || contains {
			found = append(found, candidate{other, d})
		}
	}
	slices.SortFunc(found, func(a, b candidate) int { return cmp.Or(a.d-b.d, strings.Compare(a.name, b.name)) })
	found = found[:min(len(found), maxNear)]
	out := make([]string, len(found))
	for i, c := range found {
		out[i] = c.name
	}
	return out
}

// editDistance counts the insertions, deletions, substitutions and swaps of neighbouring
// bytes that turn a into b (optimal string alignment).
func editDistance(a, b string) int {
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// maxOffered bounds the versions offered lists.
const maxOffered = 4

// offered lists the versions vs (newest first) has: "the index has 1.2, 1.1 and 3 older".
func offered(vs []Package) string {
	var list []string
	for _, p := range vs[:min(len(vs), maxOffered)] {
		list = append(list, p.Version)
	}
	if more := len(vs) - len(list); more > 0 {
		list = append(list, fmt.Sprintf("%d older", more))
	}
	return "the index has " + units.List(list, 0)
}

// Search returns the version an install would take (the newest release, or the newest
// pre-release when there is no release) of every package whose name or summary contains
// word (case-insensitive; all packages when word is empty), sorted by name. Only that
// version's summary is searched, and only packages for ix's platform are.
func (ix *Index) Search(word string) []Package {
	word = strings.ToLower(word)
	best := make(map[string]Package)
	for _, p := range ix.Packages {
		if !p.runsOn(ix.target()) {
			continue
		}
		if q, ok := best[p.Name]; !ok || installsBefore(p, q) {
			best[p.Name] = p
		}
	}
	var found []Package
	for _, p := range best {
		if matches(p, word) {
			found = append(found, p)
		}
	}
	slices.SortFunc(found, func(a, b Package) int { return strings.Compare(a.Name, b.Name) })
	return found
}

func matches(p Package, lowerWord string) bool {
	return strings.Contains(strings.ToLower(p.Name), lowerWord) || strings.Contains(strings.ToLower(p.Summary), lowerWord)
}

// installsBefore reports whether a new install takes a over b, versions of one name: a
// release over a pre-release (ranksLate), else the newer.
func installsBefore(a, b Package) bool {
	aPre, bPre := ranksLate(a, nil), ranksLate(b, nil)
	return aPre != bPre && bPre || aPre == bPre && compareKind(a, b) > 0
}

// versions maps each name to its packages, newest first.
func (ix *Index) versions() map[string][]Package {
	platform := ix.target()
	count := make(map[string]int)
	for _, p := range ix.Packages {
		if p.runsOn(platform) {
			count[p.Name]++
		}
	}
	all := make([]Package, len(ix.Packages)) // one allocation, each name's versions a part
	m := make(map[string][]Package, len(count))
	for _, p := range ix.Packages {
		if !p.runsOn(platform) {
			continue
		}
		vs, ok := m[p.Name]
		if !ok {
			n := count[p.Name]
			vs, all = all[:0:n], all[n:]
		}
		m[p.Name] = append(vs, p)
	}
	for _, vs := range m {
		sortNewestFirst(vs)
	}
	return m
}

// sortNewestFirst sorts vs newest first, in a pass or two when they are in order
// already, either way round (pkg repo add writes them oldest first).
func sortNewestFirst(vs []Package) {
	newer := func(a, b Package) int { return b.CompareVersion(a) }
	if slices.IsSortedFunc(vs, newer) {
		return
	}
	slices.Reverse(vs)
	if !slices.IsSortedFunc(vs, newer) {
		slices.SortFunc(vs, newer)
	}
}

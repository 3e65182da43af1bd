package session

import (
	"slices"

	"pkg/fetch"
	"pkg/install"
	"pkg/repo"
)

// repairCandidates returns what a tree of a root named name may hold, for install.Rebuild:
// each entry of cache of that name, most recently used first, as ix (nil for none) offers
// that archive (by its sha256), or else by its name and version alone, without commands,
// libraries or dependencies, and then twice: as a package and as an npm instance, of which
// the tree's name (NAME, or NAME@VERSION) matches one alone, since the cache does not say
// which the archive is. An entry Members finds damaged is no candidate.
func repairCandidates(cache *fetch.Cache, ix *repo.Index) (func(name string) ([]install.Candidate, error), error) {
	es, err := cache.List()
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(es, func(a, b fetch.Entry) int { return b.Used.Compare(a.Used) })
	offered := make(map[string]repo.Package)
	if ix != nil {
		for _, p := range ix.Packages {
			offered[p.SHA256] = p
		}
	}
	return func(name string) ([]install.Candidate, error) {
		var cs []install.Candidate
		for _, e := range es {
			if e.Err != nil || e.Name != name {
				continue
			}
			ms, err := cache.Members(e.SHA256)
			if err != nil {
				continue
			}
			if p, ok := offered[e.SHA256]; ok && p.Name == e.Name && p.Version == e.Version {
				cs = append(cs, install.Candidate{Package: p, Members: ms})
				continue
			}
			p := repo.Package{Name: e.Name, Version: e.Version, SHA256: e.SHA256}
			npm := p
			npm.Kind = repo.KindNPM
			cs = append(cs, install.Candidate{Package: p, Members: ms, Bare: true}, install.Candidate{Package: npm, Members: ms, Bare: true})
		}
		return cs, nil
	}, nil
}

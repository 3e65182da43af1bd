package db

import (
	"maps"
	"slices"
	"strings"

	"pkg/repo"
)

// Holds returns the holds of the installed packages recs, by key (Record.Key): the
// requirements with a version constraint they were asked for by (DB.Requested) that their
// installed versions meet; a requirement of given, named on the command line, with a
// constraint takes the place of the recorded one of each package of its name (of every
// npm instance). A hold keeps its package within it on an upgrade (repo.Index.Upgrade),
// as apt-mark hold or brew pin do.
func Holds(recs []Record, requested map[string]repo.Requirement, given []repo.Requirement) []repo.Hold {
	byName := make(map[string]repo.Requirement, len(given))
	for _, r := range given { // two on one name are one, as install records them
		cur := byName[r.Name]
		cur.Name, cur.Constraints = r.Name, append(slices.Clone(cur.Constraints), r.Constraints...)
		byName[r.Name] = cur
	}
	var holds []repo.Hold
	for _, rec := range recs {
		r, ok := byName[rec.Name]
		if !ok || len(r.Constraints) == 0 {
			r, ok = requested[rec.Key()]
			ok = ok && r.AllowsOf(rec.Kind, rec.Version)
		}
		if ok && len(r.Constraints) > 0 {
			holds = append(holds, repo.Hold{Key: rec.Key(), Requirement: r})
		}
	}
	slices.SortFunc(holds, func(a, b repo.Hold) int { return strings.Compare(a.Key, b.Key) })
	return holds
}

// Unneeded returns the keys (Record.Key) of the packages of recs that no package asked for
// (requested, DB.Requested) needs, directly or through others: what autoremove removes.
func Unneeded(recs []Record, requested map[string]repo.Requirement) []string {
	return repo.Unneeded(Packages(recs), slices.Collect(maps.Keys(requested)))
}

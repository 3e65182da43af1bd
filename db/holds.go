package db

import (
	"maps"
	"slices"
	"strings"

	"pkg/repo"
)

// Holds returns the holds of the installed packages recs: the requirements with a version
// constraint they were asked for by (DB.Requested) that their installed versions meet, a
// request of given, requirements named on the command line, taking the place of the
// recorded one where it has a constraint. A hold keeps its package within it on an
// upgrade (repo.Index.Upgrade), as apt-mark hold or brew pin do.
func Holds(recs []Record, requested map[string]repo.Requirement, given []repo.Requirement) []repo.Requirement {
	var holds []repo.Requirement
	for _, r := range given { // two on one name are one, as install records them
		if i := slices.IndexFunc(holds, func(h repo.Requirement) bool { return h.Name == r.Name }); i >= 0 {
			holds[i].Constraints = append(slices.Clone(holds[i].Constraints), r.Constraints...)
		} else if len(r.Constraints) > 0 {
			holds = append(holds, repo.Requirement{Name: r.Name, Constraints: r.Constraints})
		}
	}
	for key, r := range requested {
		p, ok := Find(recs, key)
		if ok && len(r.Constraints) > 0 && r.Allows(p.Version) && !slices.ContainsFunc(holds, func(h repo.Requirement) bool { return h.Name == r.Name }) {
			holds = append(holds, r)
		}
	}
	slices.SortFunc(holds, func(a, b repo.Requirement) int { return strings.Compare(a.Name, b.Name) })
	return holds
}

// Unneeded returns the keys (Record.Key) of the packages of recs that no package asked for
// (requested, DB.Requested) needs, directly or through others: what autoremove removes.
func Unneeded(recs []Record, requested map[string]repo.Requirement) []string {
	return repo.Unneeded(Packages(recs), slices.Collect(maps.Keys(requested)))
}

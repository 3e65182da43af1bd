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
// constraint takes the place of the recorded one of each package of its name, but of an
// npm instance not so held only where it allows the instance's version (an upgrade never
// moves an unheld instance below it: UnheldBelow refuses it). A hold keeps its package within it on
// an upgrade (repo.Index.Upgrade), as apt-mark hold or brew pin do.
func Holds(recs []Record, requested map[string]repo.Requirement, given []repo.Requirement) []repo.Hold {
	byName := combined(given)
	var holds []repo.Hold
	for _, rec := range recs {
		r, ok := byName[rec.Name]
		was, held := heldBy(rec, requested)
		if !ok || len(r.Constraints) == 0 || rec.Kind == repo.KindNPM && !held && !r.AllowsOf(rec.Kind, rec.Version) {
			r, ok = was, held
		}
		if ok && len(r.Constraints) > 0 {
			holds = append(holds, repo.Hold{Key: rec.Key(), Requirement: r})
		}
	}
	slices.SortFunc(holds, func(a, b repo.Hold) int { return strings.Compare(a.Key, b.Key) })
	return holds
}

// UnheldBelow refuses (*repo.BelowError) a requirement of given, with a constraint, on an
// npm name of recs that Holds gives none of its instances: none is held, and it allows
// none of their versions, so it could only move one below its installed version.
func UnheldBelow(recs []Record, requested map[string]repo.Requirement, given []repo.Requirement) error {
	for name, r := range combined(given) {
		var versions []string
		for _, rec := range recs {
			if rec.Name != name || rec.Kind != repo.KindNPM {
				continue
			}
			if _, held := heldBy(rec, requested); held || r.Allows(rec.Version) {
				versions = nil
				break
			}
			versions = append(versions, rec.Version)
		}
		if len(r.Constraints) > 0 && len(versions) > 0 {
			return &repo.BelowError{Requirement: r, Installed: versions}
		}
	}
	return nil
}

// combined returns the requirements given by name: two on one name are one, as install
// records them.
func combined(given []repo.Requirement) map[string]repo.Requirement {
	byName := make(map[string]repo.Requirement, len(given))
	for _, r := range given {
		cur := byName[r.Name]
		cur.Name, cur.Constraints = r.Name, append(slices.Clone(cur.Constraints), r.Constraints...)
		byName[r.Name] = cur
	}
	return byName
}

// heldBy returns the request rec was asked for by (requested, DB.Requested), and whether
// it holds rec: it has a constraint that rec's version meets.
func heldBy(rec Record, requested map[string]repo.Requirement) (repo.Requirement, bool) {
	was, ok := requested[rec.Key()]
	return was, ok && len(was.Constraints) > 0 && was.AllowsOf(rec.Kind, rec.Version)
}

// Unneeded returns the keys (Record.Key) of the packages of recs that no package asked for
// (requested, DB.Requested) needs, directly or through others: what autoremove removes.
func Unneeded(recs []Record, requested map[string]repo.Requirement) []string {
	return repo.Unneeded(Packages(recs), slices.Collect(maps.Keys(requested)))
}

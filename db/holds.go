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
// npm instance not so held only where it allows the instance's version, or where it allows
// none of the name's and the instance is the one it moves up (unheld; an upgrade never
// moves an unheld instance down: UnheldBelow refuses it). offered returns
// the versions the repositories offer of a name (repo.Index.Versions); it may be nil
// without given. A hold keeps its package within it on an upgrade (repo.Index.Upgrade),
// as apt-mark hold or brew pin do.
func Holds(recs []Record, requested map[string]repo.Requirement, given []repo.Requirement, offered func(name string) []string) []repo.Hold {
	byName := combined(given)
	up := make(map[string]string, len(byName))
	for name, r := range byName {
		if len(r.Constraints) > 0 {
			_, up[name] = unheld(recs, requested, r, offered(name))
		}
	}
	var holds []repo.Hold
	for _, rec := range recs {
		r, ok := byName[rec.Name]
		was, held := heldBy(rec, requested)
		if !ok || len(r.Constraints) == 0 || rec.Kind == repo.KindNPM && !held && !r.AllowsOf(rec.Kind, rec.Version) && up[rec.Name] != rec.Key() {
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
// npm name of recs that Holds gives none of its instances: none is held, it allows none of
// their versions, and of the versions offered (Holds) it allows only some below the version
// of the instance it would move (unheld), so it could only move one below its installed version.
func UnheldBelow(recs []Record, requested map[string]repo.Requirement, given []repo.Requirement, offered func(name string) []string) error {
	for name, r := range combined(given) {
		if len(r.Constraints) == 0 {
			continue
		}
		if versions, up := unheld(recs, requested, r, offered(name)); len(versions) > 0 && up == "" {
			return &repo.BelowError{Requirement: r, Installed: versions}
		}
	}
	return nil
}

// unheld returns, of r, named on the command line, on an npm name of recs none of whose
// instances is held or has a version r allows, the versions installed (nil otherwise),
// and the key of the newest instance where r moves it up: r allows a version of offered
// above it, or none of offered (the upgrade then says what is missing). The newest is of
// the instances asked for (requested), of all only where none was: r, on the command
// line, asks for one, and installing it as asked for must not turn a dependency into one.
func unheld(recs []Record, requested map[string]repo.Requirement, r repo.Requirement, offered []string) (versions []string, up string) {
	asked := func(rec Record) bool { _, ok := requested[rec.Key()]; return ok }
	var newest *Record
	for i, rec := range recs {
		if rec.Name != r.Name || rec.Kind != repo.KindNPM {
			continue
		}
		if _, held := heldBy(rec, requested); held || r.AllowsOf(rec.Kind, rec.Version) {
			return nil, ""
		}
		versions = append(versions, rec.Version)
		if newest == nil || asked(rec) && !asked(*newest) || asked(rec) == asked(*newest) && version(rec).CompareVersion(version(*newest)) > 0 {
			newest = &recs[i]
		}
	}
	if newest == nil {
		return nil, ""
	}
	allows := false
	for _, v := range offered {
		if r.AllowsOf(newest.Kind, v) {
			if (repo.Package{Kind: newest.Kind, Version: v}).CompareVersion(version(*newest)) > 0 {
				return versions, newest.Key()
			}
			allows = true
		}
	}
	if !allows {
		return versions, newest.Key()
	}
	return versions, ""
}

// version returns rec as a package of its kind and version, to compare versions by.
func version(rec Record) repo.Package { return repo.Package{Kind: rec.Kind, Version: rec.Version} }

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

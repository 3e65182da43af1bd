package db

import (
	"slices"

	"pkg/repo"
)

// State returns the installed packages and the requirements of those the user asked for
// (Requested).
func (d *DB) State() (recs []Record, requested map[string]repo.Requirement, err error) {
	if recs, err = d.List(); err == nil {
		requested, err = d.Requested()
	}
	return recs, requested, err
}

// Find returns the record of key (Record.Key: a name, or an npm instance's NAME@VERSION)
// among recs, the records of a root's installed packages.
func Find(recs []Record, key string) (Record, bool) {
	if i := slices.IndexFunc(recs, func(p Record) bool { return p.Key() == key }); i >= 0 {
		return recs[i], true
	}
	return Record{}, false
}

// Packages returns recs as the index entries the resolver takes. An npm record's Into is
// its place in the node_modules layout, which install derives and an entry never has
// (repo.KindNPM): its entry's is "", so that it compares equal to the index's and a lock's.
func Packages(recs []Record) []repo.Package {
	ps := make([]repo.Package, len(recs))
	for i, r := range recs {
		into := r.Into
		if r.Kind == repo.KindNPM {
			into = ""
		}
		ps[i] = repo.Package{Name: r.Name, Version: r.Version, Kind: r.Kind, SHA256: r.SHA256, Depends: r.Depends, Optional: r.Optional, Peers: r.Peers, Bin: r.Bin, Lib: r.Lib, Summary: r.Summary, Origin: r.Origin,
			Provides: r.Provides, Conflicts: r.Conflicts, Replaces: r.Replaces, Into: into, Env: r.Env, Bare: r.Bare}
	}
	return ps
}

// Installs reports whether installing p, an index's or a lockfile's entry, would put back
// what r records: the same version and archive, with the same entry (repo.Package.SameEntry:
// relations, commands, library directories).
// A change leaves such a package alone, or reinstalls it where its tree is gone. A Bare
// record installs only a Bare entry: a change puts the entry of an index or lockfile in
// its place.
func (r Record) Installs(p repo.Package) bool {
	return r.Version == p.Version && r.SHA256 == p.SHA256 && r.Bare == p.Bare &&
		Packages([]Record{r})[0].SameEntry(p)
}

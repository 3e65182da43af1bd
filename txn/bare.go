package txn

import (
	"slices"

	"pkg/db"
	"pkg/install"
	"pkg/repo"
)

// described returns the root's records before with the relations every plan reads of
// them: a Bare record's own are unknown (db.Record.Bare), and it takes those of its entry
// in in (nil: none), whatever in prefers (entry); the others keep their own. unknown are
// the Bare records in does not describe, whose relations stay unknown: a plan takes them
// as needing any other installed package.
func described(in *repo.Index, before []db.Record) (recs, unknown []db.Record) {
	recs = slices.Clone(before)
	for i := range recs {
		r := &recs[i]
		if !r.Bare {
			continue
		}
		e, ok := entry(in, *r)
		if !ok {
			unknown = append(unknown, *r)
			continue
		}
		r.Depends, r.Optional, r.Peers, r.Provides = e.Depends, e.Optional, e.Peers, e.Provides
		r.Conflicts, r.Replaces = e.Conflicts, e.Replaces
	}
	return recs, unknown
}

// entry returns the entry of in (nil: none) of r's name and version whose archive is r's,
// by its sha256, among all of in's entries of that version: an index may offer it from
// several archives (for any platform and for this one) and prefer another. An entry that
// is itself Bare (of an offline reinstall's catalog of the records) describes nothing.
func entry(in *repo.Index, r db.Record) (repo.Package, bool) {
	if in == nil {
		return repo.Package{}, false
	}
	i := slices.IndexFunc(in.Packages, func(p repo.Package) bool {
		return p.Name == r.Name && p.Version == r.Version && p.SHA256 == r.SHA256 && !p.Bare
	})
	if i < 0 {
		return repo.Package{}, false
	}
	return in.Packages[i], true
}

// unknownStaying refuses the removal of names, which takes remove (names and what goes
// with them), where a record of unknown (described) stays: it may need any of remove
// (*install.UnknownDependenciesError).
func unknownStaying(names, remove []string, unknown []db.Record) error {
	var stay []db.Record
	for _, r := range unknown {
		if !slices.Contains(remove, r.Key()) {
			stay = append(stay, r)
		}
	}
	if len(stay) == 0 {
		return nil
	}
	return &install.UnknownDependenciesError{Remove: names, Bare: stay}
}

// unneeded returns the keys of the records of recs (described) that no package asked for
// (requested) needs, directly or through others (db.Unneeded): none where some of
// unknown, whose dependencies are unknown, are needed, as they may need any; kept are
// then those it would have taken, and by the keys of those of unknown.
func unneeded(recs, unknown []db.Record, requested map[string]repo.Requirement) (remove []string, kept []Change, by []string) {
	remove = db.Unneeded(recs, requested)
	var stop []db.Record
	for _, r := range unknown {
		if !slices.Contains(remove, r.Key()) {
			stop, by = append(stop, r), append(by, r.Key())
		}
	}
	if len(stop) == 0 {
		return remove, nil, nil
	}
	why := "may be needed by " + namesCounted(db.Packages(stop)) + ", whose dependencies are unknown"
	for _, key := range remove {
		r, _ := db.Find(recs, key)
		kept = append(kept, Change{Action: Keep, Name: r.Name, Version: r.Version, Why: why})
	}
	return nil, kept, by
}

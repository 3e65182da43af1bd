package txn

import (
	"maps"
	"slices"
	"strings"

	"pkg/db"
	"pkg/repo"
)

// pins returns the recorded requests (db.Requested, of the packages recs) that pin a
// repository ("team/jq") ix can take the name from, as names only, and by name the
// packages whose recorded repository ix cannot take it from, which stay as installed; an
// npm instance's such pin is left out of both.
func (ix *Catalog) pins(recs []db.Record, requested map[string]repo.Requirement) ([]repo.Requirement, map[string]*repo.PinGoneError) {
	var use []repo.Requirement
	gone := make(map[string]*repo.PinGoneError)
	for _, key := range slices.Sorted(maps.Keys(requested)) {
		q := requested[key]
		if q.Repo == "" {
			continue
		}
		r := ix.repo(q.Repo)
		if r != nil && slices.ContainsFunc(r.Packages, func(p repo.Package) bool { return p.Name == q.Name }) {
			use = append(use, repo.Requirement{Repo: q.Repo, Name: q.Name})
			continue
		}
		rec, _ := db.Find(recs, key)
		if rec.Kind == repo.KindNPM {
			// Not kept at its version: a hold of the name would hold its other instances
			// too. Its pin is left out (a pin to a repository not in use fails the whole
			// resolution): the instance moves as its dependents' ranges let it.
			continue
		}
		gone[q.Name] = &repo.PinGoneError{Name: q.Name, Version: rec.Version, Repo: q.Repo, InUse: r != nil}
	}
	return use, gone
}

// pinnedIndex returns the index an upgrade of recs resolves in (indexFor), each pinned name
// (requested) taken from its repository alone, and ix.pins' packages whose repository is
// gone: the index offers no entry of their names, so that they stay exactly as installed,
// never replaced by another repository's archive of their version.
func (ix *Catalog) pinnedIndex(recs []db.Record, requested map[string]repo.Requirement) (*repo.Index, map[string]*repo.PinGoneError, error) {
	use, gone := ix.pins(recs, requested)
	in, err := ix.indexFor(use)
	if err != nil || len(gone) == 0 {
		return in, gone, err
	}
	out := *in
	out.Packages = slices.DeleteFunc(slices.Clone(in.Packages), func(p repo.Package) bool { return gone[p.Name] != nil })
	return &out, gone, nil
}

// repo returns the repository of ix named name, or nil.
func (ix *Catalog) repo(name string) *Catalog {
	i := slices.IndexFunc(ix.Repos(), func(r *Catalog) bool { return r.Name == name })
	if i < 0 {
		return nil
	}
	return ix.Repos()[i]
}

// keepGone returns holds with each package of gone held at its installed version (in
// place of its own hold): an upgrade keeps it as installed.
func keepGone(holds []repo.Hold, gone map[string]*repo.PinGoneError) []repo.Hold {
	out := slices.DeleteFunc(slices.Clone(holds), func(h repo.Hold) bool { return gone[h.Key] != nil })
	for _, name := range slices.Sorted(maps.Keys(gone)) { // never an npm instance's (pins): its key is its name
		out = append(out, repo.Hold{Key: name, Requirement: repo.Requirement{Name: name, Constraints: []repo.Constraint{{Op: "=", Version: gone[name].Version}}}})
	}
	return out
}

// newestElsewhere returns the newest version of name ix offers, pins aside, where it is
// newer than v: what a package pinned to a repository would take without its pin.
func (ix *Catalog) newestElsewhere(name, v string) (string, bool) {
	vs := ix.Versions(name)
	if len(vs) == 0 || repo.CompareVersions(vs[0], v) <= 0 {
		return "", false
	}
	return vs[0], true
}

// OutdatedOf is repo.Index.Outdated of the packages recs in the index an upgrade resolves
// in, each pinned name taken from its repository (db.Requested), with the holds of
// db.Holds; then the packages from local archive files a repository has newer versions of
// (localNewer); sorted by name. An npm instance asked for has no Beside. A pinned package
// is listed, HeldTo its repository, where the repositories without its pin have a newer
// version, or where its repository is not in use or no longer offers it (Unused), which
// keeps it as installed.
func (ix *Catalog) OutdatedOf(recs []db.Record, requested map[string]repo.Requirement) ([]repo.Outdated, error) {
	in, gone, err := ix.pinnedIndex(recs, requested)
	if err != nil {
		return nil, err
	}
	out := in.Outdated(db.Packages(recs), keepGone(db.Holds(recs, requested, nil, nil), gone))
	for i, o := range out {
		if _, asked := requested[repo.InstanceKey(o.Kind, o.Name, o.Installed)]; asked {
			out[i].Beside = "" // what was asked for is the user's to move, beside others or not
		}
	}
	for _, q := range requested {
		if q.Repo == "" {
			continue
		}
		rec, ok := db.Find(recs, q.Name)
		if !ok || rec.Kind == repo.KindNPM {
			continue
		}
		i := slices.IndexFunc(out, func(o repo.Outdated) bool { return o.Name == q.Name })
		if i < 0 {
			out = append(out, repo.Outdated{Name: q.Name, Installed: rec.Version, Allowed: rec.Version, Newest: rec.Version})
			i = len(out) - 1
		}
		o := &out[i]
		if g := gone[q.Name]; g != nil {
			o.Held, o.HeldTo, o.Unused = "", q.Repo, true
		}
		if v, ok := ix.newestElsewhere(q.Name, o.Newest); ok {
			o.Newest, o.HeldTo = v, q.Repo
		}
		if o.HeldTo == "" && o.Newest == o.Installed && !o.Republished && !o.Bare {
			out = slices.Delete(out, i, i+1) // its repository has nothing newer, nor has another
		}
	}
	out = append(out, ix.localNewer(recs)...)
	slices.SortStableFunc(out, func(a, b repo.Outdated) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// pinHeld returns the Held of the pinned packages an upgrade of names (all, with none)
// moves or keeps, held lists already: each whose repository is gone (a whole upgrade keeps
// it as installed), and each its repository keeps below what another repository has.
func pinHeld(ix *Catalog, before []db.Record, requested map[string]repo.Requirement, pkgs []repo.Package, names []string, gone map[string]*repo.PinGoneError, held []Held) []Held {
	var out []Held
	for _, key := range slices.Sorted(maps.Keys(requested)) {
		q := requested[key]
		was, ok := db.Find(before, key)
		listed := slices.ContainsFunc(held, func(h Held) bool { return h.Name == q.Name })
		if q.Repo == "" || !ok || was.Kind == repo.KindNPM || listed || len(names) > 0 && !slices.Contains(names, q.Name) {
			continue
		}
		if g := gone[q.Name]; g != nil {
			out = append(out, Held{Name: q.Name, From: was.Version, Version: was.Version, HeldTo: q.Repo, Gone: g})
			continue
		}
		i := slices.IndexFunc(pkgs, func(p repo.Package) bool { return p.Name == q.Name })
		if i < 0 {
			continue
		}
		if v, ok := ix.newestElsewhere(q.Name, pkgs[i].Version); ok {
			out = append(out, Held{Name: q.Name, From: was.Version, Version: pkgs[i].Version, Newest: v, HeldTo: q.Repo})
		}
	}
	return out
}

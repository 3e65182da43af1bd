package txn

import (
	"os"
	"path/filepath"
	"slices"

	"pkg/db"
	"pkg/fetch"
	"pkg/repo"
)

// WithLocal returns ix with, ahead of its repositories, one for each local archive file:
// each of given (its Origin the file), and each installed package of recs that came from
// one and that given does not name. Such a repository offers only its one package, so a
// name installed from a file stays as installed, held, until a requirement pins it to a
// repository ("main/tool") or the package is removed. Each is named by its file's path,
// which no configured repository's name can be, and read from the file's directory.
func (ix *Catalog) WithLocal(given []repo.Package, recs []db.Record) (*Catalog, error) {
	pkgs := slices.Clone(given)
	for _, r := range db.Packages(recs) {
		if r.Origin != "" && !slices.ContainsFunc(given, func(p repo.Package) bool { return p.Name == r.Name }) {
			r.Archive = filepath.Base(r.Origin)
			if info, err := os.Stat(r.Origin); err == nil { // fetched again only if the cache lost it
				r.Size = info.Size()
			}
			pkgs = append(pkgs, r)
		}
	}
	if len(pkgs) == 0 {
		return ix, nil
	}
	var ixs []*Catalog
	for _, p := range pkgs {
		one, err := repo.NewIndex(p)
		if err != nil {
			return nil, err
		}
		src, err := fetch.NewSource(filepath.Dir(p.Origin), fetch.Options{})
		if err != nil {
			return nil, err
		}
		ixs = append(ixs, &Catalog{Index: one, Name: p.Origin, Source: src, origin: p.Origin})
	}
	if ix != nil {
		ixs = append(ixs, ix.Repos()...)
	}
	return Merge(ixs)
}

// localNewer returns the packages of recs installed from a local archive file (Origin)
// that a repository of ix has a newer version of, each with Allowed its version, Newest
// that repository's newest and Origin the file: what WithLocal keeps them from. The
// repository is the first of ix that offers the name, as a name resolves.
func (ix *Catalog) localNewer(recs []db.Record) []repo.Outdated {
	if ix == nil {
		return nil
	}
	var out []repo.Outdated
	for _, p := range db.Packages(recs) {
		if p.Origin == "" {
			continue
		}
		for _, r := range ix.Repos() {
			if r.origin != "" || len(r.Versions(p.Name)) == 0 {
				continue
			}
			for _, o := range r.Outdated([]repo.Package{p}, nil) {
				if o.Newest == p.Version { // only republished: the file is what was asked for
					continue
				}
				o.Allowed, o.Origin, o.Republished, o.Bare = p.Version, p.Origin, false, false
				out = append(out, o)
			}
			break
		}
	}
	return out
}

// rebuilt returns installed without the packages that a local archive file of ix offers
// as another archive (WithLocal): a rebuild given again, or another version, older too
// (apt asks before that downgrade, and apt-get -y refuses it without --allow-downgrades;
// naming the file is the request here). The file is what was asked for, so the resolver takes it
// in their place. An npm instance is dropped only for its own version, as several
// versions of an npm name may be installed.
func (ix *Catalog) rebuilt(installed []repo.Package) []repo.Package {
	return slices.DeleteFunc(slices.Clone(installed), func(p repo.Package) bool {
		for _, r := range ix.Repos() {
			if r.origin != "" && slices.ContainsFunc(r.Packages, func(q repo.Package) bool {
				return q.Name == p.Name && q.SHA256 != p.SHA256 && (q.Version == p.Version || p.Kind != repo.KindNPM)
			}) {
				return true
			}
		}
		return false
	})
}

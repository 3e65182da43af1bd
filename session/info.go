package session

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"pkg/db"
	"pkg/repo"
)

// Info is what Session.Info read of one package: the record of it installed (Installed),
// with its directory (where the root presents its files: for a package with an into, that
// directory, db.Record.InRoot), the requirement it was asked for by (empty where it came in as a
// dependency) and whether it is held; or, where it is not installed, the package the
// indexes offer (Offered) and every version of it they list. The caller words it.
type Info struct {
	Installed *Record
	Dir       string
	Requested string
	Held      bool

	Offered  *repo.Package
	Versions []string
}

// Info returns what there is to show of the package name: as installed, or, where it is
// not and a repository is in effect, as the indexes offer it (Info.Offered; a
// *NotOfferedError where they have no such package). Not installed where no
// repository is in effect, it is a *NotInstalledError, or one wrapping
// install.ErrNoRoot where nothing was ever installed (install.ErrCutShort where the
// root's first change was cut short).
func (s *Session) Info(ctx context.Context, name string) (info Info, err error) {
	var recs []db.Record
	var requested map[string]repo.Requirement
	err = s.viewRoot(func(d *db.DB) (err error) { recs, requested, err = d.State(); return err })
	rootErr, none := err, noRoot(err)
	if err != nil && !none {
		return info, err
	}
	p, ok, err := installedNamed("info", name, recs)
	switch {
	case err != nil:
		return info, err
	case !ok && s.hasRepos():
		_, ix, err := s.openFetcher(ctx, false, nil)
		if err != nil {
			return info, err
		}
		p, err := offeredPackage(ix, name, recs)
		if err != nil {
			return info, fmt.Errorf("info %w", err)
		}
		return Info{Offered: &p, Versions: ix.Versions(name)}, nil
	case none:
		return info, fmt.Errorf("info %s: not installed: %w", name, rootErr)
	case !ok:
		return info, db.NotInstalled("info", name, recs)
	}
	dir, err := filepath.Abs(s.Root)
	if err != nil {
		return info, err
	}
	held := slices.ContainsFunc(db.Holds(recs, requested, nil, nil), func(h repo.Hold) bool { return h.Key == p.Key() })
	info = Info{Installed: &p, Dir: filepath.Join(dir, "pkgs", repo.FileName(p.Key())), Held: held}
	if p.Into != "" { // its files are at their prefix paths, the tree in pkgs/ a placeholder
		info.Dir = filepath.Join(dir, filepath.FromSlash(p.Into))
	}
	if r, ok := requested[p.Key()]; ok {
		info.Requested = r.String()
	}
	return info, nil
}

// Found is what Session.Search read: the packages of the indexes in effect that match a
// word (repo.Index.Search), the records of what is installed (to mark which of them are), and
// where the indexes were read from, for saying that nothing matched. The caller words it.
type Found struct {
	Packages  []repo.Package
	Installed []Record
	From      string
}

// Search returns the packages of the indexes in effect that match word, with what is
// installed. A root pkg cannot read marks nothing installed.
func (s *Session) Search(ctx context.Context, word string) (found Found, err error) {
	_, ix, err := s.openFetcher(ctx, false, nil)
	if err != nil {
		return found, err
	}
	var recs []db.Record // for the marks only
	_ = s.peekRoot(func(d *db.DB) (err error) { recs, err = d.List(); return err })
	return Found{Packages: ix.Search(word), Installed: recs, From: ix.Source.String()}, nil
}

// installedNamed returns the record of the installed package arg names (db.Keys), and
// false where none is installed; an argument naming several versions installed is refused
// (*db.AmbiguousError).
func installedNamed(op, arg string, recs []db.Record) (db.Record, bool, error) {
	keys, err := db.Keys(op, []string{arg}, recs)
	var ae *db.AmbiguousError
	switch {
	case errors.As(err, &ae):
		return db.Record{}, false, err
	case err != nil:
		return db.Record{}, false, nil
	}
	p, ok := db.Find(recs, keys[0])
	return p, ok, nil
}

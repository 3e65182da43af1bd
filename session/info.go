package session

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"pkg/db"
	"pkg/install"
	"pkg/repo"
	"pkg/report"
)

// Info returns what there is to show of the package name (report.Info): as installed, or,
// where it is not and a repository is in effect, as the indexes offer it (offered; a
// *NotOfferedError where they have no such package). Not installed where no
// repository is in effect, it is a *NotInstalledError, or one wrapping
// install.ErrNoRoot where nothing was ever installed.
func (s *Session) Info(ctx context.Context, name string) (info report.Info, offered bool, err error) {
	var recs []db.Record
	var requested map[string]string
	err = s.viewRoot(func(d *db.DB) (err error) { recs, requested, err = d.State(); return err })
	noRoot := errors.Is(err, install.ErrNoRoot)
	if err != nil && !noRoot {
		return info, false, err
	}
	p, ok := db.Find(recs, name)
	switch {
	case !ok && s.hasRepos():
		_, ix, err := s.openFetcher(ctx, false, false)
		if err != nil {
			return info, false, err
		}
		p, err := offeredPackage(ix, name, recs)
		if err != nil {
			return info, false, fmt.Errorf("info %w", err)
		}
		return report.OfferedInfo(p, ix.Versions(name)), true, nil
	case noRoot:
		return info, false, fmt.Errorf("info %s: not installed: %w", name, err)
	case !ok:
		return info, false, db.NotInstalled("info", name, recs)
	}
	dir, err := filepath.Abs(s.Root)
	if err != nil {
		return info, false, err
	}
	held := slices.ContainsFunc(db.Holds(recs, requested, nil), func(h repo.Requirement) bool { return h.Name == name })
	return report.InstalledInfo(&p, filepath.Join(dir, "pkgs", p.Name), requested[p.Name], held), false, nil
}

// Search returns the packages of the indexes in effect that match word (repo.Index.Search),
// each with the version installed, if any (report.Search), and where the indexes were read
// from, for saying that nothing matched. A root pkg cannot read marks nothing installed.
func (s *Session) Search(ctx context.Context, word string) (found report.Search, from string, err error) {
	_, ix, err := s.openFetcher(ctx, false, false)
	if err != nil {
		return found, "", err
	}
	var recs []db.Record // for the marks only
	_ = s.peekRoot(func(d *db.DB) (err error) { recs, err = d.List(); return err })
	return report.NewSearch(word, ix.Search(word), recs), ix.Source.String(), nil
}

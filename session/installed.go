package session

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"pkg/db"
	"pkg/install"
	"pkg/notice"
	"pkg/repo"
	"pkg/txn"
)

// Record is a package as the root records it installed.
type Record = db.Record

// NeedInstalled returns the error of op for the first of names that installed lacks (a
// *NotInstalledError), that names several versions installed (an *AmbiguousError) or that
// cannot name an installed package (a *repo.NameError); nil for none (db.NeedInstalled).
func NeedInstalled(op string, names []string, installed []Record) error {
	return db.NeedInstalled(op, names, installed)
}

// Keys returns the key (db.Record.Key) of the installed package each of args names: its
// name, or NAME@VERSION for one of an npm name's several versions (db.Keys).
func Keys(op string, args []string, installed []Record) ([]string, error) {
	return db.Keys(op, args, installed)
}

// Installed returns the root's installed packages and the requirements of those the user
// asked for (db.DB.State), read without waiting for a command changing the root
// (viewRoot); none where there is no root, or where the root's first change was cut
// short (install.ErrCutShort), and the observer hears which.
func (s *Session) Installed() (recs []Record, requested map[string]repo.Requirement, err error) {
	err = s.viewRoot(func(d *db.DB) (err error) {
		recs, requested, err = d.State()
		return err
	})
	switch {
	case errors.Is(err, install.ErrNoRoot):
		s.obs.Notice(notice.NothingInstalled{Err: err})
		err = nil
	case errors.Is(err, install.ErrCutShort):
		s.obs.Notice(notice.RootBusy{Dir: s.Root})
		err = nil
	}
	return recs, requested, err
}

// Files returns the record of the installed package name (NAME@VERSION for one of an npm
// name's several versions: db.Keys) and its files, read as Installed reads. Not installed,
// it is a *NotInstalledError, or one wrapping ErrNoRoot where nothing was ever installed
// (install.ErrCutShort where the root's first change was cut short).
func (s *Session) Files(name string) (rec Record, files []db.File, err error) {
	err = s.viewRoot(func(d *db.DB) error {
		installed, err := d.List()
		if err != nil {
			return err
		}
		keys, err := db.Keys("files", []string{name}, installed)
		if err != nil {
			return err
		}
		ps, fs, err := d.Installed(keys...)
		if errors.Is(err, db.ErrNotInstalled) { // removed meanwhile
			return db.NotInstalled("files", name, installed)
		} else if err == nil {
			rec, files = ps[0], fs[0]
		}
		return err
	})
	if noRoot(err) {
		return rec, nil, fmt.Errorf("files %s: not installed: %w", name, err)
	}
	return rec, files, err
}

// Names returns what a shell completes a package name to, saying nothing: the
// names of the root's installed packages (as many as it could read), or, offered, of the
// packages the repositories in effect offer, read only from the copies of their indexes
// the cache keeps (as offline: no network, nothing changed in the cache), a repository
// whose copy cannot be read or believed left out.
func (s *Session) Names(ctx context.Context, offered bool) []string {
	if offered {
		return s.offeredNames(ctx)
	}
	var names []string
	s.peekRoot(func(d *db.DB) error {
		ps, err := d.List()
		seen := make(map[string]bool, len(ps))
		for _, p := range ps {
			if !seen[p.Name] { // an npm name's versions are one name
				seen[p.Name] = true
				names = append(names, p.Name)
			}
		}
		return err
	})
	return names
}

// Outdated returns how many packages are installed and those of them the indexes in
// effect have newer versions of, with the holds and pins of the requests, and those from
// local archive files they have newer versions of (txn.Catalog.OutdatedOf); a package
// from a local archive file is held, as an upgrade holds it (txn.Catalog.WithLocal).
func (s *Session) Outdated(ctx context.Context) (installed int, out []repo.Outdated, err error) {
	recs, requested, err := s.Installed()
	if err != nil {
		return 0, nil, err
	}
	_, ix, err := s.openFetcher(ctx, false, nil)
	if err == nil {
		ix, err = ix.WithLocal(nil, recs)
	}
	if err != nil {
		return 0, nil, err
	}
	out, err = ix.OutdatedOf(recs, requested)
	return len(recs), out, err
}

// offeredNames returns the names of the packages the repositories in effect offer (Names).
func (s *Session) offeredNames(ctx context.Context) []string {
	rs, err := s.Repositories()
	if err != nil {
		return nil
	}
	cache, err := s.openCache(ctx, true)
	if err != nil {
		return nil
	}
	var names []string
	for _, r := range rs {
		o, err := s.repoOptions(r)
		if err != nil {
			continue
		}
		o.Offline = true
		ix, err := txn.ReadIndex(ctx, cache, s.Root, s.rootOptions(), r.URLs[0], o)
		if err != nil {
			continue
		}
		for _, p := range ix.Packages {
			names = append(names, p.Name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

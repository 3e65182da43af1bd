package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"pkg/config"
	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/notice"
	"pkg/pin"
	"pkg/repo"
	"pkg/trust"
	"pkg/txn"
)

// openFetcher opens the cache and reads the index of each repository in effect for the
// root (txn.ReadIndex), telling the observer what there is to say of each, and returns
// them as one (txn.Merge) and a fetcher of their packages. For a dry run (dry), it changes
// nothing in the cache: it keeps no copy of the index read, and reads a cache that does
// not exist yet as an empty one. For a change (not nil) that can be made with none
// (repoless), it returns a nil index where no repository is in effect: the change adds
// what it takes its packages from (Session.catalog).
func (s *Session) openFetcher(ctx context.Context, dry bool, change *Request) (*txn.Fetcher, *txn.Catalog, error) {
	rs, err := s.Repositories()
	if err == nil && len(rs) == 0 && !(change != nil && s.repoless(*change)) {
		err = s.noRepo()
	}
	if err != nil {
		return nil, nil, err
	}
	cache, err := s.openCache(ctx, dry)
	if err != nil {
		return nil, nil, err
	}
	ix, err := s.readIndexes(ctx, cache, rs, s.Root)
	if err != nil {
		return nil, nil, err
	}
	if ix == nil {
		return s.newFetcher(nil, cache), nil, nil
	}
	f := s.newFetcher(ix.Source, cache)
	f.Sources = ix.Sources()
	return f, ix, nil
}

// readIndexes reads the indexes of rs as the root at root ("" for none) lets it
// (txn.ReadIndex), telling the observer what there is to say of each, and merges them;
// nil for no repository.
func (s *Session) readIndexes(ctx context.Context, cache *fetch.Cache, rs []config.Repo, root string) (*txn.Catalog, error) {
	var ixs []*txn.Catalog
	for _, r := range rs {
		o, err := s.repoOptions(r)
		if err != nil {
			return nil, err
		}
		ix, err := txn.ReadIndex(ctx, cache, root, s.rootOptions(), r.URLs[0], o)
		if err != nil {
			return nil, &indexError{r, configuredError(r, err)}
		}
		if ix.Name, err = indexName(rs, r, ix); err != nil {
			return nil, err
		}
		s.tellTrust(ix)
		if s.Offline { // what offline installs, locks and frozen checks are as current as
			if t, ok := cache.IndexTime(ix.Source); ok {
				s.obs.Notice(notice.OfflineIndex{URL: ix.Source.URL(), Read: t})
			}
		}
		ixs = append(ixs, ix)
	}
	if len(ixs) == 0 {
		return nil, nil
	}
	return txn.Merge(ixs)
}

// indexError is the error of reading the index of the repository r, unchanged: it tells
// a caller which repository it was (lockRepoError).
type indexError struct {
	r   config.Repo
	err error
}

func (e *indexError) Error() string { return e.err.Error() }
func (e *indexError) Unwrap() error { return e.err }

// ConfiguredError is the error of a repository a configuration file or a lockfile (File)
// names Repo at a location that serves no repository (Err, an ErrNoRepository): a path or
// a tag mistyped in the configuration, or a repository moved since the lockfile recorded
// it (Lock, its path; "" for a configuration file).
type ConfiguredError struct {
	Repo, File string
	Lock       string
	Err        error
}

func (e *ConfiguredError) Error() string {
	return fmt.Sprintf("repository %s (from %s): %v", e.Repo, e.File, e.Err)
}

func (e *ConfiguredError) Unwrap() error { return e.Err }

// configuredError returns err, of reading the index of r, as a *ConfiguredError where r
// comes from a configuration file or a lockfile and its location serves no repository;
// else err.
func configuredError(r config.Repo, err error) error {
	if !errors.Is(err, ErrNoRepository) || r.File == "" || r.File == "--repo" || r.File == "PKG_REPO" {
		return err
	}
	return &ConfiguredError{Repo: r.Name, File: r.File, Lock: r.Lock, Err: err}
}

// Fetch downloads the packages the indexes in effect resolve reqs to, with their
// dependencies, into the cache (txn.Fetcher.Fetch), the observer hearing of each.
func (s *Session) Fetch(ctx context.Context, reqs []repo.Requirement) error {
	f, ix, err := s.openFetcher(ctx, false, nil)
	if err != nil {
		return err
	}
	pkgs, err := ix.Resolve(reqs)
	if err != nil {
		return err
	}
	return s.obs.During(pkgs, func() error { return f.Fetch(ctx, pkgs, nil) })
}

// Lock returns the lockfile of r's requirements for r's platforms, resolved against the
// indexes in effect, r.Lock being the one at r.LockPath it replaces, if any (txn.Lock). A
// lock of one repository the user named records its name (repo.Lock.Name).
func (s *Session) Lock(ctx context.Context, r Request) (*repo.Lock, error) {
	if r.LockRepos && r.Lock != nil {
		s.useLock(r.Lock, r.LockPath)
	}
	_, ix, err := s.openFetcher(ctx, false, nil)
	if err != nil {
		return nil, err
	}
	l, err := txn.Lock(r.Lock, ix, r.Requires, r.LockPath, r.Platforms)
	if err != nil {
		return nil, s.ofCopy(err)
	}
	if rs, err := s.Repositories(); err == nil && len(l.Repos) == 0 && len(rs) == 1 && rs[0].Naming != config.ByLocation {
		l.Name = ix.Name // a sync takes the configured repository of that name, with its credentials and keys
	}
	return l, nil
}

// offlineCopyError refuses, offline, an index older than a lockfile's: the cache's copy is
// older (ErrOffline), not one a repository serves now.
type offlineCopyError struct{ err error }

func (e *offlineCopyError) Error() string   { return e.err.Error() }
func (e *offlineCopyError) Unwrap() []error { return []error{e.err, ErrOffline} }

// ofCopy returns err, of checking the indexes in effect against a lockfile, as an
// *offlineCopyError where the session is offline and the check found one older.
func (s *Session) ofCopy(err error) error {
	if s.Offline && errors.Is(err, pin.ErrLockRollback) {
		return &offlineCopyError{err}
	}
	return err
}

// newFetcher returns a fetcher from src into cache, reporting to the session's observer.
func (s *Session) newFetcher(src *fetch.Source, cache *fetch.Cache) *txn.Fetcher {
	f := &txn.Fetcher{Source: src, Cache: cache, Jobs: s.Jobs, Offline: s.Offline, Observer: s.obs}
	cache.WaitLimit, cache.NoSync = s.LockTimeout, s.NoSync
	return f
}

// openRootFor takes the root's lock for a change whose index ix was read without it, and
// returns the root, and f and ix, or those of the index read again if ix is stale.
func (s *Session) openRootFor(ctx context.Context, f *txn.Fetcher, ix *txn.Catalog) (*install.Root, *txn.Fetcher, *txn.Catalog, error) {
	root, err := s.openRoot(ctx)
	if err != nil || ix == nil {
		return root, f, ix, err
	}
	if stale, err := stale(ix, root); err != nil || stale {
		if err == nil {
			f, ix, err = s.openFetcher(ctx, false, nil)
		}
		if err != nil {
			root.Close()
			return nil, nil, nil, err
		}
	}
	return root, f, ix, nil
}

// stale reports whether the root's record of a repository of ix (db.DB.Repo) changed
// since ix was read (txn.Catalog.Pin), as when another command accepted a newer index
// while this one waited for the root: the index must then be read again, or pin.Accept
// would refuse it as a rollback.
func stale(ix *txn.Catalog, root *install.Root) (bool, error) {
	for _, r := range ix.Repos() {
		now, ok, err := root.DB().Repo(r.Source.URL())
		switch {
		case err != nil:
			return false, err
		case ok != (r.Pin != nil):
			return true, nil
		case ok && (pin.Record(now) != pin.Record(*r.Pin) || !slices.Equal(now.Keys, r.Pin.Keys)):
			return true, nil
		}
	}
	return false, nil
}

// localInstalled reports whether the root holds a package from a local archive file,
// read as peekRoot reads it.
func (s *Session) localInstalled() (found bool) {
	s.peekRoot(func(d *db.DB) error {
		ps, err := d.List()
		found = slices.ContainsFunc(ps, func(p db.Record) bool { return p.Origin != "" })
		return err
	})
	return found
}

// withLocal returns ix with the repositories of the local archive files given (Local) and
// of those the root's records rs hold (txn.Catalog.WithLocal), and makes f fetch from them.
// A file whose package would sit beside an installed one is refused (besideKind).
func (s *Session) withLocal(f *txn.Fetcher, ix *txn.Catalog, rs []db.Record) (*txn.Catalog, error) {
	if err := besideKind(s.Local, rs); err != nil {
		return nil, err
	}
	ix, err := ix.WithLocal(s.Local, rs)
	switch {
	case err != nil:
		return nil, err
	case ix == nil: // no repository, and the local packages read before are gone
		return nil, s.noRepo()
	}
	f.Source, f.Sources = ix.Source, ix.Sources()
	return ix, nil
}

// A KindError refuses a local archive file whose package has the name of an installed
// package of another kind, one of the two of kind npm: an npm package is installed beside
// the others of its name (as versions of an npm package are), not in their place, so both
// would be installed, neither told apart by the name nor by the request. pkg installed npm
// pack's tarballs as plain trees at lib/node_modules/NAME before it took them as npm's.
type KindError struct {
	Name, Version string // the installed package's
	Kind          string // the installed package's ("" plain)
	Origin        string // the file given
	Given         string // the file's kind
}

func (e *KindError) Error() string {
	return fmt.Sprintf("local archive file %s: %s %s is installed as %s, and the file is %s: remove it before installing the file",
		e.Origin, e.Name, e.Version, kindText(e.Kind), kindText(e.Given))
}

// kindText is a package kind in a sentence.
func kindText(kind string) string {
	if kind == "" {
		return "a plain tree"
	}
	return "a package of kind " + kind
}

// besideKind returns a *KindError for the first package of the local archive files given
// that an installed one of rs, of its name and another kind, would sit beside.
func besideKind(given []repo.Package, rs []db.Record) error {
	for _, p := range given {
		for _, r := range rs {
			if r.Name == p.Name && r.Kind != p.Kind && (r.Kind == repo.KindNPM || p.Kind == repo.KindNPM) {
				return &KindError{Name: r.Name, Version: r.Version, Kind: r.Kind, Origin: p.Origin, Given: p.Kind}
			}
		}
	}
	return nil
}

// checkLockSigned checks that the lockfile l at path says it was made from indexes a key
// trusted here verified, where signatures are required (pin.CheckLockSigned).
func (s *Session) checkLockSigned(l *repo.Lock, path string) error {
	global, err := s.trustPolicy()
	if err != nil {
		return err
	}
	var pins pin.Set // read without the root's lock: a sync takes it after, and reads no index
	if err := s.peekRoot(func(d *db.DB) (err error) { pins, err = d.Repos(); return err }); err != nil {
		return err
	}
	srcs, rs, err := s.lockSources(l)
	for name, src := range srcs {
		r, _ := l.Of(name)
		var policy trust.Policy
		if policy, err = rs[name].Trust(global); err == nil {
			err = pin.CheckLockSigned(r.Index, path, policy, pins, s.Root, src.URL())
		}
		if err != nil {
			break
		}
	}
	return err
}

// lockSources returns the source of each repository of the lockfile l a sync installs
// from, by the name its packages give (config.LockUses), and the repository each is.
func (s *Session) lockSources(l *repo.Lock) (map[string]*fetch.Source, map[string]config.Repo, error) {
	rs, err := s.Repositories()
	if err != nil {
		return nil, nil, err
	}
	srcs, used := make(map[string]*fetch.Source), config.LockUses(l, rs)
	for name, r := range used {
		if srcs[name], err = s.repoSource(r); err != nil {
			return nil, nil, err
		}
	}
	return srcs, used, nil
}

// Forgotten is what Forget forgot of a repository.
type Forgotten struct {
	URL    string
	InRoot bool     // there is a root, and it was looked in
	Gone   []db.Pin // the root's records forgotten
}

// Forget forgets the signed index of the repository in effect named name (the first for
// "") that the root and the cache accepted last, and the keys the root pinned it to
// (pin.Forget, fetch.Cache.ForgetIndex). It makes no root. What it forgot of the root
// comes with an error of the cache's.
func (s *Session) Forget(ctx context.Context, name string) (*Forgotten, error) {
	src, err := s.source(name)
	if err != nil {
		return nil, err
	}
	cache, err := s.openCache(ctx, false)
	if err != nil {
		return nil, err
	}
	out := &Forgotten{URL: src.URL()}
	if install.Exists(s.Root) == nil {
		root, err := s.openRoot(ctx)
		if err != nil {
			return nil, err
		}
		defer root.Close()
		policy, err := s.trustPolicy()
		if err != nil {
			return nil, err
		}
		if out.Gone, err = pin.Forget(root.DB(), src.URL(), policy); err != nil {
			return nil, err
		}
		out.InRoot = true
	}
	return out, cache.ForgetIndex(src)
}

// tellTrust tells the observer of an index the cache could not keep, and, once per root
// until that changes (install.Notices), of one not verified, or verified but expired.
func (s *Session) tellTrust(ix *txn.Catalog) {
	if ix.NotKept != nil {
		s.obs.NotKept(ix.NotKept)
	}
	res := ix.Trust
	key, state := "index "+res.Location, res.Standing()
	if state == "" {
		s.notices.End(key)
		return
	}
	if !s.notices.Due(key, state) {
		return
	}
	said := true
	if u := res.Unverified(); res.Expired {
		s.obs.Notice(notice.ExpiredIndex{Location: res.Location, Version: res.Version, Expires: res.Expires})
	} else if u != nil {
		said = s.obs.Unverified(u, errors.Is(u, trust.ErrUsedUnsigned) && strings.HasPrefix(res.Location, "file://"))
	}
	if said {
		s.notices.Said(key, state)
	}
}

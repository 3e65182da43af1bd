package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/notice"
)

// Verify checks the files of the installed packages names (all for none) against what was
// installed (install.Root.VerifyWith, or VerifyFull where full), and returns every
// installed package and the problems found; a name not installed is a *NotInstalledError
// (one with a constraint a *repo.NameError, one of several versions installed an
// *AmbiguousError: NAME@VERSION picks one). It takes the root's lock where it can: a root
// of another user's, or on a read-only filesystem, it reads without, saying so of the
// first. The cache's extents spare hashing the files that still share them; full hashes
// every file, and the extents tell those cloned from a damaged entry
// (install.ErrCacheDamaged) from those changed in the root. It makes no cache. Where the
// last change's links into the root are still to make, it checks nothing and returns why:
// the *LinksError of the roll-forward its start ran and could not finish, or
// install.ErrNotLinked read without the lock.
func (s *Session) Verify(ctx context.Context, names []string, full bool) (all []db.Record, problems []install.FileError, err error) {
	root, err := s.openRootLinks(ctx, false)
	// Checking needs no writing; on a read-only filesystem nothing changes it meanwhile.
	if notYours := errors.Is(err, install.ErrNotYours); notYours || errors.Is(err, install.ErrReadOnly) {
		if root, err = install.OpenReadOnly(s.Root, s.rootOptions()); err == nil && notYours {
			s.obs.Notice(notice.RootNotYours{Dir: root.Dir()})
		}
	}
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	if all, err = root.DB().List(); err == nil {
		names, err = db.Keys("verify", names, all)
	}
	if err != nil {
		return nil, nil, err
	}
	var cache install.Cache
	var fc *fetch.Cache
	if _, err := os.Stat(s.Cache); err == nil {
		if fc, err = s.openCache(ctx, false); err == nil {
			// verify --full trusts no byte of a tar, and asks only which files lie on its
			// blocks: its check would remove an entry whose damage they hold.
			fc.Unchecked = full
			cache = fc
		}
	}
	verify := root.VerifyWith
	if full {
		verify = root.VerifyFull
	}
	if problems, err = verify(cache, names...); err != nil {
		return nil, nil, err // the prefix's *LinksError said once, as the error
	}
	if fc != nil {
		// Records its checks, so that the next verify reads no tar it checked. What it could
		// not sync (an entry written before a crash) it leaves as Close does: marked, and
		// checked whole at its next use; nothing verify found depends on it.
		_ = fc.Settle()
	}
	if root.Links() != nil {
		s.obs.LinksWrong(root.Links())
	}
	if saved := root.Saved(); len(saved) > 0 {
		s.obs.Notice(notice.Saved{Dir: filepath.Join(root.Dir(), ".pkg", "saved"), Count: len(saved)})
	}
	return all, problems, nil
}

// Uncached returns those of keys whose archives the cache does not hold, by their records
// in all (never fetched here, pruned, or found damaged and removed, as a verify's check of
// an entry at its use removes it): a reinstall of them must fetch, and cannot offline. With
// no cache, or one that cannot be opened, all of them.
func (s *Session) Uncached(ctx context.Context, all []db.Record, keys []string) []string {
	if len(keys) == 0 {
		return nil
	}
	if _, err := os.Stat(s.Cache); err != nil {
		return keys
	}
	c, err := s.openCache(ctx, true)
	if err != nil {
		return keys
	}
	return slices.DeleteFunc(slices.Clone(keys), func(k string) bool {
		rec, ok := db.Find(all, k)
		return ok && rec.SHA256 != "" && c.Has(rec.SHA256)
	})
}

package session

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/notice"
)

// openCache opens the cache for the rest of the session (Close closes it), or, for a dry
// run (dry), so that nothing in it changes (fetch.OpenCacheReadOnly). The session's
// caches share one lock (fetch.Cache.Share), so that its own use does not hold up its
// Trim.
func (s *Session) openCache(ctx context.Context, dry bool) (*fetch.Cache, error) {
	if s.shared != nil {
		cache, err := s.shared.Share()
		if err == nil {
			cache.ReadOnly = dry
			s.caches = append(s.caches, cache)
		}
		return cache, err
	}
	open := fetch.OpenCache
	if dry {
		open = fetch.OpenCacheReadOnly
	}
	cache, err := open(ctx, s.Cache)
	if err != nil {
		return nil, err
	}
	if !cache.Temporary() {
		s.shared = cache
	}
	s.caches = append(s.caches, cache)
	return cache, nil
}

// openRoot opens the root, taking its lock (install.Open), and tells the observer what
// there is to say of it.
func (s *Session) openRoot(ctx context.Context) (*install.Root, error) {
	return s.openRootLinks(ctx, true)
}

// openRootLinks is openRoot, telling the observer of the links Open could not make
// (install.Root.Links) only where links: a caller that returns them as its error says
// them so.
func (s *Session) openRootLinks(ctx context.Context, links bool) (*install.Root, error) {
	r, err := install.Open(ctx, s.Root, s.rootOptions())
	if err != nil {
		return r, err
	}
	s.notices.Hold(r)
	if links && r.Links() != nil {
		s.obs.LinksWrong(r.Links())
	}
	for _, n := range r.Notes() {
		s.obs.Notice(n)
	}
	return r, nil
}

// RootExists refuses a root where nothing was ever installed, for what works only on what
// is installed: a mistyped root must not pass as an empty one, nor be created.
func (s *Session) RootExists() error {
	if err := install.Exists(s.Root); err != nil {
		return fmt.Errorf("%w: nothing was ever installed there", err)
	}
	return nil
}

// viewRoot calls fn with the root's database without waiting for a command that is
// changing the root: fn then sees what was installed before it, and the observer hears
// so.
func (s *Session) viewRoot(fn func(d *db.DB) error) error {
	busy := func(holder string) { s.obs.Notice(notice.RootBusy{Dir: s.Root, Holder: holder}) }
	return install.View(s.Root, s.rootOptions(), busy, fn)
}

// peekRoot calls fn with the root's database as viewRoot does, silently, and not at all
// where there is no root yet (noRoot).
func (s *Session) peekRoot(fn func(d *db.DB) error) error {
	err := install.View(s.Root, s.rootOptions(), nil, fn)
	if noRoot(err) {
		return nil
	}
	return err
}

// rootDir returns the root's absolute path, as an opened root names itself
// (install.Root.Dir): what the plan of a dry run, which opens none, names.
func (s *Session) rootDir() (string, error) { return filepath.Abs(s.Root) }

// readOnlyRoot opens the root to read without its lock, or returns nil where there is none
// yet (noRoot).
func (s *Session) readOnlyRoot() (*install.Root, error) {
	r, err := install.OpenReadOnly(s.Root, s.rootOptions())
	if noRoot(err) {
		return nil, nil
	}
	return r, err
}

// noRoot reports whether err says the root records nothing yet: there is none, or its
// first change was cut short, which the change that opens it undoes first.
func noRoot(err error) bool {
	return errors.Is(err, install.ErrNoRoot) || errors.Is(err, install.ErrCutShort)
}

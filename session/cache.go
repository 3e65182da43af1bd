package session

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"pkg/fetch"
	"pkg/internal/units"
	"pkg/notice"
	"pkg/runner"
)

// Limits are the limits of a prune (fetch.Limits): by age and by the cache's size.
type Limits = fetch.Limits

// Upkeep is the upkeep of a session's cache: its entries listed, and removed by a prune's
// limits or all, by a command, or pruned when due after a command that added to the cache.
// It takes no root's lock.
type Upkeep struct{ s *Session }

// Upkeep returns the upkeep of the session's cache.
func (s *Session) Upkeep() Upkeep { return Upkeep{s} }

// Limits returns the limits of a prune: each one given, by its name in the
// configuration's [cache] ("older-than", "max-size"), else the configuration's. A limit
// given as 0 lifts both: every entry no root uses goes. A value it cannot read is a
// *LimitError; other names are not limits.
func (u Upkeep) Limits(given map[string]string) (Limits, error) {
	cfg, err := u.s.config()
	if err != nil {
		return Limits{}, err
	}
	l := Limits{OlderThan: cfg.Cache.OlderThan, MaxSize: cfg.Cache.MaxSize}
	lifted := false
	for _, name := range []string{"older-than", "max-size"} { // in order: the same error first, always
		v, ok := given[name]
		if !ok {
			continue
		}
		if name == "older-than" {
			l.OlderThan, err = units.ParseDuration(v)
			lifted = lifted || err == nil && l.OlderThan == 0
		} else {
			l.MaxSize, err = units.ParseSize(v)
			lifted = lifted || err == nil && l.MaxSize == 0
		}
		if err != nil {
			return Limits{}, &LimitError{Name: name, Err: err}
		}
	}
	if lifted {
		return Limits{}, nil
	}
	return l, nil
}

// LimitError is a limit of Limits' that it cannot read.
type LimitError struct {
	Name string
	Err  error
}

func (e *LimitError) Error() string { return "cache limit " + e.Name + ": " + e.Err.Error() }

func (e *LimitError) Unwrap() error { return e.Err }

// Trimmed is what Trim removed.
type Trimmed struct {
	fetch.Trimmed
	RunRoots   int   // run roots removed (runner.Prune)
	Unfinished int64 // bytes of unfinished downloads removed (fetch.Cache.RemoveUnfinished)
}

// Trim removes the cache's entries and run roots: pruning, the run roots no command runs
// from and the entries no root uses that l lets go (pruneCache), having read every root first;
// else every entry and every run root no command runs from. It needs no root's lock, so
// that a command that waits for the cache while it holds one cannot hold it up. Where
// there is no cache it returns nil, having said so. An error after a removal comes with
// what was removed.
func (u Upkeep) Trim(ctx context.Context, prune bool, l Limits) (*Trimmed, error) {
	s := u.s
	cache, err := s.removingCache(ctx)
	if cache == nil {
		return nil, err
	}
	out := &Trimmed{}
	if prune {
		var forgot []string
		*out, forgot, err = pruneCache(cache, s.Root, s.rootOptions(), l)
		for _, dir := range forgot {
			s.obs.Notice(notice.ForgotRoot{Dir: dir})
		}
	} else {
		var ran []string
		ran, err = runner.Prune(cache, l, nil)
		if out.RunRoots = len(ran); err == nil {
			out.Trimmed, err = cache.Trim(l, func(fetch.Entry) bool { return false })
		}
	}
	if err == nil || len(out.Removed) > 0 { // an error before any removal is all there is to say
		out.Unfinished = cache.RemoveUnfinished()
	}
	return out, err
}

// AutoPrune prunes the cache the session opened first when a prune is due (autoPruneCache),
// saying what it removed, or why it could not. Call it after the command, once the root
// is closed; it does nothing after a dry run or where no cache was opened.
func (u Upkeep) AutoPrune() {
	s := u.s
	if len(s.caches) == 0 || s.caches[0].ReadOnly {
		return
	}
	cfg, err := s.config()
	if err != nil {
		return // the command reading the configuration said so
	}
	cache, l := s.caches[0], Limits{OlderThan: cfg.Cache.OlderThan, MaxSize: cfg.Cache.MaxSize}
	t, _, done, err := autoPruneCache(cache, s.Root, s.rootOptions(), l)
	if t.RunRoots > 0 {
		s.obs.Notice(notice.RunRootsPruned{Count: t.RunRoots, OlderThan: l.OlderThan})
	}
	if err != nil {
		s.obs.Notice(notice.NotPruned{Err: err})
	} else if done && len(t.Removed) > 0 {
		s.obs.Notice(notice.AutoPruned{Removed: len(t.Removed), Freed: t.Freed, Size: t.Size})
	}
}

// removingCache opens the cache to remove entries, as its only user, saying so if it must
// wait for others; it returns nil where there is no cache (cacheMissing).
func (s *Session) removingCache(ctx context.Context) (*fetch.Cache, error) {
	if s.cacheMissing() {
		return nil, nil
	}
	cache, err := s.openCache(ctx, false)
	if err == nil {
		err = cache.Exclusive(ctx, func(pids []int) { s.obs.Notice(notice.CacheWaiting{Dir: s.Cache, Pids: pids}) })
	}
	if err != nil {
		return nil, err
	}
	return cache, nil
}

// cacheMissing reports, with a note, that the cache directory does not exist: there is
// then nothing to show or remove, and no directory is made.
func (s *Session) cacheMissing() bool {
	if _, err := os.Stat(s.Cache); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	s.obs.Notice(notice.NoCache{Dir: s.Cache})
	return true
}

// Listing is the cache's entries and the disk they take.
type Listing struct {
	Entries []fetch.Entry
	Disk    int64 // with shared blocks counted once (fetch.Cache.DiskUsage)
}

// List returns the cache's entries, or nil where there is no cache, having said so.
func (u Upkeep) List(ctx context.Context) (*Listing, error) {
	if u.s.cacheMissing() {
		return nil, nil
	}
	cache, err := u.s.openCache(ctx, false)
	if err != nil {
		return nil, err
	}
	es, err := cache.List()
	if err != nil {
		return nil, err
	}
	return &Listing{Entries: es, Disk: cache.DiskUsage(es)}, nil
}

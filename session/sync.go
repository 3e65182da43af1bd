package session

import (
	"context"
	"fmt"
	"strings"

	"pkg/fetch"
	"pkg/install"
	"pkg/repo"
	"pkg/txn"
)

// ExtraError refuses a sync that would remove packages from the default root: a project's
// lockfile synced into the user's own root would take their tools away.
type ExtraError struct {
	Lock, Root string
	Extra      []string // installed, and not in the lockfile
}

func (e *ExtraError) Error() string {
	return fmt.Sprintf("sync: %s does not list %s, installed in your default root %s; nothing was changed",
		e.Lock, strings.Join(e.Extra, ", "), e.Root)
}

// Sync is the flow of a sync to the lockfile l at path: read the root (a dry run, without
// its lock), plan the sync (txn.SyncPlan), keeping the packages l does not list if keep,
// and refuse to remove any from the default root (*ExtraError). A dry run calls show
// with the plan. Else Sync calls do with the root, held, and the plan, and, unless the plan
// is empty, a fetcher from the sources of l's repositories (LockSources); it closes the
// root, abandoning it if the sync failed.
func (s *Session) Sync(ctx context.Context, l *repo.Lock, path string, keep bool,
	show func(p *txn.Plan, cache *fetch.Cache) error,
	do func(root *install.Root, p *txn.Plan, f *txn.Fetcher) error) (err error) {
	var root *install.Root
	var cache *fetch.Cache
	if s.DryRun {
		if root, err = s.readOnlyRoot(); err == nil && root != nil {
			defer root.Close()
		}
		if err == nil {
			cache, err = s.openCache(ctx, true)
		}
	} else if root, err = s.OpenRoot(ctx); err == nil {
		defer func() { CloseRoot(root, err) }()
	}
	if err != nil {
		return err
	}
	plan, kept, err := txn.SyncPlan(root, l, keep, cache)
	if err != nil {
		return err
	}
	if plan.Root == "" {
		plan.Root = s.Root
	}
	if len(kept) > 0 {
		s.obs.Note(fmt.Sprintf("keeping %s, not in %s", strings.Join(kept, ", "), path))
	}
	if rm := plan.Removes(); len(rm) > 0 && s.DefaultRoot {
		return &ExtraError{Lock: path, Root: plan.Root, Extra: rm}
	}
	switch {
	case s.DryRun:
		if err := plan.Check(root); err != nil {
			return err
		}
		return show(plan, cache)
	case plan.Empty():
		return do(root, plan, nil)
	}
	// The cache is opened under the root's lock, unlike in a change: a prune takes no root
	// lock, so this cannot deadlock, and a no-op sync needs no cache at all. A prune between
	// the plan and here only means fetching again what it removed.
	srcs, _, err := s.LockSources(l)
	if err == nil {
		cache, err = s.openCache(ctx, false)
	}
	if err == nil {
		err = plan.Relocate(l, srcs)
	}
	if err != nil {
		return err
	}
	root.Request(l.Requires) // recorded by the commit
	f := s.NewFetcher(txn.FirstSource(l, srcs), cache)
	f.Sources = srcs
	return do(root, plan, f)
}

// CheckFrozen checks that the indexes in effect still resolve the requirements of the
// lockfile l at path to its packages (txn.CheckFrozen); for a dry run it changes nothing
// in the cache.
func (s *Session) CheckFrozen(ctx context.Context, l *repo.Lock, path string) error {
	_, ix, err := s.OpenFetcher(ctx, s.DryRun)
	if err != nil {
		return err
	}
	return txn.CheckFrozen(l, ix, path)
}

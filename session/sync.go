package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"pkg/config"
	"pkg/fetch"
	"pkg/install"
	"pkg/notice"
	"pkg/repo"
	"pkg/txn"
)

// ExtraError refuses a sync that would remove packages from the default root, or record
// packages asked for there as dependencies alone: a project's lockfile synced into the
// user's own root would take their tools away.
type ExtraError struct {
	Lock, Root string
	Extra      []string // installed, and not in the lockfile
	Asked      []string // asked for, and in the lockfile as others' dependencies alone
}

func (e *ExtraError) Error() string {
	var what []string
	if len(e.Extra) > 0 {
		what = append(what, fmt.Sprintf("%s would be removed, as %s does not list %s", strings.Join(e.Extra, ", "), e.Lock, them(e.Extra)))
	}
	if len(e.Asked) > 0 {
		what = append(what, fmt.Sprintf("%s would no longer be asked for, kept as %s, as %s lists %s",
			strings.Join(e.Asked, ", "), dependencies(e.Asked), e.Lock, them(e.Asked)))
	}
	return fmt.Sprintf("sync %s into your default root %s: %s; nothing was changed", e.Lock, e.Root, strings.Join(what, "; "))
}

// them is the pronoun of names: "it" of one, "them" of several.
func them(names []string) string {
	if len(names) == 1 {
		return "it"
	}
	return "them"
}

// dependencies is "a dependency" of one of names, "dependencies" of several.
func dependencies(names []string) string {
	if len(names) == 1 {
		return "a dependency"
	}
	return "dependencies"
}

// sync is Plan of a sync to the lockfile r.Lock at r.LockPath: its signatures checked
// (checkLockSigned), its repositories made those in effect (LockRepos; else those given in
// the place of its records of their names, useLockBeside), then, if Frozen,
// the indexes in effect checked still to resolve its requirements to its packages
// (txn.CheckFrozen), the root read (a dry run, without its lock), and the sync planned
// (txn.SyncPlan), keeping the packages the lockfile does not list, and the requests of
// those it has as dependencies alone, if KeepExtra, and refusing to remove any from the
// default root, or to record any asked for there as a dependency (*ExtraError).
func (s *Session) sync(ctx context.Context, r Request) (_ *txn.Plan, err error) {
	l, path := r.Lock, r.LockPath
	if err := s.checkLockSigned(l, path); err != nil {
		return nil, err
	}
	if r.LockRepos {
		s.useLock(l, path)
	} else {
		s.useLockBeside(l, path)
	}
	if r.Frozen {
		_, ix, err := s.openFetcher(ctx, s.DryRun, nil)
		if err == nil {
			err = s.ofCopy(txn.CheckFrozen(l, ix, path))
		}
		if err != nil {
			return nil, s.lockRepoError(l, path, err)
		}
	}
	var root *install.Root
	var cache *fetch.Cache
	if s.DryRun {
		if err = install.Changeable(s.Root); err != nil {
			return nil, err
		}
		if root, err = s.readOnlyRoot(); err == nil && root != nil {
			defer root.Close()
		}
		if err == nil {
			cache, err = s.openCache(ctx, true)
		}
	} else if root, err = s.openRoot(ctx); err == nil {
		defer func() {
			if err != nil {
				root.Abandon()
			}
		}()
	}
	if err != nil {
		return nil, err
	}
	plan, kept, err := txn.SyncPlan(root, l, r.KeepExtra, cache)
	if err != nil {
		return nil, err
	}
	if plan.Root == "" {
		if plan.Root, err = s.rootDir(); err != nil {
			return nil, err
		}
	}
	if len(kept) > 0 {
		s.obs.Notice(notice.Kept{Names: kept, Lock: path})
	}
	if rm, un := removals(plan), unasked(plan); len(rm)+len(un) > 0 && s.DefaultRoot {
		return nil, &ExtraError{Lock: path, Root: plan.Root, Extra: rm, Asked: un}
	}
	switch {
	case s.DryRun:
		return plan, s.checkIn(plan, root, cache)
	case len(plan.Changes) == 0: // recording, at most, the dependencies l asks for
		plan.Bind(s.target(root, nil, nil))
		return plan, nil
	}
	// The cache is opened under the root's lock, unlike in a change: a prune takes no root
	// lock, so this cannot deadlock, and a no-op sync needs no cache at all. A prune between
	// the plan and here only means fetching again what it removed.
	srcs, used, err := s.lockSources(l)
	if err == nil {
		cache, err = s.openCache(ctx, false)
	}
	if err == nil {
		err = relocate(plan, l, path, srcs, used, cache)
	}
	if err != nil {
		return nil, err
	}
	f := s.newFetcher(firstSource(l, srcs), cache)
	f.Sources = srcs
	plan.Bind(s.target(root, f, nil)) // the plan records l's requirements (txn.SyncPlan)
	return plan, nil
}

// relocate is plan.Relocate, a repository at a time, in the lockfile l's order: a
// location that serves no repository is a *LockRepoError naming l's path and the
// repository of used that its packages were read from.
func relocate(plan *txn.Plan, l *repo.Lock, path string, srcs map[string]*fetch.Source, used map[string]config.Repo, cache *fetch.Cache) error {
	names := []string{""}
	if len(l.Repos) > 0 {
		names = names[:0]
		for _, r := range l.Repos {
			names = append(names, r.Name)
		}
	}
	for _, n := range names {
		err := plan.Relocate(l, map[string]*fetch.Source{n: srcs[n]}, cache)
		if errors.Is(err, ErrNoRepository) {
			return noLockRepo(path, used[n], err)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// lockRepoError returns err, of reading the indexes in effect for a sync of the lockfile
// l at path (--frozen), as the *LockRepoError of the repository l's packages come from
// (config.LockUses) whose location served none, as relocate does; else err as it is.
func (s *Session) lockRepoError(l *repo.Lock, path string, err error) error {
	var ie *indexError
	if !errors.As(err, &ie) || !errors.Is(err, ErrNoRepository) {
		return err
	}
	rs, rerr := s.Repositories()
	if rerr != nil {
		return err
	}
	cause := err
	if ce := (*ConfiguredError)(nil); errors.As(err, &ce) {
		cause = ce.Err // the *LockRepoError names the file
	}
	for _, r := range config.LockUses(l, rs) {
		if r.Name == ie.r.Name {
			return noLockRepo(path, r, cause)
		}
	}
	return err
}

// noLockRepo is the *LockRepoError of the lockfile at path whose packages' repository r
// serves none at its location (err).
func noLockRepo(path string, r config.Repo, err error) *LockRepoError {
	recorded := r.File == "" || r.Lock == path // the lockfile's record, none other in effect
	r.File = cmp.Or(r.File, "lockfile "+path)
	r.Name = cmp.Or(r.Name, config.LocationName(r.URLs[0]))
	return &LockRepoError{Lock: path, Repo: r.Name, From: r.File, Recorded: recorded, Err: err}
}

// LockRepoError refuses a sync, or a run, whose lockfile's packages come from a location
// that serves no repository: the one the lockfile records, or the one given in its place.
type LockRepoError struct {
	Lock     string // the lockfile's path
	Run      string // the requirement of the run refused, "" for a sync
	Repo     string // the name of the repository in effect for the packages (config.LockUses)
	From     string // where that location was given: the lockfile, a configuration file, a flag
	Recorded bool   // the location is the lockfile's record
	Err      error  // an ErrNoRepository
}

func (e *LockRepoError) Error() string {
	op := "sync " + e.Lock
	if e.Run != "" {
		op = "run " + e.Run + " of " + e.Lock
	}
	return fmt.Sprintf("%s: repository %s (from %s): %v", op, e.Repo, e.From, e.Err)
}

func (e *LockRepoError) Unwrap() error { return e.Err }

// firstSource returns, of srcs, the sources of the lockfile l's repositories by name (as
// txn.Plan.Relocate takes them), that of l's first repository, "" for a lockfile of one.
func firstSource(l *repo.Lock, srcs map[string]*fetch.Source) *fetch.Source {
	if len(l.Repos) == 0 {
		return srcs[""]
	}
	return srcs[l.Repos[0].Name]
}

// unasked returns the names of the packages asked for that p records as dependencies
// alone.
func unasked(p *txn.Plan) []string {
	var names []string
	for _, c := range slices.Concat(p.Changes, p.Unchanged) {
		if c.WasRequested {
			names = append(names, c.Name)
		}
	}
	return names
}

// removals returns the names of the packages p removes.
func removals(p *txn.Plan) []string {
	var names []string
	for _, c := range p.Changes {
		if c.Action == txn.Remove {
			names = append(names, c.Name)
		}
	}
	return names
}

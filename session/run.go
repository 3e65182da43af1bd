package session

import (
	"context"
	"errors"

	"pkg/config"
	"pkg/repo"
	"pkg/runner"
	"pkg/txn"
)

// RunOptions say how Session.Run goes about a request.
type RunOptions struct {
	Refresh bool // read the indexes now, even where a run's memo still holds
	// LockRepos makes the repositories of the request's lockfile those in effect, ahead of
	// the configured ones, as Request.LockRepos does for a sync.
	LockRepos bool
}

// Run returns the run of req with the session's repositories (with a lockfile, its
// repositories: with o.LockRepos as it records them, else useLockBeside's), trust policy
// and root: the one made before for the same packages while it is current
// (runner.Reuse), unless o.Refresh, else one made now (runner.Make), the signatures of
// its lockfile checked first, either way (checkLockSigned). A run of a lockfile reads no index, as a
// sync does: its archives come from the cache, else from its repositories by its URLs.
// The observer hears of another process making the same run's root (RunWaiting).
func (s *Session) Run(ctx context.Context, req runner.Request, o RunOptions) (*runner.Run, error) {
	var l *repo.Lock
	if req.Lock != "" {
		var err error
		if l, err = repo.ReadLock(req.Lock); err != nil {
			return nil, err
		}
		if o.LockRepos {
			s.useLock(l, req.Lock)
		} else {
			s.useLockBeside(l, req.Lock)
		}
	}
	so, err := s.sourceOptions()
	var repos []config.Repo
	if err == nil {
		repos, err = s.Repositories()
	}
	if err != nil {
		return nil, err
	}
	req.Repos, req.Trust, req.Root = runner.ReposOf(repos), so.Trust, s.Root
	// Checked before a memo is taken too, as a sync with nothing to do checks it: the
	// root may have pinned a repository of the lockfile since the run was made.
	if l != nil {
		if err := s.checkLockSigned(l, req.Lock); err != nil {
			return nil, err
		}
	}
	if !o.Refresh {
		if r, ok := runner.Reuse(ctx, s.Cache, req, s.Offline); ok {
			return r, nil
		}
	}
	w := runner.Watch(s.Cache, req)
	ro := s.rootOptions()
	ro.Waiting = s.obs.RunWaiting
	if l != nil {
		f, err := s.lockFetcher(ctx, l)
		if err != nil {
			return nil, err
		}
		r, err := runner.Make(ctx, f, nil, req, w, ro)
		return r, s.lockRunError(l, req, err)
	}
	f, ix, err := s.openFetcher(ctx, false, nil)
	if err != nil {
		return nil, err
	}
	// A repository pkg named after its location takes the name its index gives itself once
	// read: the memo goes under the request as the next run makes it.
	if repos, err = s.Repositories(); err != nil {
		return nil, err
	}
	req.Repos = runner.ReposOf(repos)
	return runner.Make(ctx, f, ix, req, w, ro)
}

// lockFetcher returns the fetcher of the lockfile l's packages: from the cache, else from
// the sources of its repositories (lockSources), as a sync fetches them.
func (s *Session) lockFetcher(ctx context.Context, l *repo.Lock) (*txn.Fetcher, error) {
	srcs, _, err := s.lockSources(l)
	if err != nil {
		return nil, err
	}
	cache, err := s.openCache(ctx, false)
	if err != nil {
		return nil, err
	}
	f := s.newFetcher(firstSource(l, srcs), cache)
	f.Sources = srcs
	return f, nil
}

// lockRunError returns err, of a run of req's lockfile l, as the *LockRepoError of the
// first repository of l whose location serves none, as a sync's (relocate); else err as it
// is.
func (s *Session) lockRunError(l *repo.Lock, req runner.Request, err error) error {
	if !errors.Is(err, ErrNoRepository) {
		return err
	}
	srcs, used, serr := s.lockSources(l)
	if serr != nil {
		return err
	}
	for _, p := range l.Packages {
		r, ok := l.Of(p.Repo)
		if src := srcs[p.Repo]; !ok || src == nil {
			continue
		} else if _, rerr := src.Relocate(p, r.URL); errors.Is(rerr, ErrNoRepository) {
			le := noLockRepo(req.Lock, used[p.Repo], err)
			le.Run = req.Package.String()
			return le
		}
	}
	return err
}

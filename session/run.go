package session

import (
	"context"

	"pkg/config"
	"pkg/repo"
	"pkg/runner"
)

// Run returns the run of req with the session's repositories, trust policy and root: the
// one made before for the same packages while it is current (runner.Reuse), unless
// refresh, else one made now (runner.Make), the signatures of its lockfile checked first
// (checkLockSigned). The observer hears of another process making the same run's root
// (RunWaiting).
func (s *Session) Run(ctx context.Context, req runner.Request, refresh bool) (*runner.Run, error) {
	o, err := s.sourceOptions()
	var repos []config.Repo
	if err == nil {
		repos, err = s.Repositories()
	}
	if err != nil {
		return nil, err
	}
	req.Repos, req.Trust, req.Root = runner.ReposOf(repos), o.Trust, s.Root
	if !refresh {
		if r, ok := runner.Reuse(ctx, s.Cache, req, s.Offline); ok {
			return r, nil
		}
	}
	w := runner.Watch(s.Cache, req)
	if req.Lock != "" {
		l, err := repo.ReadLock(req.Lock)
		if err == nil {
			err = s.checkLockSigned(l, req.Lock)
		}
		if err != nil {
			return nil, err
		}
	}
	f, ix, err := s.openFetcher(ctx, false, false)
	if err != nil {
		return nil, err
	}
	ro := s.rootOptions()
	ro.Waiting = s.obs.RunWaiting
	return runner.Make(ctx, f, ix, req, w, ro)
}

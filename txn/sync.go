package txn

import (
	"fmt"

	"pkg/fetch"
	"pkg/repo"
)

// StaleLockError is a lockfile made for other requirements than those given.
type StaleLockError struct {
	Path         string
	Locks, Given []repo.Requirement
}

func (e *StaleLockError) Error() string {
	return fmt.Sprintf("%s is out of date: it locks %s, not %s", e.Path, repo.JoinRequirements(e.Locks), repo.JoinRequirements(e.Given))
}

// checkInputs refuses, with a *StaleLockError, requirements other than those the lockfile
// l at path was made for; no requirements stand for l's own.
func checkInputs(l *repo.Lock, reqs []repo.Requirement, path string) error {
	if len(reqs) == 0 || repo.Inputs(reqs) == repo.Inputs(l.Requires) {
		return nil
	}
	return &StaleLockError{Path: path, Locks: l.Requires, Given: reqs}
}

// FirstSource returns, of srcs, the sources of the lockfile l's repositories by name (as
// Relocate takes them), that of l's first repository, "" for a lockfile of one.
func FirstSource(l *repo.Lock, srcs map[string]*fetch.Source) *fetch.Source {
	if len(l.Repos) == 0 {
		return srcs[""]
	}
	return srcs[l.Repos[0].Name]
}

// ReadLock reads the lockfile at path (repo.ReadLock) and refuses, with a
// *StaleLockError, one made for other requirements than reqs (checkInputs); no reqs stand
// for the lockfile's own.
func ReadLock(path string, reqs []repo.Requirement) (*repo.Lock, error) {
	l, err := repo.ReadLock(path)
	if err == nil {
		err = checkInputs(l, reqs, path)
	}
	return l, err
}

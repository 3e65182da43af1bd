package txn

import (
	"pkg/pin"
	"pkg/repo"
)

// CheckFrozen refuses the lockfile l at path unless ix, the repository's index now, is no
// older than the one l was made from (pin.CheckLockIndexes) and still resolves l's requirements
// to its packages.
func CheckFrozen(l *repo.Lock, ix *Catalog, path string) error {
	if err := pin.CheckLockIndexes(l, &repo.Lock{Repo: ix.Source.URL(), Index: pin.LockIndex(ix.Trust), Repos: ix.lockRepos()}, path); err != nil {
		return err
	}
	in, err := ix.indexFor(l.Requires)
	if err != nil {
		return err
	}
	if err := l.Outdated(in); err != nil {
		return &OutdatedError{Path: path, Requires: l.Requires, Unresolved: l.Unresolved(in), Err: err}
	}
	return nil
}

// OutdatedError refuses the lockfile at Path as frozen: the index no longer resolves its
// requirements, Requires, to its packages (Err says how). Unresolved are those of them
// the index no longer meets at all (repo.Lock.Unresolved), nil where it resolves them
// to other packages.
type OutdatedError struct {
	Path                 string
	Requires, Unresolved []repo.Requirement
	Err                  error
}

func (e *OutdatedError) Error() string { return e.Path + ": " + e.Err.Error() }

func (e *OutdatedError) Unwrap() error { return e.Err }

// Lock resolves reqs against ix into a lockfile, with each archive's URL and what it records
// of the index, for platforms, or those old was for, or this machine's where ix names
// platforms, or else for any. It refuses the lockfile where it would replace old (the
// lockfile at path, or nil) with one from an older or unverified index of old's signed
// repository (pin.CheckLockIndexes). Requirements the index cannot meet come back as an
// *UnresolvedError.
func Lock(old *repo.Lock, ix *Catalog, reqs []repo.Requirement, path string, platforms []string) (*repo.Lock, error) {
	switch {
	case len(platforms) > 0:
	case old != nil && len(old.Platforms) > 0:
		platforms = old.Platforms
	case len(ix.Platforms()) > 0:
		platforms = []string{repo.Host}
	}
	by := make(map[string][]repo.Package)
	each := platforms
	if len(each) == 0 {
		each = []string{""} // ix's target: this machine's, which an index without platforms never changes
	}
	in, err := ix.indexFor(reqs)
	if err != nil {
		return nil, &UnresolvedError{ix.about(err)}
	}
	sources := ix.Sources()
	for _, p := range each {
		pkgs, err := old.Resolve(in.ForPlatform(p), reqs)
		if err != nil {
			return nil, &UnresolvedError{ix.about(err)}
		}
		for i := range pkgs {
			pkgs[i].Archive = sources[pkgs[i].Repo].ArchiveURL(pkgs[i])
		}
		by[p] = pkgs
	}
	l := repo.NewLockFor(ix.Source.URL(), reqs, by)
	if len(platforms) == 0 {
		l = repo.NewLock(ix.Source.URL(), reqs, by[""])
	}
	l.Index, l.Repos = pin.LockIndex(ix.Trust), ix.lockRepos()
	if err := pin.CheckLockIndexes(old, l, path); err != nil {
		return nil, err
	}
	return l, nil
}

// lockRepos is what a lockfile records of the repositories of ix: nothing for one.
func (ix *Catalog) lockRepos() []repo.LockRepo {
	if ix.repos == nil {
		return nil
	}
	var rs []repo.LockRepo
	for _, r := range ix.repos {
		rs = append(rs, repo.LockRepo{Name: r.Name, URL: r.Source.URL(), Index: pin.LockIndex(r.Trust)})
	}
	return rs
}

// UnresolvedError is requirements to lock that the index cannot meet.
type UnresolvedError struct{ Err error }

func (e *UnresolvedError) Error() string { return e.Err.Error() }

func (e *UnresolvedError) Unwrap() error { return e.Err }

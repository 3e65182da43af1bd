package txn

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"pkg/fetch"
	"pkg/install"
	"pkg/repo"
	"pkg/trust"
)

// LockIndex is what a lockfile records of the index res describes: nil unless verified.
func LockIndex(res trust.Result) *repo.LockIndex {
	if !res.Verified() {
		return nil
	}
	return &repo.LockIndex{Name: res.Name, Version: res.Version, Keys: res.KeyIDs}
}

// ErrLockNotVerified refuses to lock against an unverified index where the lockfile was
// made from a signed one.
var ErrLockNotVerified = errors.New("txn: index not verified for a lockfile of a signed one")

// ErrLockRollback refuses to lock against an index older than the one the lockfile was made
// from.
var ErrLockRollback = errors.New("txn: index older than the lockfile's")

// CheckLockIndex refuses to resolve old's requirements, the lockfile at path, against the
// index now (nil: not verified) if old came from a signed index of the same repository
// that now is unverified or older: the publisher's packages would be swapped for older
// ones, or anyone's.
func CheckLockIndex(old *repo.Lock, now *repo.LockIndex, path string) error {
	switch {
	case old == nil || old.Index == nil:
	case now == nil:
		return &reasonError{fmt.Sprintf("%s was made from version %d of signed repository %s (key %s), and this index is not verified",
			path, old.Index.Version, old.Index.Name, strings.Join(old.Index.Keys, ", ")), ErrLockNotVerified}
	case now.Name == old.Index.Name && now.Version < old.Index.Version:
		return &reasonError{fmt.Sprintf("index version %d of repository %s is older than version %d, which %s was made from: a mirror or proxy is serving an old index; try again later, or another mirror (if the publisher really started over, remove %s and lock again)",
			now.Version, now.Name, old.Index.Version, path, path), ErrLockRollback}
	}
	return nil
}

// CheckLockIndexes is CheckLockIndex for each signed repository of old, the lockfile at
// path, against the repositories of l, its replacement: the one of the same URL or, else,
// of an index of the same name. A signed repository of old that l does not have is
// refused as unverified, since its packages would come from another.
func CheckLockIndexes(old, l *repo.Lock, path string) error {
	if old == nil {
		return nil
	}
	if len(old.Repos) == 0 && len(l.Repos) == 0 {
		return CheckLockIndex(old, l.Index, path)
	}
	now := lockRepos(l)
	for _, o := range lockRepos(old) {
		if o.Index == nil {
			continue
		}
		i := slices.IndexFunc(now, func(n repo.LockRepo) bool { return n.URL == o.URL })
		if i < 0 {
			i = slices.IndexFunc(now, func(n repo.LockRepo) bool { return n.Index != nil && n.Index.Name == o.Index.Name })
		}
		var x *repo.LockIndex
		if i >= 0 {
			x = now[i].Index
		}
		if err := CheckLockIndex(&repo.Lock{Repo: o.URL, Index: o.Index}, x, path); err != nil {
			return err
		}
	}
	return nil
}

// lockRepos returns the repositories of l: its Repos, or the one it names.
func lockRepos(l *repo.Lock) []repo.LockRepo {
	if len(l.Repos) > 0 {
		return l.Repos
	}
	return []repo.LockRepo{{URL: l.Repo, Index: l.Index}}
}

// CheckLockSigned checks, when p requires signatures or trusts a key, or pin (the root's
// record of the repository, if not nil) pinned it, that the lockfile at path says it was
// made from an index a key trusted here verified (x, nil if it says none): a sync reads
// no index. The lockfile's
// word is all there is, so this guards against a mistake (a lockfile made without the
// key), not against an edit. A lockfile that says nothing is refused; unrecorded is always
// false (cmd/pkg reads it until its trust code drops the warning it gave).
//
// The repository is the one at location, which a sync installs from, and pin the root's
// record of it, read from the root at dir without its lock.
func CheckLockSigned(x *repo.LockIndex, path string, p trust.Policy, dir string, o install.Options, location string) (unrecorded bool, err error) {
	src, err := fetch.NewSource(location, fetch.Options{})
	if err != nil {
		return false, err
	}
	pin, err := Pin(dir, o, src.URL())
	if err != nil {
		return false, err
	}
	if pin != nil {
		if p, err = PinPolicy(p, *pin); err != nil {
			return false, err
		}
	}
	if !p.RequireSigned && len(p.Keys) == 0 {
		return false, nil
	}
	if x == nil {
		if pin != nil {
			return false, &reasonError{fmt.Sprintf("%s does not say it was made from a verified index, and root %s pinned repository %s%s",
				path, dir, pin.Name, PinnedKeys(*pin)), ErrLockUnverified}
		}
		if p.RequireSigned {
			return false, &reasonError{path + " does not say it was made from a verified index, and signatures are required", ErrLockUnverified}
		}
		return false, fmt.Errorf("%s does not say it was made from a verified index, and a key is trusted here: lock it again with the publisher's key", path)
	}
	for _, k := range p.Keys {
		if slices.Contains(x.Keys, k.ID()) && (k.Repo == "" || k.Repo == x.Name) {
			return false, nil
		}
	}
	return false, &reasonError{fmt.Sprintf("%s was made from an index of repository %s verified by key %s, none of which is trusted here",
		path, x.Name, strings.Join(x.Keys, ", ")), ErrLockUntrusted}
}

// CheckLockSigned's refusals: a lockfile that does not say it was made from a verified
// index, and one made from an index verified by keys none of which is trusted here.
var (
	ErrLockUnverified = errors.New("txn: lockfile not made from a verified index")
	ErrLockUntrusted  = errors.New("txn: lockfile made from an index no key trusted here verified")
)

// reasonError is an error worded in full that errors.Is matches to its sentinel is, so a
// sentinel keeps the package prefix while the message reads as one sentence.
type reasonError struct {
	msg string
	is  error
}

func (e *reasonError) Error() string        { return e.msg }
func (e *reasonError) Is(target error) bool { return target == e.is }

// CheckFrozen refuses the lockfile l at path unless ix, the repository's index now, is no
// older than the one l was made from (CheckLockIndex) and still resolves l's requirements
// to its packages.
func CheckFrozen(l *repo.Lock, ix *Catalog, path string) error {
	if err := CheckLockIndexes(l, &repo.Lock{Repo: ix.Source.URL(), Index: LockIndex(ix.Trust), Repos: ix.lockRepos()}, path); err != nil {
		return err
	}
	in, err := ix.For(l.Requires)
	if err != nil {
		return err
	}
	if err := l.Outdated(in); err != nil {
		return &OutdatedError{Path: path, Err: err}
	}
	return nil
}

// OutdatedError refuses the lockfile at Path as frozen: the index no longer resolves its
// requirements to its packages (Err says how).
type OutdatedError struct {
	Path string
	Err  error
}

func (e *OutdatedError) Error() string { return e.Path + ": " + e.Err.Error() }

func (e *OutdatedError) Unwrap() error { return e.Err }

// Lock resolves reqs against ix into a lockfile, with each archive's URL and what it records
// of the index, for platforms, or those old was for, or this machine's where ix names
// platforms, or else for any. It refuses the lockfile where it would replace old (the
// lockfile at path, or nil) with one from an older or unverified index of old's signed
// repository (CheckLockIndex). Requirements the index cannot meet come back as an
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
	in, err := ix.For(reqs)
	if err != nil {
		return nil, &UnresolvedError{ix.About(err)}
	}
	sources := ix.Sources()
	for _, p := range each {
		pkgs, err := old.Resolve(in.ForPlatform(p), reqs)
		if err != nil {
			return nil, &UnresolvedError{ix.About(err)}
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
	l.Index, l.Repos = LockIndex(ix.Trust), ix.lockRepos()
	if err := CheckLockIndexes(old, l, path); err != nil {
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
		rs = append(rs, repo.LockRepo{Name: r.Name, URL: r.Source.URL(), Index: LockIndex(r.Trust)})
	}
	return rs
}

// UnresolvedError is requirements to lock that the index cannot meet.
type UnresolvedError struct{ Err error }

func (e *UnresolvedError) Error() string { return e.Err.Error() }

func (e *UnresolvedError) Unwrap() error { return e.Err }

// LockChanges describes, a line each, how the lockfile l differs from old (nil: none
// before): its repository, the index it records, and its packages by name and platform.
func LockChanges(old, l *repo.Lock) []string {
	var lines []string
	if old != nil && old.Repo != l.Repo {
		lines = append(lines, fmt.Sprintf("repository %s (was %s)", l.Repo, old.Repo))
	}
	if old != nil && repoNames(old) != repoNames(l) && len(l.Repos) > 0 {
		lines = append(lines, fmt.Sprintf("repositories %s (was %s)", repoNames(l), cmp.Or(repoNames(old), old.Repo)))
	}
	switch {
	case old == nil || l.Index == nil:
	case old.Index == nil:
		lines = append(lines, fmt.Sprintf("recorded index %s version %d, verified by key %s", l.Index.Name, l.Index.Version, strings.Join(l.Index.Keys, ", ")))
	case old.Index.Version != l.Index.Version || !slices.Equal(old.Index.Keys, l.Index.Keys):
		lines = append(lines, fmt.Sprintf("index %s version %d, verified by key %s (was version %d)", l.Index.Name, l.Index.Version, strings.Join(l.Index.Keys, ", "), old.Index.Version))
	}
	was := map[string]repo.Package{}
	if old != nil {
		for _, p := range old.Packages {
			was[p.Name+" "+p.Platform] = p
		}
	}
	for _, p := range l.Packages {
		key := p.Name + " " + p.Platform
		q, ok := was[key]
		switch {
		case !ok:
			lines = append(lines, fmt.Sprintf("locked %s %s%s", p.Name, p.Version, forPlatform(p)))
		case q.Version != p.Version:
			lines = append(lines, fmt.Sprintf("locked %s %s%s (was %s)", p.Name, p.Version, forPlatform(p), q.Version))
		case q.SHA256 != p.SHA256 || q.Archive != p.Archive:
			lines = append(lines, fmt.Sprintf("locked %s %s%s (new archive)", p.Name, p.Version, forPlatform(p)))
		}
		delete(was, key)
	}
	if old != nil {
		for _, p := range old.Packages {
			if _, ok := was[p.Name+" "+p.Platform]; ok {
				lines = append(lines, fmt.Sprintf("unlocked %s %s%s", p.Name, p.Version, forPlatform(p)))
			}
		}
	}
	return lines
}

// forPlatform is " for PLATFORM" for a lockfile's line of one platform, else "".
func forPlatform(p repo.Package) string {
	if p.Platform == "" {
		return ""
	}
	return " for " + p.Platform
}

// repoNames lists the repositories of a lock of several, "team, stable", or is "".
func repoNames(l *repo.Lock) string {
	var s []string
	for _, r := range l.Repos {
		s = append(s, r.Name)
	}
	return strings.Join(s, ", ")
}

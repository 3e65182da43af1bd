package pin

import (
	"errors"
	"fmt"
	"slices"
	"strings"

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
var ErrLockNotVerified = errors.New("pin: index not verified for a lockfile of a signed one")

// ErrLockRollback refuses to lock against an index older than the one the lockfile was made
// from.
var ErrLockRollback = errors.New("pin: index older than the lockfile's")

// checkLockIndex refuses to resolve old's requirements, the lockfile at path, against the
// index now (nil: not verified) if old came from a signed index of the same repository
// that now is unverified or older: the publisher's packages would be swapped for older
// ones, or anyone's.
func checkLockIndex(old *repo.Lock, now *repo.LockIndex, path string) error {
	switch {
	case old == nil || old.Index == nil:
	case now == nil:
		return &reasonError{fmt.Sprintf("%s was made from version %d of signed repository %s (key %s), and this index is not verified",
			path, old.Index.Version, old.Index.Name, strings.Join(old.Index.Keys, ", ")), ErrLockNotVerified}
	case now.Name == old.Index.Name && now.Version < old.Index.Version:
		return &reasonError{fmt.Sprintf("index version %d of repository %s is older than version %d, which %s was made from",
			now.Version, now.Name, old.Index.Version, path), ErrLockRollback}
	}
	return nil
}

// CheckLockIndexes is checkLockIndex for each signed repository of old, the lockfile at
// path, against the repositories of l, its replacement: the one of the same URL or, else,
// of an index of the same name. A signed repository of old that l does not have is
// refused as unverified, since its packages would come from another.
func CheckLockIndexes(old, l *repo.Lock, path string) error {
	if old == nil {
		return nil
	}
	if len(old.Repos) == 0 && len(l.Repos) == 0 {
		return checkLockIndex(old, l.Index, path)
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
		if err := checkLockIndex(&repo.Lock{Repo: o.URL, Index: o.Index}, x, path); err != nil {
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

// CheckLockSigned checks, when pol requires signatures or trusts a key, or the pins of the
// root at dir pinned the repository at url (its source's URL, which a sync installs from), that the
// lockfile at path says it was made from an index a key trusted here verified (x, nil if
// it says none): a sync reads no index. The lockfile's word is all there is, so this
// guards against a mistake (a lockfile made without the key), not against an edit. A
// lockfile that says nothing is refused.
func CheckLockSigned(x *repo.LockIndex, path string, pol trust.Policy, pins Set, dir, url string) error {
	p := pins.At(url)
	var err error
	if p != nil {
		if pol, err = Policy(pol, *p); err != nil {
			return err
		}
	}
	if !pol.RequireSigned && len(pol.Keys) == 0 {
		return nil
	}
	if x == nil {
		if p != nil {
			return &LockSignedError{Path: path, Root: dir, Name: p.Name, KeyIDs: KeyIDs(*p), Err: ErrLockUnverified,
				msg: fmt.Sprintf("%s does not say it was made from a verified index, and root %s pinned repository %s%s",
					path, dir, p.Name, trust.PinnedTo(KeyIDs(*p)))}
		}
		if pol.RequireSigned {
			return &LockSignedError{Path: path, Err: ErrLockUnverified,
				msg: path + " does not say it was made from a verified index, and signatures are required"}
		}
		return &LockSignedError{Path: path, Err: ErrLockUnverified,
			msg: path + " does not say it was made from a verified index, and a key is trusted here"}
	}
	for _, k := range pol.Keys {
		if slices.Contains(x.Keys, k.ID()) && (k.Repo == "" || k.Repo == x.Name) {
			return nil
		}
	}
	return &LockSignedError{Path: path, Name: x.Name, KeyIDs: x.Keys, Err: ErrLockUntrusted,
		msg: fmt.Sprintf("%s was made from an index of repository %s verified by key %s, none of which is trusted here",
			path, x.Name, strings.Join(x.Keys, ", "))}
}

// LockSignedError is CheckLockSigned's refusal of the lockfile at Path.
type LockSignedError struct {
	Path   string
	Root   string   // the root whose pin of the repository requires a verified index; "" where the policy does
	Name   string   // the repository Root pinned, or of the index the lockfile was made from
	KeyIDs []string // the keys Root pinned it to, or that verified the lockfile's index
	Err    error    // ErrLockUnverified or ErrLockUntrusted
	msg    string
}

func (e *LockSignedError) Error() string { return e.msg }
func (e *LockSignedError) Unwrap() error { return e.Err }

// CheckLockSigned's refusals: a lockfile that does not say it was made from a verified
// index, and one made from an index verified by keys none of which is trusted here.
var (
	ErrLockUnverified = errors.New("pin: lockfile not made from a verified index")
	ErrLockUntrusted  = errors.New("pin: lockfile made from an index no key trusted here verified")
)

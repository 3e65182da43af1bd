// Package pin keeps what a root trusts of the repositories it installs from: its pins, the
// records of the signed indexes it accepted and of the keys that verified them (db.Pin),
// and its trusted-keys file. An index a root pinned must verify with a key trusted for it
// and be no older than the one accepted, from any location of the same repository; a
// lockfile made from a signed index is replaced only by one from a verified index no
// older, and synced only where it says a key trusted here verified its index. It decides
// with package trust and keeps the records in the root's database; it reads no index.
package pin

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"pkg/db"
	"pkg/trust"
)

// ErrNotVerified refuses an unverified index of a repository a root accepted signed before.
var ErrNotVerified = errors.New("pin: index of a pinned repository not verified")

// Set is the pins of a root, as its database records them (db.DB.Repos).
type Set []db.Pin

// At returns the pin of the repository at location, or nil.
func (s Set) At(location string) *db.Pin {
	for i := range s {
		if s[i].Location == location {
			return &s[i]
		}
	}
	return nil
}

// Admit refuses, as Accept does, the index res describes where the pins forbid it.
func (s Set) Admit(res trust.Result) error {
	_, err := s.admits(res)
	return err
}

// Record is what trust knows of the index p accepted.
func Record(p db.Pin) trust.Record {
	return trust.Record{Location: p.Location, Name: p.Name, Version: p.Version, SHA256: p.SHA256}
}

// Policy returns pol trusting also, for p's repository only, the keys p pinned it to, and
// requiring a signature even when no key is left for it.
func Policy(pol trust.Policy, p db.Pin) (trust.Policy, error) {
	for _, s := range p.Keys {
		k, err := trust.ParsePublicKey(s)
		if err != nil {
			return pol, fmt.Errorf("the root's record of repository %s: %w", p.Location, err)
		}
		k.Repo = p.Name
		pol = pol.With(k)
	}
	pol.RequireSigned = true
	return pol, nil
}

// KeyIDs returns the ids of the keys p pinned its repository to.
func KeyIDs(p db.Pin) []string {
	var ids []string
	for _, s := range p.Keys {
		if k, err := trust.ParsePublicKey(s); err == nil {
			ids = append(ids, k.ID())
		}
	}
	return ids
}

// Refused is err, an index refused by the trust policy of p (Policy), as the refusal of
// the pin of the root at dir: a *trust.PinnedError.
func Refused(dir string, p db.Pin, err error) error {
	return &trust.PinnedError{Repo: p.Location, Name: p.Name, Version: p.Version, KeyIDs: KeyIDs(p), Root: dir, Err: err}
}

// Accept records in the root that it accepted the index res describes, when a trusted key
// verified it, and the keys that did (the root pins the repository to them), before
// anything from that index is installed. It refuses, under the root's lock, an index the
// root's pins forbid: one older than the pin, and an unverified one from a repository
// whose signed index the root accepted before. An empty res (a sync, which reads no
// index) records nothing.
func Accept(d *db.DB, res trust.Result) error {
	all, err := d.Repos()
	if err != nil {
		return err
	}
	keys, err := Set(all).admits(res)
	if err != nil || keys == nil {
		return err
	}
	return d.PutRepo(db.Pin{Location: res.Location, Name: res.Name, Version: res.Version,
		SHA256: res.SHA256, KeyID: res.KeyID, Keys: keys, Accepted: time.Now().UTC()})
}

// admits refuses, as Accept does, the index res describes where the pins s forbid it;
// else it returns the keys to record it with, or nil when there is nothing to record.
func (s Set) admits(res trust.Result) ([]string, error) {
	prev := s.At(res.Location)
	if !res.Verified() {
		if prev != nil {
			return nil, &reasonError{fmt.Sprintf("repository %s: index not verified: this root installed from its signed index (version %d) before",
				res.Location, prev.Version), ErrNotVerified}
		}
		return nil, nil
	}
	keys := make([]string, len(res.Keys))
	for i, k := range res.Keys {
		k.Repo = "" // the pin binds it to its repository
		keys[i] = k.String()
	}
	if prev != nil {
		if Record(*prev) == res.Record && prev.KeyID == res.KeyID && slices.Equal(prev.Keys, keys) {
			return nil, nil
		}
		if err := res.Record.Follows(Record(*prev)); err != nil {
			return nil, err
		}
	}
	// The same repository, signed by a key trusted for it, from another location (a mirror,
	// or another spelling of the host) may not roll back what was accepted there either.
	for _, p := range s {
		if p.Location != res.Location && sameRepo(p, res.Name, res.Trusted...) {
			if err := res.Record.NotOlder(Record(p)); err != nil {
				return nil, err
			}
		}
	}
	return keys, nil
}

// sameRepo reports whether p pins the repository name signed by one of keyIDs.
func sameRepo(p db.Pin, name string, keyIDs ...string) bool {
	return p.Name == name && slices.Contains(keyIDs, p.KeyID)
}

// Forget deletes the root's pin of the repository at location and, since a pin of the
// same repository elsewhere (a mirror) bounds it too, those signed by its key or a key
// pol trusts for it; it returns what it deleted.
func Forget(d *db.DB, location string, pol trust.Policy) ([]db.Pin, error) {
	r, ok, err := d.Repo(location)
	if err != nil || !ok {
		return nil, err
	}
	all, err := d.Repos()
	if err != nil {
		return nil, err
	}
	var gone []db.Pin
	for _, o := range all {
		if o.Location == location || sameRepo(o, r.Name, append(pol.For(r.Name), r.KeyID)...) {
			if err := d.DeleteRepo(o.Location); err != nil {
				return gone, err
			}
			gone = append(gone, o)
		}
	}
	return gone, nil
}

// Unpin removes the key id from the keys of the repositories the root pinned to it and
// returns their pins as they are now.
func Unpin(d *db.DB, id string) ([]db.Pin, error) {
	pins, err := d.Repos()
	if err != nil {
		return nil, err
	}
	var changed []db.Pin
	for _, p := range pins {
		keep := slices.DeleteFunc(slices.Clone(p.Keys), func(s string) bool {
			k, err := trust.ParsePublicKey(s)
			return err == nil && k.ID() == id
		})
		if len(keep) == len(p.Keys) {
			continue
		}
		p.Keys = keep
		if err := d.PutRepo(p); err != nil {
			return changed, err
		}
		changed = append(changed, p)
	}
	return changed, nil
}

// TrustedKeysFile is where the root at dir keeps the keys it trusts (package trust's format).
func TrustedKeysFile(dir string) string { return filepath.Join(dir, ".pkg", "trusted-keys") }

// RootKeys returns the keys the root at dir trusts, none where it has no trusted-keys file.
func RootKeys(dir string) (trust.KeySource, error) {
	s := trust.KeySource{Name: TrustedKeysFile(dir)}
	var err error
	if s.Keys, err = trust.ReadTrusted(s.Name); err != nil {
		return s, fmt.Errorf("read the trusted keys of root %s: %w", dir, err)
	}
	return s, nil
}

// Distrust removes the key id from keys, the keys a root trusts, and from the keys of the
// repositories its database d pinned to it, returning the keys removed and the pins as they
// are now. A repository whose last key it was stays pinned: its indexes are refused until
// a key is trusted for it again, or the repository is forgotten.
func Distrust(keys trust.KeysFile, d *db.DB, id string) (removed []trust.PublicKey, unpinned []db.Pin, err error) {
	if removed, err = trust.RemoveTrusted(keys, id); err != nil {
		return nil, nil, err
	}
	unpinned, err = Unpin(d, id)
	return removed, unpinned, err
}

// reasonError is an error worded in full that errors.Is matches to its sentinel is, so a
// sentinel keeps the package prefix while the message reads as one sentence.
type reasonError struct {
	msg string
	is  error
}

func (e *reasonError) Error() string        { return e.msg }
func (e *reasonError) Is(target error) bool { return target == e.is }

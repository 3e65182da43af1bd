package txn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/repo"
	"pkg/trust"
)

// Catalog is a repository's index as read for a root, with how it passed the trust policy;
// or, made by Merge, the indexes of several as one.
type Catalog struct {
	*repo.Index
	Name   string // the repository's name, as the configuration or the command line gives it
	Source *fetch.Source
	Trust  trust.Result
	Pin    *db.Pin // the root's record of the repository when the index was read, or nil
	// NotKept, a *fetch.NotKeptError, says the index passed but the cache could not keep a
	// copy of it: offline, an older one serves, or none.
	NotKept error

	repos  []*Catalog // of several, each, highest priority first (Merge); nil for one
	origin string     // the local archive file whose one package this index offers (WithLocal)
}

// ErrNotVerified refuses an unverified index of a repository a root accepted signed before.
var ErrNotVerified = errors.New("txn: index of a pinned repository not verified")

// ReadIndex reads the index of the repository at location through cache, believed only as
// the policy of o allows and, where the root at dir ("" for none) has a record of the repository (a
// pin), only if a key trusted for it verifies it (the keys the record pinned it to are)
// and it is not older than that record, nor than the root's records of the repository
// at other locations (Accept); an index refused for want of such a key comes with a
// *PinnedError. The cache keeps no index the root refuses. It reads the root's records
// without its lock, so that a slow repository does not hold the root: a change takes the
// lock after, and Accept checks the index against the records again then. Without a
// root, the cache's last verified copy of the index bounds the next one likewise
// (fetch.PinnedError).
func ReadIndex(ctx context.Context, cache *fetch.Cache, dir string, ro install.Options, location string, o fetch.Options) (*Catalog, error) {
	recs, err := records(dir, ro)
	if err != nil {
		return nil, err
	}
	var refused error // by the records of other locations: not this location's pin
	o.Admit = func(res trust.Result) error {
		_, err := admits(recs, res)
		refused = cmp.Or(refused, err)
		return err
	}
	src, err := fetch.NewSource(location, o)
	if err != nil {
		return nil, err
	}
	pin := recordAt(recs, src.URL())
	var known []trust.Record
	if pin != nil {
		known = []trust.Record{record(*pin)}
		if o.Trust, err = PinPolicy(o.Trust, *pin); err != nil {
			return nil, err
		}
		if src, err = fetch.NewSource(location, o); err != nil {
			return nil, err
		}
	}
	ix := &Catalog{Source: src, Pin: pin}
	ix.Index, ix.Trust, err = cache.VerifiedIndex(ctx, src, known...)
	if nk := (*fetch.NotKeptError)(nil); errors.As(err, &nk) {
		ix.NotKept, err = err, nil
	}
	if te := (*trust.Error)(nil); pin != nil && errors.As(err, &te) && !errors.Is(err, refused) {
		err = &PinnedError{Root: dir, Pin: *pin, Err: err}
	}
	if err != nil {
		return nil, err
	}
	return ix, nil
}

// Pin returns the root's record of the repository at url, or nil where there is none (or
// no root), reading the root without its lock.
func Pin(dir string, o install.Options, url string) (*db.Pin, error) {
	recs, err := records(dir, o)
	if err != nil {
		return nil, err
	}
	return recordAt(recs, url), nil
}

// records returns the root's records of repositories, none where there is no root or dir
// is "" (for a repair, which rebuilds them), reading the root without its lock.
func records(dir string, o install.Options) ([]db.Pin, error) {
	if dir == "" {
		return nil, nil
	}
	var all []db.Pin
	err := install.View(dir, o, nil, func(d *db.DB) (err error) {
		all, err = d.Repos()
		return err
	})
	if errors.Is(err, install.ErrNoRoot) {
		return nil, nil
	}
	return all, err
}

// recordAt returns the record of the repository at location among recs, or nil.
func recordAt(recs []db.Pin, location string) *db.Pin {
	for i := range recs {
		if recs[i].Location == location {
			return &recs[i]
		}
	}
	return nil
}

// PinPolicy returns p trusting also, for pin's repository only, the keys the root pinned it
// to, and requiring a signature even when no key is left for it.
func PinPolicy(p trust.Policy, pin db.Pin) (trust.Policy, error) {
	for _, s := range pin.Keys {
		k, err := trust.ParsePublicKey(s)
		if err != nil {
			return p, fmt.Errorf("the root's record of repository %s: %w", pin.Location, err)
		}
		k.Repo = pin.Name
		p = p.With(k)
	}
	p.RequireSigned = true
	return p, nil
}

// PinnedError is an index refused for a repository whose signed index the root accepted:
// with or without keys given, the index must verify with a key trusted for it.
type PinnedError struct {
	Root string
	Pin  db.Pin
	Err  error // a *trust.Error
}

func (e *PinnedError) Error() string {
	return fmt.Sprintf("%v (root %s pinned repository %s%s when it accepted its index version %d)",
		e.Err, e.Root, e.Pin.Name, PinnedKeys(e.Pin), e.Pin.Version)
}

func (e *PinnedError) Unwrap() error { return e.Err }

// PinnedKeys says which keys pin pinned its repository to, " to key ID", or "" for none.
func PinnedKeys(pin db.Pin) string {
	var ids []string
	for _, s := range pin.Keys {
		if k, err := trust.ParsePublicKey(s); err == nil {
			ids = append(ids, k.ID())
		}
	}
	switch len(ids) {
	case 0:
		return ""
	case 1:
		return " to key " + ids[0]
	}
	return " to keys " + strings.Join(ids, ", ")
}

// Stale reports whether the root's record of a repository of ix changed since ix was read,
// as when another command accepted a newer index while this one waited for the root: the
// index must then be read again, or Accept would refuse it as a rollback.
func (ix *Catalog) Stale(root *install.Root) (bool, error) { return ix.stale(root) }

func (ix *Catalog) staleOne(root *install.Root) (bool, error) {
	now, ok, err := root.DB().Repo(ix.Source.URL())
	switch {
	case err != nil:
		return false, err
	case !ok || ix.Pin == nil:
		return ok != (ix.Pin != nil), nil
	}
	return record(now) != record(*ix.Pin) || !slices.Equal(now.Keys, ix.Pin.Keys), nil
}

// Accept records in the root that it accepted the index res describes, when a trusted key
// verified it, and the keys that did (the root pins the repository to them), before
// anything from that index is installed. It refuses, under the root's lock, an index the
// root's record forbids: one older than the record, and an unverified one from a
// repository whose signed index the root accepted before. An empty res (a sync, which
// reads no index) records nothing.
func Accept(root *install.Root, res trust.Result) error {
	d := root.DB()
	all, err := d.Repos()
	if err != nil {
		return err
	}
	keys, err := admits(all, res)
	if err != nil || keys == nil {
		return err
	}
	return d.PutRepo(db.Pin{Location: res.Location, Name: res.Name, Version: res.Version,
		SHA256: res.SHA256, KeyID: res.KeyID, Keys: keys, Accepted: time.Now().UTC()})
}

// admits refuses, as Accept does, the index res describes where the root's records recs
// forbid it; else it returns the keys to record it with, or nil when there is nothing to
// record.
func admits(recs []db.Pin, res trust.Result) ([]string, error) {
	prev := recordAt(recs, res.Location)
	if !res.Verified() {
		if prev != nil {
			return nil, &reasonError{fmt.Sprintf("repository %s: index not verified: this root installed from its signed index (version %d) before",
				res.Location, prev.Version), ErrNotVerified}
		}
		return nil, nil
	}
	keys := make([]string, len(res.Keys))
	for i, k := range res.Keys {
		k.Repo = "" // the record binds it to its repository
		keys[i] = k.String()
	}
	if prev != nil {
		if record(*prev) == res.Record && prev.KeyID == res.KeyID && slices.Equal(prev.Keys, keys) {
			return nil, nil
		}
		if err := res.Record.Follows(record(*prev)); err != nil {
			return nil, err
		}
	}
	// The same repository, signed by a key trusted for it, from another location (a mirror,
	// or another spelling of the host) may not roll back what was accepted there either.
	for _, r := range recs {
		if r.Location != res.Location && sameRepo(r, res.Name, res.Trusted...) {
			if err := res.Record.NotOlder(record(r)); err != nil {
				return nil, err
			}
		}
	}
	return keys, nil
}

func record(r db.Pin) trust.Record {
	return trust.Record{Location: r.Location, Name: r.Name, Version: r.Version, SHA256: r.SHA256}
}

// sameRepo reports whether r records the repository name signed by one of keyIDs.
func sameRepo(r db.Pin, name string, keyIDs ...string) bool {
	return r.Name == name && slices.Contains(keyIDs, r.KeyID)
}

// Forget deletes the root's record of the repository at location and, since a record of
// the same repository elsewhere (a mirror) bounds it too, those signed by its key or a key
// p trusts for it; it returns what it deleted.
func Forget(root *install.Root, location string, p trust.Policy) ([]db.Pin, error) {
	d := root.DB()
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
		if o.Location == location || sameRepo(o, r.Name, append(p.For(r.Name), r.KeyID)...) {
			if err := d.DeleteRepo(o.Location); err != nil {
				return gone, err
			}
			gone = append(gone, o)
		}
	}
	return gone, nil
}

// Unpin removes the key id from the keys of the repositories the root pinned to it and
// returns their records as they are now.
func Unpin(root *install.Root, id string) ([]db.Pin, error) {
	d := root.DB()
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

var _ trust.KeysFile = (*install.MetaFile)(nil)

// Distrust removes the key id from the keys root trusts and from the keys of the
// repositories it pinned to it, returning the keys removed and the pins as they are now. A
// repository whose last key it was stays pinned: its indexes are refused until a key is
// trusted for it again, or the repository is forgotten.
func Distrust(root *install.Root, id string) (removed []trust.PublicKey, unpinned []db.Pin, err error) {
	if removed, err = trust.RemoveTrusted(root.TrustedKeys(), id); err != nil {
		return nil, nil, err
	}
	unpinned, err = Unpin(root, id)
	return removed, unpinned, err
}

// KeySource is where trusted keys come from, and those keys.
type KeySource struct {
	Name string // a flag, a variable, or the root's trusted-keys file
	Keys []trust.PublicKey
}

// RootKeys returns the keys the root at dir trusts, none where it has no trusted-keys file.
func RootKeys(dir string) (KeySource, error) {
	s := KeySource{Name: TrustedKeysFile(dir)}
	var err error
	if s.Keys, err = trust.ReadTrusted(s.Name); err != nil {
		return s, fmt.Errorf("read the trusted keys of root %s: %w", dir, err)
	}
	return s, nil
}

// Policy is the trust policy of the keys of sources, each for every repository unless
// bound to one by name, requiring a signature where requireSigned says so or a key is
// trusted.
func Policy(sources []KeySource, requireSigned bool) trust.Policy {
	p := trust.Policy{RequireSigned: requireSigned}
	for _, s := range sources {
		p = p.With(s.Keys...)
	}
	return p
}

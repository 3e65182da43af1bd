package txn

import (
	"cmp"
	"context"
	"errors"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/pin"
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

// ReadIndex reads the index of the repository at location through cache, believed only as
// the policy of o allows and, where the root at dir ("" for none) pinned the repository,
// only as its pins allow (pin.Set.Admit): verified by a key trusted for it (the keys the
// pin names are), and not older than the pin, nor than the root's pins of the repository
// at other locations; an index refused for want of such a key comes with a
// *trust.PinnedError. The cache keeps no index the root refuses. It reads the pins
// without the root's lock, so that a slow repository does not hold the root: a change
// takes the lock after, and pin.Accept checks the index against the pins again then.
// Without a root, the cache's last verified copy of the index bounds the next one
// likewise (a *trust.PinnedError of the cache).
func ReadIndex(ctx context.Context, cache *fetch.Cache, dir string, ro install.Options, location string, o fetch.Options) (*Catalog, error) {
	pins, err := readPins(dir, ro)
	if err != nil {
		return nil, err
	}
	var refused error // by the pins of other locations: not this location's
	o.Admit = func(res trust.Result) error {
		err := pins.Admit(res)
		refused = cmp.Or(refused, err)
		return err
	}
	src, err := fetch.NewSource(location, o)
	if err != nil {
		return nil, err
	}
	p := pins.At(src.URL())
	var known []trust.Record
	if p != nil {
		known = []trust.Record{pin.Record(*p)}
		if o.Trust, err = pin.Policy(o.Trust, *p); err != nil {
			return nil, err
		}
		if src, err = fetch.NewSource(location, o); err != nil {
			return nil, err
		}
	}
	ix := &Catalog{Source: src, Pin: p}
	ix.Index, ix.Trust, err = cache.VerifiedIndex(ctx, src, known...)
	if nk := (*fetch.NotKeptError)(nil); errors.As(err, &nk) {
		ix.NotKept, err = err, nil
	}
	if te := (*trust.Error)(nil); p != nil && errors.As(err, &te) && !errors.Is(err, refused) {
		err = pin.Refused(dir, *p, err)
	}
	if err != nil {
		return nil, err
	}
	return ix, nil
}

// readPins returns the pins of the root at dir, none where there is no root (or one whose
// first change was cut short, which the change undoes under the lock) or dir is ""
// (for a repair, which rebuilds them), reading the root without its lock: a change takes
// the lock after, and pin.Accept checks an index against the pins again then.
func readPins(dir string, o install.Options) (pins pin.Set, err error) {
	if dir == "" {
		return nil, nil
	}
	err = install.View(dir, o, nil, func(d *db.DB) (err error) {
		pins, err = d.Repos()
		return err
	})
	if errors.Is(err, install.ErrNoRoot) || errors.Is(err, install.ErrCutShort) { // recording none yet
		return nil, nil
	}
	return pins, err
}

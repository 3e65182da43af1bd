package txn_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"pkg/fetch"
	"pkg/install"
	"pkg/trust"
	"pkg/txn"
)

func newKey(t *testing.T) trust.PublicKey {
	t.Helper()
	k, err := trust.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k.Public()
}

// verified is the Result of an index of repository name at loc, version v, that key verified.
func verified(loc, name string, v uint64, sha string, key trust.PublicKey) trust.Result {
	return trust.Result{Record: trust.Record{Location: loc, Name: name, Version: v, SHA256: sha},
		KeyID: key.ID(), KeyIDs: []string{key.ID()}, Keys: []trust.PublicKey{key}, Trusted: []string{key.ID()}}
}

// rotated is res with key trusted to sign its repository too, as in a rotation of keys.
func rotated(res trust.Result, key trust.PublicKey) trust.Result {
	res.Trusted = append(res.Trusted, key.ID())
	return res
}

func openRoot(t *testing.T) *install.Root {
	t.Helper()
	root, err := install.Open(context.Background(), filepath.Join(t.TempDir(), "root"), install.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root
}

// TestAccept accepts indexes into one root in turn: a root takes a newer index of a
// repository it accepted, and refuses an older one, from the same location or a mirror
// signed by the same key, another index of the same version, and an unverified one.
func TestAccept(t *testing.T) {
	k, other := newKey(t), newKey(t)
	const a, mirror, elsewhere = "https://a.example/r/", "https://mirror.example/r/", "https://b.example/r/"
	root := openRoot(t)
	for _, tt := range []struct {
		what string
		res  trust.Result
		want error // nil, or what errors.Is finds
	}{
		{"first signed index", verified(a, "r", 2, "s2", k), nil},
		{"the same again", verified(a, "r", 2, "s2", k), nil},
		{"an older version", verified(a, "r", 1, "s1", k), trust.ErrRollback},
		{"the same version, other bytes", verified(a, "r", 2, "other", k), trust.ErrReused},
		{"another repository's name", verified(a, "q", 3, "s3", k), trust.ErrWrongName},
		{"unverified", trust.Result{Record: trust.Record{Location: a}}, txn.ErrNotVerified},
		{"an older version from a mirror signed by the key", verified(mirror, "r", 1, "s1", k), trust.ErrRollback},
		{"an older version from a mirror signed by another key trusted for the repository", rotated(verified(mirror, "r", 1, "s1", other), k), trust.ErrRollback},
		{"an older version elsewhere signed by another key", verified(elsewhere, "r", 1, "s1", other), nil},
		{"a newer version", verified(a, "r", 3, "s3", k), nil},
		{"unverified from a location never accepted", trust.Result{Record: trust.Record{Location: "https://c.example/"}}, nil},
	} {
		err := txn.Accept(root, tt.res)
		if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.what, err, tt.want)
		}
	}
	pin, err := txn.Pin(root.Dir(), install.Options{}, a)
	if err != nil || pin == nil || pin.Version != 3 || pin.KeyID != k.ID() || len(pin.Keys) != 1 {
		t.Fatalf("Pin after the accepts: %+v, %v; want version 3 pinned to %s", pin, err, k.ID())
	}
	if p, err := txn.PinPolicy(trust.Policy{}, *pin); err != nil || !p.RequireSigned || len(p.Keys) != 1 || p.Keys[0].Repo != "r" {
		t.Errorf("PinPolicy: %+v, %v; want the pinned key bound to r, signatures required", p, err)
	}

	gone, err := txn.Forget(root, a, trust.Policy{})
	var locs []string
	for _, r := range gone {
		locs = append(locs, r.Location)
	}
	slices.Sort(locs)
	if err != nil || !slices.Equal(locs, []string{a}) {
		t.Errorf("Forget %s: %v, %v; want it alone (the mirror was never accepted; elsewhere has another key)", a, locs, err)
	}
	if err := txn.Accept(root, verified(a, "r", 1, "s1", k)); err != nil {
		t.Errorf("an older version once forgotten: %v", err)
	}
}

// TestUnpinAndStale: removing a key from the pins changes the root's record, which makes
// an index read before stale.
func TestUnpinAndStale(t *testing.T) {
	w := newWorld(t)
	addPackage(t, w.repo, "hello", "1")
	root := openRoot(t)
	k := newKey(t)
	ix := w.index(root.Dir())
	loc := ix.Source.URL()
	if stale, err := ix.Stale(root); err != nil || stale {
		t.Fatalf("Stale with no record: %v, %v", stale, err)
	}
	if err := txn.Accept(root, verified(loc, "r", 1, "s", k)); err != nil {
		t.Fatal(err)
	}
	if stale, err := ix.Stale(root); err != nil || !stale {
		t.Errorf("Stale once a record was made: %v, %v; want stale", stale, err)
	}
	// Pinned, the root takes only an index a key trusted for the repository verifies.
	_, err := txn.ReadIndex(context.Background(), w.cache, root.Dir(), install.Options{}, w.repo, fetch.Options{})
	if pe := (*txn.PinnedError)(nil); !errors.As(err, &pe) || !errors.Is(err, trust.ErrUnsigned) || pe.Pin.Location != loc {
		t.Errorf("ReadIndex of the unsigned repository once pinned: %v; want a *PinnedError of an unsigned index", err)
	}
	changed, err := txn.Unpin(root, k.ID())
	if err != nil || len(changed) != 1 || len(changed[0].Keys) != 0 {
		t.Errorf("Unpin: %v, %v; want the one record, with no key", changed, err)
	}
}

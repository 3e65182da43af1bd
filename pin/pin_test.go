package pin_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"pkg/install"
	"pkg/pin"
	"pkg/pkgtest/testrepo"
	"pkg/trust"
)

// rotated is res with key trusted to sign its repository too, as in a rotation of keys.
func rotated(res trust.Result, key trust.PublicKey) trust.Result {
	res.Trusted = append(res.Trusted, key.ID())
	return res
}

// TestAccept accepts indexes into one root in turn: a root takes a newer index of a
// repository it accepted, and refuses an older one, from the same location or a mirror
// signed by the same key, another index of the same version, and an unverified one.
func TestAccept(t *testing.T) {
	k, other := testrepo.Key(t), testrepo.Key(t)
	const a, mirror, elsewhere = "https://a.example/r/", "https://mirror.example/r/", "https://b.example/r/"
	root := openRoot(t)
	for _, tt := range []struct {
		what string
		res  trust.Result
		want error // nil, or what errors.Is finds
	}{
		{"first signed index", testrepo.Verified(a, "r", 2, "s2", k), nil},
		{"the same again", testrepo.Verified(a, "r", 2, "s2", k), nil},
		{"an older version", testrepo.Verified(a, "r", 1, "s1", k), trust.ErrRollback},
		{"the same version, other bytes", testrepo.Verified(a, "r", 2, "other", k), trust.ErrReused},
		{"another repository's name", testrepo.Verified(a, "q", 3, "s3", k), trust.ErrWrongName},
		{"unverified", trust.Result{Record: trust.Record{Location: a}}, pin.ErrNotVerified},
		{"an older version from a mirror signed by the key", testrepo.Verified(mirror, "r", 1, "s1", k), trust.ErrRollback},
		{"an older version from a mirror signed by another key trusted for the repository", rotated(testrepo.Verified(mirror, "r", 1, "s1", other), k), trust.ErrRollback},
		{"an older version elsewhere signed by another key", testrepo.Verified(elsewhere, "r", 1, "s1", other), nil},
		{"a newer version", testrepo.Verified(a, "r", 3, "s3", k), nil},
		{"unverified from a location never accepted", trust.Result{Record: trust.Record{Location: "https://c.example/"}}, nil},
	} {
		err := pin.Accept(root.DB(), tt.res)
		if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.what, err, tt.want)
		}
	}
	all, err := root.DB().Repos()
	pins := pin.Set(all)
	p := pins.At(a)
	if err != nil || p == nil || p.Version != 3 || p.KeyID != k.ID() || len(p.Keys) != 1 {
		t.Fatalf("the pin after the accepts: %+v, %v; want version 3 pinned to %s", p, err, k.ID())
	}
	if pol, err := pin.Policy(trust.Policy{}, *p); err != nil || !pol.RequireSigned || len(pol.Keys) != 1 || pol.Keys[0].Repo != "r" {
		t.Errorf("Policy: %+v, %v; want the pinned key bound to r, signatures required", pol, err)
	}
	if ids := pin.KeyIDs(*p); !slices.Equal(ids, []string{k.ID()}) {
		t.Errorf("KeyIDs = %q, want %s", ids, k.ID())
	}

	gone, err := pin.Forget(root.DB(), a, trust.Policy{})
	var locs []string
	for _, r := range gone {
		locs = append(locs, r.Location)
	}
	slices.Sort(locs)
	if err != nil || !slices.Equal(locs, []string{a}) {
		t.Errorf("Forget %s: %v, %v; want it alone (the mirror was never accepted; elsewhere has another key)", a, locs, err)
	}
	if err := pin.Accept(root.DB(), testrepo.Verified(a, "r", 1, "s1", k)); err != nil {
		t.Errorf("an older version once forgotten: %v", err)
	}
}

// openRoot opens a new root in a temporary directory, without syncs, closed at the test's end.
func openRoot(t *testing.T) *install.Root {
	t.Helper()
	root, err := install.Open(context.Background(), filepath.Join(t.TempDir(), "root"), install.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root
}

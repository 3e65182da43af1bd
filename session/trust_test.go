package session_test

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"testing"

	"pkg/install"
	"pkg/internal/testfs"
	"pkg/session"
	"pkg/trust"
)

// TestTrust trusts a key in a root and distrusts it again; distrusting in a root where
// nothing was installed is refused and makes no root.
func TestTrust(t *testing.T) {
	ctx := context.Background()
	k, err := trust.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newSession(t, session.Options{}, "")
	if _, err := s.Distrust(ctx, k.Public().ID()); !errors.Is(err, install.ErrNoRoot) {
		t.Errorf("Distrust in no root: %v, want install.ErrNoRoot", err)
	}
	if s.RootExists() == nil {
		t.Fatal("Distrust made a root")
	}
	if _, replaced, err := s.Trust(ctx, k.Public()); err != nil || len(replaced) != 0 {
		t.Fatalf("Trust: %v, replaced %v", err, replaced)
	}
	sources, _, err := s.Trusted()
	if err != nil || len(sources[len(sources)-1].Keys) != 1 {
		t.Errorf("the root's keys after Trust: %v, %v", sources, err)
	}
	d, err := s.Distrust(ctx, k.Public().ID())
	if err != nil || len(d.Removed) != 1 || d.Removed[0].ID() != k.Public().ID() || d.Dir == "" || len(d.TrustedBy) != 0 {
		t.Errorf("Distrust: %+v, %v", d, err)
	}

	given := []trust.KeySource{{Name: "--trusted-key"}, {Name: "PKG_TRUSTED_KEYS", Keys: []trust.PublicKey{k.Public()}}}
	s, _ = newSession(t, session.Options{Root: d.Dir, Keys: given}, "")
	if _, _, err := s.Trust(ctx, k.Public()); err != nil {
		t.Fatal(err)
	}
	if d, err := s.Distrust(ctx, k.Public().ID()); err != nil || len(d.Removed) != 1 || len(d.TrustedBy) != 1 || d.TrustedBy[0] != "PKG_TRUSTED_KEYS" {
		t.Errorf("Distrust of a key also given: %+v, %v; want it trusted still by PKG_TRUSTED_KEYS", d, err)
	}
}

// TestTrustSwappedRoot trusts and distrusts keys while the root is swapped for a symlink to
// a decoy root and back in a loop, as whoever may rename entries beside the root could: a
// command may fail while the symlink is in place, but the decoy never changes, and the
// root's trusted keys are what the commands that succeeded left.
func TestTrustSwappedRoot(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	root, decoy := filepath.Join(base, "root"), filepath.Join(base, "decoy")
	keys := make([]trust.PublicKey, 2)
	for i := range keys {
		k, err := trust.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = k.Public()
	}
	for _, dir := range []string{root, decoy} {
		s, _ := newSession(t, session.Options{Root: dir}, "")
		if _, _, err := s.Trust(ctx, keys[0]); err != nil {
			t.Fatal(err)
		}
	}
	before := testfs.Snapshot(t, decoy)
	swap := testfs.Swap(t, root, decoy)
	trusted, succeeded := true, 0 // keys[1] is trusted in root; trusts and distrusts that succeeded
	for i := 0; i < 400 && (i < 100 || succeeded < 10); i++ {
		s, _ := newSession(t, session.Options{Root: root}, "")
		var err error
		if i%2 == 0 {
			_, _, err = s.Trust(ctx, keys[1])
		} else {
			_, err = s.Distrust(ctx, keys[1].ID())
		}
		if err == nil {
			trusted, succeeded = i%2 == 0, succeeded+1
		}
	}
	swap.Stop()
	if got := testfs.Snapshot(t, decoy); !maps.Equal(got, before) {
		t.Errorf("the decoy changed:\n%v\nwas\n%v", got, before)
	}
	got, err := trust.ReadTrusted(filepath.Join(root, ".pkg", "trusted-keys"))
	if err != nil || len(got) != 1+btoi(trusted) || succeeded == 0 {
		t.Errorf("the root trusts %v, %v; want keys[1] trusted: %v (%d commands succeeded)", got, err, trusted, succeeded)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

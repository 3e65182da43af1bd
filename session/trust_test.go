package session_test

import (
	"context"
	"errors"
	"testing"

	"pkg/install"
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
	if _, _, _, err := s.Distrust(ctx, k.Public().ID()); !errors.Is(err, install.ErrNoRoot) {
		t.Errorf("Distrust in no root: %v, want install.ErrNoRoot", err)
	}
	if s.RootExists() == nil {
		t.Fatal("Distrust made a root")
	}
	if _, replaced, err := s.Trust(ctx, k.Public()); err != nil || len(replaced) != 0 {
		t.Fatalf("Trust: %v, replaced %v", err, replaced)
	}
	sources, err := s.KeySources()
	if err != nil || len(sources[len(sources)-1].Keys) != 1 {
		t.Errorf("the root's keys after Trust: %v, %v", sources, err)
	}
	dir, removed, _, err := s.Distrust(ctx, k.Public().ID())
	if err != nil || len(removed) != 1 || removed[0].ID() != k.Public().ID() || dir == "" {
		t.Errorf("Distrust: %q, %v, %v", dir, removed, err)
	}
}

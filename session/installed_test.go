package session_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"pkg/session"
)

// TestInstalled reads what is installed, and what of it the repository has newer; where
// there is no root, nothing is, and the observer hears so.
func TestInstalled(t *testing.T) {
	s, o := installed(t, "hello")
	recs, requested, err := s.Installed()
	if err != nil || len(recs) != 1 || recs[0].Name != "hello" || requested["hello"] != "hello" {
		t.Errorf("Installed = %v, %v, %v", recs, requested, err)
	}
	if names := s.Names(context.Background(), false); !slices.Equal(names, []string{"hello"}) {
		t.Errorf("Names(false) = %q", names)
	}
	dir := o.Repos[0].URLs[0]
	if err := publish(dir, filepath.Dir(dir), "hello", "2"); err != nil {
		t.Fatal(err)
	}
	s, _ = newSession(t, o, "")
	n, out, err := s.Outdated(context.Background())
	if err != nil || n != 1 || len(out) != 1 || out[0].Name != "hello" || out[0].Installed != "1" || out[0].Allowed != "2" {
		t.Errorf("Outdated = %d, %+v, %v", n, out, err)
	}
	s, obs := newSession(t, session.Options{}, "")
	if recs, _, err := s.Installed(); err != nil || len(recs) != 0 || len(obs.lines) != 1 {
		t.Errorf("Installed of no root = %v, %v; told %q", recs, err, obs.lines)
	}
	if names := s.Names(context.Background(), false); len(names) != 0 {
		t.Errorf("Names(false) of no root = %q", names)
	}
}

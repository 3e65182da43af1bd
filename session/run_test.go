package session_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"pkg/repo"
	"pkg/runner"
	"pkg/session"
)

// TestRun makes the run of a package, then reuses it: the second run installs nothing,
// and the observer hears of one making, with its package.
func TestRun(t *testing.T) {
	s, o := installed(t, "hello")
	s, obs := newSession(t, o, "")
	req := runner.Request{Package: repo.Requirement{Name: "tool"}}
	for i, made := range []bool{true, false} {
		r, err := s.Run(context.Background(), req, session.RunOptions{})
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if (r.Outcome != nil) != made || r.Command != "tool" {
			t.Errorf("run %d: outcome %v, command %q; want one made %v", i, r.Outcome, r.Command, made)
		}
		r.Close()
	}
	if n := strings.Count(strings.Join(obs.lines, "\n"), "during 1 packages"); n != 1 {
		t.Errorf("told %q: %d makings, want 1", obs.lines, n)
	}
}

// TestFetch fetches a package into the cache, which then lists it.
func TestFetch(t *testing.T) {
	s, o := installed(t, "hello")
	s, obs := newSession(t, o, "")
	if err := s.Fetch(context.Background(), []repo.Requirement{{Name: "tool"}}); err != nil {
		t.Fatal(err)
	}
	l, err := s.Upkeep().List(t.Context())
	if err != nil || l == nil || len(l.Entries) != 2 || !slices.Contains(obs.lines, "during 1 packages") {
		t.Errorf("after Fetch(tool): %+v, %v; told %q", l, err, obs.lines)
	}
}

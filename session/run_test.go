package session_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"pkg/config"
	"pkg/pkgtest/testrepo"
	"pkg/repo"
	"pkg/runner"
	"pkg/session"
	"pkg/trust"
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

// TestRunReuseNamedByIndex runs tool twice from a repository given by its URL alone, whose
// signed index names it demo: the second run reads nothing from the server, its memo found
// under the name the repository is known by once its index was read.
func TestRunReuseNamedByIndex(t *testing.T) {
	r := testrepo.NewSigned(t, "demo", [2]string{"tool", "1"})
	var reads atomic.Int32
	files := http.FileServer(http.Dir(r.Dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		reads.Add(1)
		files.ServeHTTP(w, req)
	}))
	defer srv.Close()
	base := t.TempDir()
	o := session.Options{Root: filepath.Join(base, "root"), Cache: filepath.Join(base, "cache"), Jobs: 1,
		Repos: []config.Repo{{URLs: []string{srv.URL}}},
		Keys:  []trust.KeySource{{Name: "given", Keys: []trust.PublicKey{r.Key.Public()}}}}
	req := runner.Request{Package: repo.Requirement{Name: "tool"}}
	for i := range 2 {
		s, _ := newSession(t, o, "")
		reads.Store(0)
		run, err := s.Run(t.Context(), req, session.RunOptions{})
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		run.Close()
		s.Close()
		if n := reads.Load(); i == 1 && n != 0 {
			t.Errorf("the second run made %d requests, want none: its memo did not hold", n)
		}
	}
}

package session_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"pkg/session"
)

// TestInstalled reads what is installed, its files, the names a shell completes, what the
// repository offers marked installed or not, and what of it the repository has newer;
// where there is no root, nothing is, and the observer hears so.
func TestInstalled(t *testing.T) {
	s, o := installed(t, "hello")
	recs, requested, err := s.Installed()
	if err != nil || len(recs) != 1 || recs[0].Name != "hello" || requested["hello"].String() != "hello" {
		t.Errorf("Installed = %v, %v, %v", recs, requested, err)
	}
	if names := s.Names(context.Background(), false); !slices.Equal(names, []string{"hello"}) {
		t.Errorf("Names(false) = %q", names)
	}
	if names := s.Names(context.Background(), true); !slices.Equal(names, []string{"hello", "tool"}) {
		t.Errorf("Names(true) = %q; want what the cache's copy of the index offers", names)
	}
	if rec, files, err := s.Files("hello"); err != nil || rec.Name != "hello" || rec.Version != "1" || len(files) == 0 {
		t.Errorf("Files(hello) = %+v, %d files, %v", rec, len(files), err)
	}
	var ne *session.NotInstalledError
	if _, _, err := s.Files("tool"); !errors.As(err, &ne) || ne.Name != "tool" {
		t.Errorf("Files(tool) = %v; want a *session.NotInstalledError", err)
	}
	found, err := s.Search(context.Background(), "")
	if err != nil || found.From != o.Repos[0].URLs[0] || len(found.Packages) != 2 || found.Packages[0].Name != "hello" || found.Packages[1].Name != "tool" ||
		len(found.Installed) != 1 || found.Installed[0].Name != "hello" || found.Installed[0].Version != "1" {
		t.Errorf("Search = %+v, %v; want hello and tool, hello installed, from %s", found, err, o.Repos[0].URLs[0])
	}
	dir := o.Repos[0].URLs[0]
	publish(t, dir, "hello", "2")
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
	if _, _, err := s.Files("hello"); !errors.Is(err, session.ErrNoRoot) {
		t.Errorf("Files of no root = %v; want session.ErrNoRoot", err)
	}
}

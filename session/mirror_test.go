package session_test

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"pkg/config"
	"pkg/fetch"
	"pkg/repo"
	"pkg/session"
)

// TestMirrorIndexLast mirrors hello 1, then, once the repository publishes hello 2 but
// serves no archive of it, mirrors hello again: that fails, and the mirror keeps the
// index it had, whose archives it holds, rather than one naming an archive it lacks, which
// its clients, refusing a rollback to the old index once they read it, could not install.
func TestMirrorIndexLast(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo")
	publish(t, dir, "hello", "1")
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	o := session.Options{Repos: []config.Repo{{Name: "r", URLs: []string{srv.URL}}}}
	out := filepath.Join(t.TempDir(), "mirror")
	mirror := func() error {
		s, _ := newSession(t, o, "")
		defer s.Close()
		l, err := s.Lock(t.Context(), session.Request{Requires: []repo.Requirement{{Name: "hello"}}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Mirror(t.Context(), session.Request{Lock: l}, out)
		return err
	}
	if err := mirror(); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(out, "r", "index.json")
	before, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	p := publish(t, dir, "hello", "2")
	if err := os.Remove(filepath.Join(dir, p.Archive)); err != nil {
		t.Fatal(err)
	}
	if err := mirror(); !errors.Is(err, fetch.ErrGone) {
		t.Fatalf("mirror of hello 2, whose archive the repository lacks: %v; want ErrGone", err)
	}
	if after, err := os.ReadFile(index); err != nil || !bytes.Equal(after, before) {
		t.Errorf("%s after a mirror that failed: %q, %v; want the index of hello 1 it had, %q", index, after, err, before)
	}
}

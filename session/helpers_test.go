package session_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"pkg/config"
	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/internal/testrepo"
	"pkg/repo"
	"pkg/session"
	"pkg/txn"
)

// publish adds to the repository directory dir a package name at version (testrepo.Publish).
func publish(dir, tmp, name, version string, depends ...string) error {
	_, err := testrepo.Publish(dir, tmp, name, version, depends...)
	return err
}

// recorder is an Observer that keeps what it is told, as lines.
type recorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *recorder) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

func (r *recorder) During(pkgs []repo.Package, fn func() error) error {
	r.add("during %d packages", len(pkgs))
	return fn()
}
func (r *recorder) Fetching(p repo.Package) io.Writer { return nil }
func (r *recorder) Fetched(ev txn.Fetched)            {}
func (r *recorder) Waiting(repo.Package, []int, bool) {}
func (r *recorder) Refetching(p repo.Package, err error) {
	r.add("refetching %s: %v", p.Name, err)
}
func (r *recorder) Retrying(err error, wait time.Duration, attempt, max int) {
	r.add("retrying: %v", err)
}
func (r *recorder) Note(text string)          { r.add("note: %s", text) }
func (r *recorder) Warn(text string)          { r.add("warning: %s", text) }
func (r *recorder) RootWaiting(holder string) { r.add("waiting for %s", holder) }
func (r *recorder) LinksWrong(err error)      { r.add("links: %v", err) }
func (r *recorder) NotKept(err error)         { r.add("not kept: %v", err) }
func (r *recorder) Unverified(err error, local bool) bool {
	r.add("unverified (local %v): %v", local, err)
	return true
}

// installed returns a session whose root has name installed from a repository of name
// and tool, and the session's options.
func installed(t *testing.T, name string) (*session.Session, session.Options) {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	for _, n := range []string{name, "tool"} {
		if err := publish(dir, base, n, "1"); err != nil {
			t.Fatal(err)
		}
	}
	o := session.Options{Root: filepath.Join(base, "root"), Cache: filepath.Join(base, "cache"), Repos: []config.Repo{{Name: "r", URLs: []string{dir}}}}
	s, _ := newSession(t, o, "")
	err := s.Change(context.Background(), (*db.DB).List,
		func(root string, ix *txn.Index, recs []db.Package, cache *fetch.Cache) (*txn.Plan, error) {
			return txn.InstallPlan(root, ix, recs, []repo.Requirement{{Name: name}}, cache)
		}, nil,
		func(r *install.Root, p *txn.Plan, f *txn.Fetcher) error {
			r.Request([]repo.Requirement{{Name: name}})
			_, err := p.Apply(context.Background(), r, f)
			return err
		})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	return s, o
}

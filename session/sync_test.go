package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"pkg/config"
	"pkg/install"
	"pkg/repo"
	"pkg/session"
	"pkg/txn"
)

// TestSync syncs a root to a lockfile, then to one that lists another package: into the
// default root that is refused (*session.ExtraError) and changes nothing, keeping the
// extra it is done with a note, and a sync that matches calls do with no fetcher.
func TestSync(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	for _, name := range []string{"hello", "tool"} {
		publish(t, dir, name, "1")
	}
	root, cache := filepath.Join(base, "root"), filepath.Join(base, "cache")
	repos := []config.Repo{{Name: "r", URLs: []string{dir}}}
	lock := func(name string) *repo.Lock {
		s, _ := newSession(t, session.Options{Root: root, Cache: cache, Repos: repos}, "")
		l, err := s.Lock(context.Background(), session.Request{Requires: []repo.Requirement{{Name: name}}, LockPath: "pkg.lock"})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	hello, tool := lock("hello"), lock("tool")
	sync := func(l *repo.Lock, o session.Options, keep bool) (fetched bool, obs *recorder, err error) {
		o.Root, o.Cache, o.Repos = root, cache, repos
		s, obs := newSession(t, o, "")
		p, err := s.Plan(context.Background(), session.Request{Op: session.Sync, Lock: l, LockPath: "pkg.lock", KeepExtra: keep})
		if err != nil {
			return false, obs, err
		}
		if fetched = len(p.Changes) > 0; !fetched {
			return false, obs, p.Close()
		}
		_, err = p.Apply(context.Background())
		return fetched, obs, err
	}
	if fetched, _, err := sync(hello, session.Options{}, false); err != nil || !fetched {
		t.Fatalf("sync hello: %v, given a fetcher %v", err, fetched)
	}
	installed := func() []string {
		var names []string
		r, err := install.OpenReadOnly(root, install.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		ps, err := r.DB().List()
		for _, p := range ps {
			names = append(names, p.Name)
		}
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	if got := installed(); !slices.Equal(got, []string{"hello"}) {
		t.Fatalf("after sync hello: %v", got)
	}
	_, _, err := sync(tool, session.Options{DefaultRoot: true}, false)
	var ee *session.ExtraError
	if !errors.As(err, &ee) || !slices.Equal(ee.Extra, []string{"hello"}) || ee.Root != root || ee.Lock != "pkg.lock" {
		t.Errorf("sync tool into the default root: %v, want an ExtraError for hello", err)
	}
	if got := installed(); !slices.Equal(got, []string{"hello"}) {
		t.Errorf("after the refused sync: %v", got)
	}
	_, obs, err := sync(tool, session.Options{DefaultRoot: true}, true)
	if err != nil || !slices.Contains(obs.lines, "note: keeping hello, not in pkg.lock") {
		t.Errorf("sync tool keeping the extra: %v, told %q", err, obs.lines)
	}
	if got := installed(); !slices.Equal(got, []string{"hello", "tool"}) {
		t.Errorf("after sync tool keeping the extra: %v", got)
	}
	if fetched, _, err := sync(tool, session.Options{}, true); err != nil || fetched {
		t.Errorf("sync of a root that matches: %v, given a fetcher %v", err, fetched)
	}
	s, _ := newSession(t, session.Options{Root: root, Cache: cache, Repos: repos, DryRun: true}, "")
	shown, err := s.Plan(context.Background(), session.Request{Op: session.Sync, Lock: hello, LockPath: "pkg.lock"})
	if err != nil || shown == nil || !slices.Equal(removed(shown), []string{"tool"}) {
		t.Errorf("dry run of sync hello: %v, plan %+v", err, shown)
	}
	if _, err := shown.Apply(context.Background()); !errors.Is(err, txn.ErrNotBound) {
		t.Errorf("a dry run's plan applied: %v, want %v", err, txn.ErrNotBound)
	}
}

// TestCheckFrozen: a lockfile passes while the repository resolves it to its packages,
// and not once a newer version is published.
func TestCheckFrozen(t *testing.T) {
	s, o := installed(t, "hello")
	l, err := s.Lock(context.Background(), session.Request{Requires: []repo.Requirement{{Name: "hello"}}, LockPath: "pkg.lock"})
	if err != nil {
		t.Fatal(err)
	}
	o.DryRun = true
	frozen := session.Request{Op: session.Sync, Lock: l, LockPath: "pkg.lock", Frozen: true}
	s, _ = newSession(t, o, "")
	if _, err := s.Plan(context.Background(), frozen); err != nil {
		t.Errorf("frozen sync of a current lockfile: %v", err)
	}
	dir := o.Repos[0].URLs[0]
	publish(t, dir, "hello", "2")
	s, _ = newSession(t, o, "")
	if _, err := s.Plan(context.Background(), frozen); err == nil {
		t.Error("a frozen sync passed a lockfile the repository resolves otherwise")
	}
}

// TestFrozenRepoGone: a frozen sync of a lockfile whose recorded repository is gone from
// its location, none given in its place, is the *LockRepoError of that repository, as a
// plain sync's is.
func TestFrozenRepoGone(t *testing.T) {
	s, o := installed(t, "hello")
	l, err := s.Lock(context.Background(), session.Request{Requires: []repo.Requirement{{Name: "hello"}}, LockPath: "pkg.lock"})
	if err != nil {
		t.Fatal(err)
	}
	dir := o.Repos[0].URLs[0]
	if err := os.Rename(dir, dir+".moved"); err != nil {
		t.Fatal(err)
	}
	// A root to fill from a cache to fill: a plain sync reads the repository.
	o.Repos, o.Root, o.Cache = nil, filepath.Join(t.TempDir(), "root"), filepath.Join(t.TempDir(), "cache")
	for _, frozen := range []bool{false, true} {
		s, _ := newSession(t, o, "")
		_, err := s.Plan(context.Background(), session.Request{Op: session.Sync, Lock: l, LockPath: "pkg.lock", LockRepos: true, Frozen: frozen})
		var le *session.LockRepoError
		if !errors.As(err, &le) || !le.Recorded || le.Lock != "pkg.lock" || !errors.Is(err, session.ErrNoRepository) {
			t.Errorf("sync (frozen %v) with the lockfile's repository gone: %v; want its *LockRepoError, recorded", frozen, err)
		}
		s.Close()
	}
}

// removed returns the names of the packages the plan p removes.
func removed(p *txn.Plan) []string {
	var names []string
	for _, c := range p.Changes {
		if c.Action == txn.Remove {
			names = append(names, c.Name)
		}
	}
	return names
}

package session_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pkg/config"
	"pkg/repo"
	"pkg/runner"
	"pkg/session"
)

// movedLock returns a lockfile of hello from repository a and tool from repository b,
// written at path, after b moved: the options of a session given b where it is now
// (--repo b=LOCATION), in place of the lockfile's repositories.
func movedLock(t *testing.T) (*repo.Lock, string, session.Options) {
	t.Helper()
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	publish(t, a, "hello", "1")
	publish(t, b, "tool", "1")
	o := session.Options{Root: filepath.Join(base, "root"), Cache: filepath.Join(base, "cache"),
		Repos: []config.Repo{{Name: "a", URLs: []string{a}}, {Name: "b", URLs: []string{b}}}}
	s, _ := newSession(t, o, "")
	path := filepath.Join(base, "pkg.lock")
	l, err := s.Lock(context.Background(), session.Request{Requires: []repo.Requirement{{Name: "hello"}, {Name: "tool"}}, LockPath: path})
	if err == nil {
		err = repo.WriteLock(path, l)
	}
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(b, b+".moved"); err != nil {
		t.Fatal(err)
	}
	o.Repos = []config.Repo{{Name: "b", URLs: []string{b + ".moved"}, File: "--repo"}}
	return l, path, o
}

// TestFrozenRepoMoved: a frozen sync of a lockfile of two repositories, one of them given
// where it moved to by its name, resolves against both, as the sync fetches from both.
func TestFrozenRepoMoved(t *testing.T) {
	l, path, o := movedLock(t)
	s, _ := newSession(t, o, "")
	defer s.Close()
	p, err := s.Plan(context.Background(), session.Request{Op: session.Sync, Lock: l, LockPath: path, Frozen: true})
	if err == nil {
		_, err = p.Apply(context.Background())
	}
	if err != nil {
		t.Errorf("frozen sync with repository b given where it moved: %v", err)
	}
}

// TestRunLockRepoMoved: a run of a lockfile's package of repository a, with repository b
// given where it moved to by its name, fetches from a, as a sync does.
func TestRunLockRepoMoved(t *testing.T) {
	_, path, o := movedLock(t)
	s, _ := newSession(t, o, "")
	defer s.Close()
	r, err := s.Run(context.Background(), runner.Request{Package: repo.Requirement{Name: "hello"}, Lock: path}, session.RunOptions{})
	if err != nil {
		t.Fatalf("run hello of the lockfile with repository b given where it moved: %v", err)
	}
	r.Close()
}

// TestSyncLockConfiguredBeside: with repository b given by its name, the configured
// repository of the name a, a copy of a elsewhere, serves a's packages of the lockfile,
// frozen or not, and the lockfile's record of a is not read.
func TestSyncLockConfiguredBeside(t *testing.T) {
	l, path, o := movedLock(t)
	a := filepath.Clean(strings.TrimPrefix(l.Repos[0].URL, "file://"))
	if err := os.Rename(a, a+".copy"); err != nil {
		t.Fatal(err)
	}
	cfg := "[repo.a]\nurls = [\"" + a + ".copy\"]\n"
	if err := os.MkdirAll(filepath.Join(o.Root, ".pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(o.Root, ".pkg", "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, frozen := range []bool{true, false} {
		s, _ := newSession(t, o, "")
		p, err := s.Plan(context.Background(), session.Request{Op: session.Sync, Lock: l, LockPath: path, Frozen: frozen})
		if err == nil {
			_, err = p.Apply(context.Background())
		}
		s.Close()
		if err != nil {
			t.Errorf("sync (frozen %v) with b given and a configured where it moved: %v", frozen, err)
		}
	}
}

package session_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"pkg/install"
	"pkg/repo"
	"pkg/session"
	"pkg/txn"
)

// TestPlanGivesUpRoot: whatever becomes of a change, the root's lock and database are
// given up, once: by Plan where it fails under the lock, else by the plan's Apply, failed
// or not, or its Close; a Close or an Apply after that does nothing.
func TestPlanGivesUpRoot(t *testing.T) {
	_, o := installed(t, "hello")
	o.LockTimeout = time.Second // a root left held fails the next case instead of hanging it
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	apply := func(ctx context.Context) func(*txn.Plan) error {
		return func(p *txn.Plan) error { _, err := p.Apply(ctx); return err }
	}
	tool := []repo.Requirement{{Name: "tool"}}
	s, _ := newSession(t, o, "")
	toolLock, err := s.Lock(context.Background(), session.Request{Requires: tool, LockPath: "pkg.lock"})
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		dry     bool
		home    bool // the default root: a sync may not remove from it
		r       session.Request
		use     func(*txn.Plan) error // nil: Plan fails
		wantErr bool
	}{
		{name: "unknown package", r: session.Request{Op: session.Install, Requires: []repo.Requirement{{Name: "nosuch"}}}},
		{name: "remove not installed", r: session.Request{Op: session.Remove, Names: []string{"nosuch"}}},
		{name: "sync refused", home: true, r: session.Request{Op: session.Sync, Lock: toolLock, LockPath: "pkg.lock"}},
		{name: "closed", r: session.Request{Op: session.Install, Requires: tool}, use: (*txn.Plan).Close},
		{name: "dry run", dry: true, r: session.Request{Op: session.Install, Requires: tool}, use: apply(context.Background()), wantErr: true},
		{name: "cancelled", r: session.Request{Op: session.Install, Requires: tool}, use: apply(cancelled), wantErr: true},
		{name: "nothing to do", r: session.Request{Op: session.Install, Requires: []repo.Requirement{{Name: "hello"}}}, use: apply(context.Background())},
		{name: "applied", r: session.Request{Op: session.Install, Requires: tool}, use: apply(context.Background())},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := o
			o.DryRun, o.DefaultRoot = tt.dry, tt.home
			s, _ := newSession(t, o, "")
			defer s.Close()
			p, err := s.Plan(context.Background(), tt.r)
			switch {
			case tt.use == nil && err == nil:
				p.Close()
				t.Fatal("Plan passed")
			case tt.use != nil && err != nil:
				t.Fatalf("Plan: %v", err)
			case tt.use != nil:
				if err := tt.use(p); (err != nil) != tt.wantErr {
					t.Errorf("the plan's %s: %v", tt.name, err)
				}
				if _, err := p.Apply(context.Background()); !errors.Is(err, txn.ErrNotBound) {
					t.Errorf("Apply after: %v, want %v", err, txn.ErrNotBound)
				}
				if err := p.Close(); err != nil {
					t.Errorf("Close after: %v", err)
				}
			}
			root, err := install.Open(context.Background(), o.Root, install.Options{LockTimeout: time.Millisecond})
			if err != nil {
				t.Fatalf("the root is still held: %v", err)
			}
			root.Close()
		})
	}
}

// TestPlanFailedMakesNoRoot: a removal refused under the root's lock in a directory where
// nothing was installed leaves no root there (install.Root.Abandon), as an install does.
func TestPlanFailedMakesNoRoot(t *testing.T) {
	o := session.Options{Root: filepath.Join(t.TempDir(), "root")}
	s, _ := newSession(t, o, "")
	defer s.Close()
	if _, err := s.Plan(context.Background(), session.Request{Op: session.Remove, Names: []string{"nosuch"}}); err == nil {
		t.Fatal("Plan of removing a package not installed passed")
	}
	if err := install.Exists(o.Root); !errors.Is(err, install.ErrNoRoot) {
		t.Errorf("the refused removal left a root: %v", err)
	}
}

// TestDryRunRootAbsolute: a dry run's plan names its root by its absolute path, as the
// change's own plan does, whatever the root's path given (relative here), for each kind of
// change.
func TestDryRunRootAbsolute(t *testing.T) {
	_, o := installed(t, "hello")
	s, _ := newSession(t, o, "")
	hello, err := s.Lock(t.Context(), session.Request{Requires: []repo.Requirement{{Name: "hello"}}, LockPath: "pkg.lock"})
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := o.Root
	t.Chdir(filepath.Dir(o.Root))
	o.Root, o.DryRun = filepath.Base(o.Root), true
	for _, r := range []session.Request{
		{Op: session.Install, Requires: []repo.Requirement{{Name: "tool"}}},
		{Op: session.Upgrade}, {Op: session.Remove, Names: []string{"hello"}}, {Op: session.Autoremove},
		{Op: session.Sync, Lock: hello, LockPath: "pkg.lock"},
	} {
		s, _ := newSession(t, o, "")
		p, err := s.Plan(t.Context(), r)
		if err != nil {
			t.Fatalf("dry run of %v: %v", r.Op, err)
		}
		if p.Root != want {
			t.Errorf("dry run of %v with --root %s: plan's root %q, want %q", r.Op, o.Root, p.Root, want)
		}
		p.Close()
	}
}

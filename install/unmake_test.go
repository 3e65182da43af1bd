package install

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// TestAbandonUnmakes opens a root at a path none of whose last two directories exist, and
// abandons it with a command waiting for its lock: the path is gone again, and the waiting
// command, its lock found gone from its path, opens a root made anew, whose lock is the
// file at its path.
func TestAbandonUnmakes(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "new", "root")
	first, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan struct{})
	opened := make(chan error, 1)
	var second *Root
	go func() {
		var err error
		second, err = Open(context.Background(), dir, Options{Waiting: func(string) { close(waiting) }})
		opened <- err
	}()
	<-waiting
	if err := first.Abandon(); err != nil {
		t.Fatal(err)
	}
	if err := <-opened; err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if !stillLinked(second.lock) {
		t.Error("the waiting command holds a lock that is not its root's")
	}
	for _, rel := range []string{".pkg/staging", ".pkg/trash", "pkgs", "bin"} {
		if fi, err := os.Stat(filepath.Join(dir, rel)); err != nil || !fi.IsDir() {
			t.Errorf("%s of the root opened anew: %v", rel, err)
		}
	}
	if err := second.Abandon(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(base, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the root's parent after both abandoned it: %v", err)
	}
}

// TestAbandonWaitsOnce: a command waiting for a root's lock that its holder abandons, and
// that another then makes anew and holds, says it waits once, and gives up when its one
// lock timeout has passed: it said so again, and waited its timeout anew, for each root it
// opened.
func TestAbandonWaitsOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "root")
	first, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var said atomic.Int32
	waiting := make(chan struct{}, 1)
	opened := make(chan error, 1)
	var second *Root
	go func() {
		var err error
		second, err = Open(context.Background(), dir, Options{LockTimeout: 10 * lockRetry, Waiting: func(string) {
			said.Add(1)
			select { // never blocks: a regression saying it often fails on said, not hangs
			case waiting <- struct{}{}:
			default:
			}
		}})
		opened <- err
	}()
	<-waiting
	if err := first.Abandon(); err != nil {
		t.Fatal(err)
	}
	third := make(chan *Root, 1)
	go func() { // made anew and held, unless the waiting command made it first
		r, err := Open(context.Background(), dir, Options{})
		if err != nil {
			t.Error(err)
		}
		third <- r
	}()
	if err := <-opened; err == nil {
		second.Close()
	} else if !errors.Is(err, ErrLocked) {
		t.Errorf("the waiting command: %v; want it to give up on ErrLocked, or open the root", err)
	}
	if r := <-third; r != nil {
		r.Close()
	}
	if n := said.Load(); n != 1 {
		t.Errorf("the waiting command said it waits %d times; want once", n)
	}
}

// TestAbandonKeeps abandons roots Open made nothing of, or that hold what it did not
// make: what was there stays.
func TestAbandonKeeps(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "root")
	r, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // a root made by a command that did not fail
	if r, err = Open(context.Background(), dir, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := r.Abandon(); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{".pkg/lock", "pkgs", "bin"} {
		if _, err := os.Lstat(filepath.Join(dir, rel)); err != nil {
			t.Errorf("%s of a root there before: %v", rel, err)
		}
	}

	other := filepath.Join(t.TempDir(), "root")
	if r, err = Open(context.Background(), other, Options{}); err != nil {
		t.Fatal(err)
	}
	keys := filepath.Join(other, ".pkg", "trusted-keys")
	if err := os.WriteFile(keys, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.Abandon(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(keys); err != nil {
		t.Errorf("a file put in .pkg of a root abandoned: %v", err)
	}
}

// TestOpenRemovesGone: a crash of unmake between its rename of .pkg and its removal leaves
// goneMeta, holding the lock and the empty staging and trash; the next Open, making .pkg
// again, removes it. One that holds anything else (a file of the user's) is kept.
func TestOpenRemovesGone(t *testing.T) {
	for _, extra := range []bool{false, true} {
		dir := t.TempDir()
		gone := filepath.Join(dir, goneMeta)
		for _, d := range []string{"staging", "trash"} {
			if err := os.MkdirAll(filepath.Join(gone, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(gone, "lock"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if extra {
			if err := os.WriteFile(filepath.Join(gone, "notes"), []byte("mine"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r, err := Open(context.Background(), dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		_, err = os.Lstat(gone)
		if extra && err != nil {
			t.Errorf("%s holding a file of the user's: %v, want it kept", goneMeta, err)
		}
		if !extra && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left by a crash: %v, want it removed", goneMeta, err)
		}
	}
}

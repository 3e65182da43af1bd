package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pkg/db"
)

// TestLockWaiting holds a root's lock while pkg runs: pkg says whom it waits for, gives up
// after --lock-timeout with an error naming the holder, and goes on once the lock is free.
func TestLockWaiting(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	e.ok("list")
	holder, err := db.Open(filepath.Join(e.root, ".pkg", "db"), db.Options{Owner: "pkg install hello"})
	if err != nil {
		t.Fatal(err)
	}
	waiting := fmt.Sprintf("pkg: waiting for pid %d (pkg install hello) to finish with %s\n", os.Getpid(), e.root)
	gaveUp := fmt.Sprintf("is locked by pid %d (pkg install hello): gave up after 300ms\n", os.Getpid())

	start := time.Now()
	_, stderr, code := e.pkg("--lock-timeout", "300ms", "install", "hello")
	if elapsed := time.Since(start); code != 1 || !strings.Contains(stderr, waiting) || !strings.Contains(stderr, gaveUp) || elapsed < 300*time.Millisecond {
		t.Errorf("with the lock held: exit %d after %v, stderr %q; want exit 1 after 300ms, %q and %q", code, elapsed, stderr, waiting, gaveUp)
	}
	checkDBEmptyLocked(t, holder)

	time.AfterFunc(300*time.Millisecond, func() { holder.Close() })
	start = time.Now()
	out, stderr, code := e.pkg("install", "hello")
	if elapsed := time.Since(start); code != 0 || !strings.Contains(stderr, waiting) || !strings.Contains(out, "installed hello") || elapsed < 300*time.Millisecond {
		t.Errorf("with the lock freed after 300ms: exit %d after %v, stdout %q, stderr %q", code, elapsed, out, stderr)
	}
	if _, stderr, _ := e.pkg("list"); strings.Contains(stderr, "waiting") {
		t.Errorf("list after the holder closed: %q", stderr)
	}
}

// checkDBEmptyLocked checks, through the holder of the lock, that nothing was recorded.
func checkDBEmptyLocked(t *testing.T, d *db.DB) {
	t.Helper()
	ps, err := d.List()
	ins, err2 := d.Intents()
	if err != nil || err2 != nil || len(ps) != 0 || len(ins) != 0 {
		t.Errorf("database not empty: packages %v, intents %v (%v, %v)", ps, ins, err, err2)
	}
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"pkg/install"
	"pkg/trust"
)

// holdLock takes the lock of root as a pkg command described as owner does, and returns
// what releases it.
func holdLock(t *testing.T, root, owner string) (release func()) {
	t.Helper()
	r, err := install.Open(context.Background(), root, install.Options{Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	return func() { r.Close() }
}

// TestLockWaiting holds a root's lock while pkg runs: a command that changes the root says
// whom it waits for, gives up after --lock-timeout with an error naming the holder, and goes
// on once the lock is free; one that only reads the database does not wait.
func TestLockWaiting(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	e.initRoot()
	release := holdLock(t, e.root, "pkg install hello")
	waiting := fmt.Sprintf("pkg: note: waiting for pid %d (pkg install hello) to finish with %s\n", os.Getpid(), e.root)
	gaveUp := fmt.Sprintf("is locked by pid %d (pkg install hello): gave up after 300ms\npkg: hint: run the command again once that one is done", os.Getpid())

	start := time.Now()
	_, stderr, code := e.pkg("--lock-timeout", "300ms", "install", "hello")
	if elapsed := time.Since(start); code != 1 || !strings.Contains(stderr, waiting) || !strings.Contains(stderr, gaveUp) || elapsed < 300*time.Millisecond {
		t.Errorf("with the lock held: exit %d after %v, stderr %q; want exit 1 after 300ms, %q and %q", code, elapsed, stderr, waiting, gaveUp)
	}
	checkDBEmpty(t, e.root)

	var out bytes.Buffer
	er := &releaseOn{want: waiting, release: release}
	code = run([]string{"pkg", "--root", e.root, "--cache", e.cache, "--repo", e.repo, "install", "hello"}, &out, er)
	if code != 0 || !strings.Contains(er.String(), waiting) || !strings.Contains(out.String(), "installed hello") {
		t.Errorf("with the lock freed once pkg waits: exit %d, stdout %q, stderr %q", code, out.String(), er.String())
	}
	if _, stderr, _ := e.pkg("list"); strings.Contains(stderr, "waiting") {
		t.Errorf("list after the holder closed: %q", stderr)
	}

	release = holdLock(t, e.root, "pkg remove hello")
	defer release()
	busy := fmt.Sprintf("pkg: note: pid %d (pkg remove hello) is changing %s; this is what was installed before it started\n", os.Getpid(), e.root)
	for _, args := range [][]string{{"list"}, {"files", "hello"}, {"info", "hello"}} {
		out, stderr := e.ok(append([]string{"--lock-timeout", "1ms"}, args...)...)
		if !strings.Contains(out, "hello") || stderr != busy {
			t.Errorf("pkg %s with the lock held: stdout %q, stderr %q; want hello listed and %q", strings.Join(args, " "), out, stderr, busy)
		}
	}
	// Each command that waits says so in its own words, not in those of the package that
	// holds the lock ("install: root ...").
	k, err := trust.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	gaveUp = fmt.Sprintf("\npkg: root %s is locked by pid %d (pkg remove hello): gave up after 1ms\n", e.root, os.Getpid())
	for _, args := range [][]string{{"verify"}, {"remove", "hello"}, {"autoremove"}, {"upgrade"}, {"trust", "add", k.Public().String()}, {"repo", "forget"}} {
		if _, stderr, code := e.pkg(append([]string{"--lock-timeout", "1ms"}, args...)...); code != 1 || !strings.Contains(stderr, gaveUp) {
			t.Errorf("pkg %s with the lock held: exit %d, stderr %q; want exit 1 and %q", strings.Join(args, " "), code, stderr, gaveUp)
		}
	}
	// The index is read before the lock is waited for: a repository that fails fails at once.
	bad := &env{t: t, root: e.root, cache: e.cache, repo: filepath.Join(t.TempDir(), "none")}
	if _, stderr, code := bad.pkg("--lock-timeout", "10s", "install", "hello"); code != 1 || strings.Contains(stderr, "waiting") ||
		!strings.Contains(stderr, "no repository at") {
		t.Errorf("install from a missing repository with the lock held: exit %d, stderr %q", code, stderr)
	}
}

// releaseOn collects what pkg writes and calls release once it has written want.
type releaseOn struct {
	bytes.Buffer
	want    string
	release func()
	once    sync.Once
}

func (w *releaseOn) Write(p []byte) (int, error) {
	n, err := w.Buffer.Write(p)
	if strings.Contains(w.String(), w.want) {
		w.once.Do(w.release)
	}
	return n, err
}

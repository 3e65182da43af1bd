package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"pkg/internal/testfs"
)

// TestInterruptDatabaseWaits: a command waiting for bbolt's lock on the root's database,
// which another process holds (a reader without the root's lock, or a writer), ends at
// SIGINT with 130 and "pkg: interrupted", whether it reads, changes or repairs the root,
// and with no --lock-timeout (#30: an interrupt ends any command at any point). The
// repair stops before it replaces the database, keeping the records it would salvage.
func TestInterruptDatabaseWaits(t *testing.T) {
	bin := testfs.PkgBinary(t)
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "lib", "1.0")
	e := newEnv(t, base, dir)
	e.ok("install", "lib")
	lock := holdFlock(t, filepath.Join(e.root, ".pkg", "db")) // as bbolt's writer does
	for _, args := range [][]string{
		{"list"},
		{"--repo", dir, "install", "lib"},
		{"remove", "lib"},
		{"verify", "--repair"},
	} {
		interruptWaiting(t, bin, append([]string{"--root", e.root, "--cache", e.cache}, args...)...)
	}
	lock.Close()
	if out, _ := e.ok("list"); !strings.Contains(out, "lib") {
		t.Errorf("list after the interrupted commands: %q; want lib still installed", out)
	}
	if kept, _ := filepath.Glob(filepath.Join(e.root, ".pkg", "db.damaged-*")); len(kept) != 0 {
		t.Errorf("the interrupted repair replaced the database: %v", kept)
	}
}

// holdFlock opens path read-only and takes flock(2)'s exclusive lock on it, as another
// process would, until the test ends or the returned file is closed.
func holdFlock(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	return f
}

// interruptWaiting runs pkg with args, which must still be waiting after half a second,
// then sends it SIGINT, after which it must end within 5 s, with 130 and "pkg: interrupted".
func interruptWaiting(t *testing.T, bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		t.Fatalf("pkg %v ended without waiting: %v, %q", args, err, stderr.String())
	case <-time.After(500 * time.Millisecond):
	}
	cmd.Process.Signal(unix.SIGINT)
	select {
	case <-exited:
		if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.HasSuffix(stderr.String(), "pkg: interrupted\n") {
			t.Errorf("pkg %v after SIGINT: exit %d, stderr %q; want 130 and 'pkg: interrupted'", args, code, stderr.String())
		}
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-exited
		t.Errorf("pkg %v still running 5 s after SIGINT", args)
	}
}

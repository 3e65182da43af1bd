package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFailedFirstInstall checks that a first install that fails leaves no root behind,
// nor the directories above it that it made: list says there is none, and commands that
// need one refuse the directory. Into a directory there before, it leaves it as it was.
func TestFailedFirstInstall(t *testing.T) {
	base := t.TempDir()
	e := newEnv(t, base, demoRepo)
	e.root = filepath.Join(base, "new", "root")
	if _, stderr, code := e.pkg("install", "nosuch"); code != 1 || !strings.Contains(stderr, "nosuch") {
		t.Fatalf("install nosuch: exit %d, %q", code, stderr)
	}
	if _, err := os.Lstat(filepath.Join(base, "new")); !os.IsNotExist(err) {
		t.Errorf("the root's parent after a failed first install: %v", err)
	}
	if err := os.MkdirAll(e.root, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := e.pkg("install", "nosuch"); code != 1 || !strings.Contains(stderr, "nosuch") {
		t.Fatalf("install nosuch: exit %d, %q", code, stderr)
	}
	if names, err := os.ReadDir(e.root); err != nil || len(names) != 0 {
		t.Errorf("an empty root after a failed first install: %v, %v", names, err)
	}
	if _, stderr := e.ok("list"); !strings.Contains(stderr, "nothing is installed: no root at "+e.root) {
		t.Errorf("list after a failed first install: %q", stderr)
	}
	e.ok("install", "libgreet")
	if _, stderr, code := e.pkg("install", "nosuch"); code != 1 || !strings.Contains(stderr, "nosuch") {
		t.Fatalf("install nosuch: exit %d, %q", code, stderr)
	}
	if got := e.installed(); got != "libgreet 1.0.0" {
		t.Errorf("after a failed install into a root: %q", got)
	}
}

// TestFailedFirstSync syncs a lockfile whose archive the repository no longer has: the
// error names it and the hint says what to do; the failed first sync leaves no root
// directory, and repo forget makes none.
func TestFailedFirstSync(t *testing.T) {
	base := t.TempDir()
	dir := syncRepo(t)
	e := newEnv(t, base, dir)
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "tool@1.0")
	archive := filepath.Join(dir, "tool-1.0.tar")
	if err := os.Remove(archive); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := e.pkg("sync", "-f", lock); code != 1 || !strings.Contains(stderr, "fetch tool 1.0: open "+archive+": no such file or directory") ||
		!strings.Contains(stderr, "pkg: hint: the repository does not have the archive its index or the lockfile names") {
		t.Fatalf("sync with tool's archive gone: exit %d, %q", code, stderr)
	}
	if _, err := os.Lstat(e.root); !os.IsNotExist(err) {
		t.Errorf("root after a failed first sync: %v", err)
	}
	e.ok("repo", "forget")
	if _, err := os.Lstat(e.root); !os.IsNotExist(err) {
		t.Errorf("root after a failed first sync and repo forget: %v", err)
	}
}

// TestUpgradeSameArchive: a version published with the same archive as the one installed
// is an upgrade (or a downgrade), in the result as in the plan, not a reinstall; the same
// version from the same archive again is a reinstall.
func TestUpgradeSameArchive(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	e := newEnv(t, base, dir)
	file := writeFile(t, base, "zflat.tar", packageTar(t, "zf", "1.0", 'z'))
	e.ok("repo", "add", dir, file, "--name", "zf", "--version", "1.0")
	e.ok("install", "zf")
	e.ok("repo", "add", dir, file, "--name", "zf", "--version", "1.1")
	if out, _ := e.ok("upgrade", "-n"); !strings.Contains(out, "upgrade zf 1.0 to 1.1") {
		t.Errorf("upgrade -n: %q, want the upgrade of zf 1.0 to 1.1", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"upgrade"}, "upgraded zf 1.0 to 1.1: "},
		{[]string{"install", "zf=1.0"}, "downgraded zf 1.1 to 1.0: "},
		{[]string{"install", "--reinstall", "zf"}, "reinstalled zf 1.0: "},
	} {
		if out, _ := e.ok(c.args...); !strings.Contains(out, c.want) {
			t.Errorf("%v: %q, want %q", c.args, out, c.want)
		}
	}
}

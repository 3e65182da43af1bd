package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandEnv: a package published with --env runs its commands with those variables,
// {root} made the root's path, through a wrapper in bin/; the entry survives a lockfile
// and a sync into another root; a bad entry is refused before the repository changes.
func TestCommandEnv(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	archive := filepath.Join(base, "show.tar")
	script := "#!/bin/sh\nprintf '%s|%s\\n' \"$MAGIC\" \"$GREETING\"\n"
	if err := os.WriteFile(archive, pax(t, td("usr/"), td("usr/bin/"), moded(tf("usr/bin/show", script), 0o755),
		td("usr/share/"), tf("usr/share/magic.mgc", "magic")), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, base, dir)
	if _, _, code := e.pkg("repo", "add", dir, archive, "--name", "show", "--version", "1", "--env", "PATH=/x"); code != 2 {
		t.Errorf("repo add --env PATH=/x: exit %d, want 2", code)
	}
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err == nil {
		t.Error("a refused --env wrote the index")
	}
	e.ok("repo", "add", dir, archive, "--name", "show", "--version", "1", "--bin", "usr/bin/show",
		"--env", "MAGIC={root}/usr/share/magic.mgc", "--env", "GREETING=it's {root}")
	run := func(root string) {
		t.Helper()
		out, err := exec.Command(filepath.Join(root, "bin", "show")).CombinedOutput()
		if want := root + "/usr/share/magic.mgc|it's " + root + "\n"; err != nil || string(out) != want {
			t.Errorf("%s/bin/show: %v, %q; want %q", root, err, out, want)
		}
	}
	e.ok("install", "show")
	run(e.root)
	e.ok("verify")
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "show")
	if data, err := os.ReadFile(lock); err != nil || !strings.Contains(string(data), `"MAGIC={root}/usr/share/magic.mgc"`) {
		t.Errorf("lockfile: %v, %s; want the env entry", err, data)
	}
	other := filepath.Join(base, "other")
	e.ok("--root", other, "sync", "-f", lock)
	run(other)
}

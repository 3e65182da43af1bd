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

// TestEnvColonRoot: PATH cannot name a bin/ whose path holds ':', its separator. pkg env
// refuses to print a line that cannot work, and the note after an install suggests none;
// a symlink to the root, its path without ':', works.
func TestEnvColonRoot(t *testing.T) {
	base := t.TempDir()
	e := newEnv(t, filepath.Join(base, "co:lon"), demoRepo)
	t.Setenv("PATH", "/usr/bin:/bin")
	_, stderr := e.ok("install", "hello")
	if !strings.Contains(stderr, "is not on PATH") || strings.Contains(stderr, "export PATH="+e.root) {
		t.Errorf("install into %s: %q; want a note on PATH that suggests no export of it", e.root, stderr)
	}
	for _, args := range [][]string{{"env"}, {"env", "--bin-dir"}} {
		if out, stderr, code := e.pkg(args...); code != 1 || out != "" || !strings.Contains(stderr, e.root) {
			t.Errorf("pkg %s: exit %d, stdout %q, stderr %q; want exit 1, nothing printed, and an error naming the root",
				strings.Join(args, " "), code, out, stderr)
		}
	}
	link := filepath.Join(base, "root")
	if err := os.Symlink(e.root, link); err != nil {
		t.Fatal(err)
	}
	out, _ := (&env{t: t, root: link, cache: e.cache, repo: e.repo}).ok("env")
	if want := `export PATH="` + link + `/bin:$PATH"` + "\n"; out != want {
		t.Errorf("pkg env through a symlink: %q, want %q", out, want)
	}
	t.Setenv("PATH", link+"/bin:/usr/bin")
	if out, err := exec.Command("hello").CombinedOutput(); err != nil {
		t.Errorf("hello through the symlink on PATH: %v, %s", err, out)
	}
}

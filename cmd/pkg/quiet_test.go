package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestQuiet checks that --quiet prints only errors and their hints: no warning of an
// unsigned repository, of files kept from a removed package or of a signing key others can
// read, and no note; each of those warns without --quiet.
func TestQuiet(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "tool", "1.0")
	addPackage(t, dir, "app", "1.0")
	e := newEnv(t, base, serve(t, dir)) // unsigned over HTTP: a warning
	key := filepath.Join(base, "key")
	e.ok("repo", "keygen", "-o", key)
	if err := os.Chmod(key, 0o644); err != nil { // others can read it: a warning
		t.Fatal(err)
	}
	t.Setenv("PATH", "/usr/bin") // the root's bin/ is not on it: a note
	steps := []struct {
		args  []string
		setup func()
	}{
		{args: []string{"install", "tool"}},
		{args: []string{"remove", "tool"}, setup: func() {
			if err := os.WriteFile(filepath.Join(e.root, "pkgs/tool/added"), []byte("mine"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{args: []string{"repo", "sign", "--key", key, dir}},
	}
	for _, quiet := range []bool{true, false} {
		for _, st := range steps {
			if st.setup != nil {
				st.setup()
			}
			args := st.args
			if quiet {
				args = append([]string{"--quiet"}, args...)
			}
			_, stderr := e.ok(args...)
			if quiet && stderr != "" || !quiet && !strings.Contains(stderr, "pkg: warning: ") {
				t.Errorf("pkg %s: stderr %q", strings.Join(args, " "), stderr)
			}
		}
	}
	// An error under --quiet comes with its hint.
	_, stderr, code := newEnv(t, filepath.Join(base, "none"), e.repo).pkg("--quiet", "remove", "tool")
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if code != 1 || len(lines) != 2 || !strings.HasPrefix(lines[0], "pkg: remove tool: ") || !strings.HasPrefix(lines[1], "pkg: hint: ") {
		t.Errorf("--quiet remove in no root: exit %d, stderr %q; want the error and its hint", code, stderr)
	}
}

// TestQuietResults: --quiet prints the results asked for, a list (repo list's), but no
// summary of what went well (verify's count, outdated's "up to date").
func TestQuietResults(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "tool", "1.0")
	e := newEnv(t, base, dir)
	e.ok("install", "tool")
	if out, _ := e.ok("--quiet", "repo", "list"); !strings.Contains(out, "repo") {
		t.Errorf("--quiet repo list: %q; want the repository", out)
	}
	for _, args := range [][]string{{"verify"}, {"outdated"}} {
		if out, stderr := e.ok(append([]string{"--quiet"}, args...)...); out != "" || stderr != "" {
			t.Errorf("--quiet %v: stdout %q, stderr %q; want nothing", args, out, stderr)
		}
	}
}

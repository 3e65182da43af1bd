package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallRelations installs packages whose dependencies are a provided name and
// alternatives, then asks why, removes and installs what their relations forbid.
func TestInstallRelations(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	e := newEnv(t, base, dir)
	for _, p := range [][]string{
		{"zlib1g", "--provides", "libz1"},
		{"zlib-ng", "--provides", "libz1=1.3", "--conflicts", "zlib1g"},
		{"cdebconf", "--provides", "debconf-2.0"},
		{"curl", "--depends", "libz1", "--depends", "debconf>=0.5|debconf-2.0"},
	} {
		archive := filepath.Join(base, p[0]+"-1.tar")
		if err := os.WriteFile(archive, packageTar(t, p[0], "1", 'x'), 0o644); err != nil {
			t.Fatal(err)
		}
		e.ok(append([]string{"repo", "add", dir, archive, "--name", p[0], "--version", "1"}, p[1:]...)...)
	}
	out, _ := e.ok("install", "curl")
	var order []string
	for line := range strings.Lines(out) {
		if rest, ok := strings.CutPrefix(line, "installed "); ok {
			order = append(order, strings.Fields(rest)[0])
		}
	}
	// zlib-ng sorts before zlib1g: of two providers, the first by name.
	if got, want := strings.Join(order, " "), "cdebconf zlib-ng curl"; got != want {
		t.Errorf("install curl: installed %s, want %s\n%s", got, want, out)
	}
	if out, _ := e.ok("why", "zlib-ng"); !strings.Contains(out, "needed by curl") {
		t.Errorf("why zlib-ng:\n%s", out)
	}
	if _, stderr, code := e.pkg("why", "libz1"); code != 1 || !strings.Contains(stderr, "why libz1: not installed; installed zlib-ng provides it") {
		t.Errorf("why libz1, a name zlib-ng provides: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := e.pkg("remove", "zlib-ng"); code != 1 || !strings.Contains(stderr, "curl") {
		t.Errorf("remove zlib-ng, the one provider of curl's libz1: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := e.pkg("install", "zlib1g"); code != 1 || !strings.Contains(stderr, "zlib-ng 1 conflicts with zlib1g 1") || !strings.Contains(stderr, "hint:") {
		t.Errorf("install zlib1g, which zlib-ng conflicts with: exit %d\n%s", code, stderr)
	}
	if out, _ := e.ok("info", "zlib-ng"); !strings.Contains(out, "libz1=1.3") {
		t.Errorf("info zlib-ng does not show what it provides:\n%s", out)
	}
}

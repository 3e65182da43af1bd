package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"pkg/internal/testfs"
	"pkg/pkgtest/testrepo"
	"pkg/repo"
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

// TestReplacesTakesCommand: a package whose record replaces an installed one that provides
// its command (a Debian split moving a binary) takes the command over as it takes the
// file, and removing it gives the command back; past the version its Replaces covers, the
// command is refused.
func TestReplacesTakesCommand(t *testing.T) {
	base := t.TempDir()
	for _, p := range []repo.Package{
		{Name: "curl", Version: "7.88", Bin: testrepo.Commands("usr/bin/curl")},
		{Name: "curl", Version: "8.0", Bin: testrepo.Commands("usr/bin/curl")},
		{Name: "fakecurl", Version: "2.0", Bin: testrepo.Commands("usr/bin/curl"), Replaces: testrepo.Requires("curl<8")},
	} {
		archive := pax(t, td("usr/"), td("usr/bin/"), moded(tf("usr/bin/curl", "#!/bin/sh\necho "+p.Name+" "+p.Version+"\n"), 0o755))
		addHostile(t, base, p, archive)
	}
	e := newEnv(t, base, filepath.Join(base, "repo"))
	runs := func(when, want string) {
		t.Helper()
		if got, err := exec.Command(filepath.Join(e.root, "bin", "curl")).Output(); err != nil || string(got) != want {
			t.Errorf("bin/curl %s: %q, %v; want %q", when, got, err, want)
		}
		e.ok("verify")
	}
	e.ok("install", "curl@7.88")
	e.ok("install", "fakecurl")
	runs("with fakecurl installed", "fakecurl 2.0\n")
	e.ok("remove", "fakecurl")
	runs("with fakecurl removed", "curl 7.88\n")

	e.ok("install", "fakecurl")
	before := rootTree(t, e.root)
	if _, stderr, code := e.pkg("install", "curl@8.0"); code != 1 || !strings.Contains(stderr, `command "curl" is already provided by package fakecurl`) {
		t.Errorf("install curl 8.0, which fakecurl does not replace: exit %d\n%s", code, stderr)
	}
	testfs.SameTree(t, "root after a refused upgrade", rootTree(t, e.root), before)
	runs("after a refused upgrade", "fakecurl 2.0\n")
}

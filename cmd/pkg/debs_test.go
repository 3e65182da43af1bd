package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pkg/internal/testfs"
)

// TestRepoAddDebLinkOut refuses a .deb whose absolute symlink leads into a top-level
// directory it does not install, naming the link; one into its own is published.
func TestRepoAddDebLinkOut(t *testing.T) {
	testfs.NeedTools(t, "dpkg-deb")
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	e := newEnv(t, base, serve(t, dir))
	build := func(name, target string) string {
		tree := filepath.Join(base, name)
		for _, d := range []string{"DEBIAN", "usr/bin", "etc/" + name} {
			os.MkdirAll(filepath.Join(tree, d), 0o755)
		}
		control := "Package: " + name + "\nVersion: 1.0-1\nArchitecture: all\nMaintainer: N <n@example.com>\nDescription: links\n"
		if err := os.WriteFile(filepath.Join(tree, "DEBIAN", "control"), []byte(control), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tree, "etc", name, "conf"), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(tree, "usr/bin/link")); err != nil {
			t.Fatal(err)
		}
		testfs.Run(t, base, "dpkg-deb", "--root-owner-group", "--build", tree, name+".deb")
		return filepath.Join(base, name+".deb")
	}
	_, stderr, code := e.pkg("repo", "add", dir, build("out", "/bin/sh"))
	if want := `member "./usr/bin/link": symlink target outside the package: absolute target "/bin/sh"`; code == 0 || !strings.Contains(stderr, want) {
		t.Errorf("repo add of a .deb linking to /bin/sh: exit %d, stderr %q; want it refused with %q", code, stderr, want)
	}
	e.ok("repo", "add", dir, build("in", "/etc/in/conf"))
	e.ok("install", "in")
	if got, err := os.Readlink(filepath.Join(e.root, "pkgs", "in", "usr/bin/link")); err != nil || got != "../../etc/in/conf" {
		t.Errorf("installed link: %q, %v; want ../../etc/in/conf", got, err)
	}
	e.ok("verify")
}

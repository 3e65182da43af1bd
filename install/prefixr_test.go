package install

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"pkg/pkgtest/testrepo"
	"pkg/repo"
)

// TestPrefixUserSymlink: a symlink the user put in the prefix is never followed: where a
// package's directory goes it is kept in .pkg/saved, and where it took the place of a
// package's directory, the package's removal finishes without writing outside the root.
func TestPrefixUserSymlink(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	must(t, os.MkdirAll(filepath.Join(outside, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(outside, "sub", "f"), []byte("outside"), 0o644))
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	must(t, os.Symlink(outside, r.path("opt")))
	if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, prefixPkg("a", "1"), tree("opt/x=1", "usr/sub/f=1"))}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(outside, "x")); err == nil {
		t.Fatal("opt/x was written outside the root")
	}
	checkPrefix(t, r)
	// The user swaps the package's directory usr/sub for a symlink out of the root.
	must(t, os.Rename(r.path("usr/sub"), filepath.Join(base, "moved")))
	must(t, os.Symlink(filepath.Join(outside, "sub"), r.path("usr/sub")))
	_, err := r.Apply(context.Background(), nil, []string{"a"})
	if b, _ := os.ReadFile(filepath.Join(outside, "sub", "f")); string(b) != "outside" {
		t.Fatalf("the removal touched a file outside the root: %q", b)
	}
	if err != nil {
		t.Errorf("remove a with usr/sub a symlink: %v", err)
	}
	if p, err := r.db.PrefixPending(); err != nil || p != nil {
		t.Errorf("pending after the remove: %+v, %v", p, err)
	}
	if _, err := os.Lstat(r.path("usr/sub")); err == nil {
		t.Error("the user's symlink usr/sub stays in the prefix, not kept in .pkg/saved")
	}
	checkPrefix(t, r)
}

// TestPrefixWrapperFollowsDeps: a command whose member is bin/CMD gets the wrapper in its
// place when a dependency comes to declare library directories, and its member back when
// none does any more; verify finds nothing at each step.
func TestPrefixWrapperFollowsDeps(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	apply := func(p repo.Package, files ...string) {
		t.Helper()
		if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, p, tree(files...))}, nil); err != nil {
			t.Fatal(err)
		}
	}
	lib := func(v string, libs ...string) repo.Package {
		p := prefixPkg("l", v)
		p.Lib = libs
		return p
	}
	apply(lib("1"), "share/l=1")
	x := prefixPkg("x", "1")
	x.Depends = testrepo.Requires("l")
	x.Bin = testrepo.Commands("tool=bin/tool")
	apply(x, "bin/tool=#!/bin/sh\n")
	tool := r.path("bin/tool")
	isMember := func(want bool) {
		t.Helper()
		if got := inodeOf(tool) == inodeOf(r.pkgDir("x")+"/bin/tool"); got != want {
			t.Errorf("bin/tool is x's member: %v, want %v", got, want)
		}
		if problems, err := r.Verify(); err != nil || len(problems) > 0 {
			t.Errorf("Verify: %v, %v", problems, err)
		}
	}
	isMember(true)
	apply(lib("2", "lib"), "lib/libl.so.1=2")
	isMember(false)
	apply(lib("3"), "share/l=3")
	isMember(true)
}

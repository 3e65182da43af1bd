package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"pkg/pkgtest/testrepo"
	"slices"
	"strings"
	"testing"

	"pkg/repo"
	"pkg/txn"
)

// snapshot returns every path under dir with a digest of what it is: a directory, a
// symlink's target, or a file's bytes. A missing dir is an empty snapshot.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if os.IsNotExist(err) && path == dir {
			return filepath.SkipDir
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		switch {
		case d.IsDir():
			snap[rel] = "dir"
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			snap[rel] = "-> " + target
		default:
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			snap[rel] = fmt.Sprintf("%x", sha256.Sum256(data))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// sameTrees fails the test if the snapshot of any dir differs from before.
func sameTrees(t *testing.T, what string, before map[string]map[string]string) {
	t.Helper()
	for dir, was := range before {
		now := snapshot(t, dir)
		for p, d := range now {
			if was[p] != d {
				t.Errorf("%s: %s changed: %q, was %q", what, filepath.Join(dir, p), d, was[p])
			}
		}
		for p := range was {
			if _, ok := now[p]; !ok {
				t.Errorf("%s: %s is gone", what, filepath.Join(dir, p))
			}
		}
	}
}

// changes is the plan's changes as "action name version (why)" lines.
func changes(p txn.Plan) []string {
	var s []string
	for _, c := range p.Changes {
		v := c.Version
		if c.From != "" {
			v = c.From + " to " + c.Version
		}
		s = append(s, fmt.Sprintf("%s %s %s (%s)", c.Action, c.Name, v, c.Why))
	}
	return s
}

// TestDryRun runs each command that changes the root with --dry-run, as text and as JSON:
// the plan is what the command would do, the JSON parses as a txn.Plan of the documented
// schema, and the root, the cache and the database are byte for byte as they were.
func TestDryRun(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "lib", "1")
	addPackage(t, dir, "app", "1", "lib>=1")
	addPackage(t, dir, "extra", "1")
	e := newEnv(t, base, dir)
	e.ok("install", "app", "extra")
	lock := filepath.Join(base, "pkg.lock")
	addPackage(t, dir, "dep", "1")
	addPackage(t, dir, "tool", "1", "dep")
	e.ok("lock", "-o", lock, "tool", "app")
	// What the cache's copy of the index does not have yet: a dry run must not keep it.
	addPackage(t, dir, "lib", "2")
	addPackage(t, dir, "app", "2", "lib>=2")

	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"install", "tool"}, []string{"install dep 1 (dependency of tool)", "install tool 1 (requested)"}},
		{[]string{"install", "--reinstall", "extra"}, []string{"reinstall extra 1 (requested)"}},
		{[]string{"remove", "app", "extra"}, []string{"remove app 1 (requested)", "remove extra 1 (requested)"}},
		{[]string{"upgrade"}, []string{"upgrade lib 1 to 2 (dependency of app)", "upgrade app 1 to 2 (upgrade)"}},
		{[]string{"upgrade", "app"}, []string{"upgrade lib 1 to 2 (dependency of app)", "upgrade app 1 to 2 (requested)"}},
		{[]string{"sync", "-f", lock}, []string{"install dep 1 (in the lockfile)", "install tool 1 (in the lockfile)", "remove extra 1 (not in the lockfile)"}},
	} {
		name := strings.Join(tt.args, " ")
		before := map[string]map[string]string{e.root: snapshot(t, e.root), e.cache: snapshot(t, e.cache)}
		out, _ := e.ok(append(tt.args, "--dry-run")...)
		if !strings.Contains(out, "nothing was changed") {
			t.Errorf("%s --dry-run: %q, want the plan", name, out)
		}
		out, _ = e.ok(append(tt.args, "--dry-run", "--json")...)
		var plan txn.Plan
		if err := json.Unmarshal([]byte(out), &plan); err != nil {
			t.Fatalf("%s --dry-run --json: %v\n%s", name, err, out)
		}
		got := changes(plan)
		if plan.Schema != txn.Schema || !slices.Equal(got, tt.want) {
			t.Errorf("%s --dry-run --json: schema %q, changes %q; want %q, %q", name, plan.Schema, got, txn.Schema, tt.want)
		}
		if strings.HasPrefix(tt.args[0], "install") && tt.args[1] == "tool" && plan.Download == 0 {
			t.Errorf("%s --dry-run: downloads %d bytes, want the archives' sizes", name, plan.Download)
		}
		sameTrees(t, name+" --dry-run", before)
	}
	// Offline, the plan is refused as the change would be, for the archives not cached.
	before := map[string]map[string]string{e.root: snapshot(t, e.root), e.cache: snapshot(t, e.cache)}
	if _, stderr, code := e.pkg("--offline", "install", "--dry-run", "tool"); code != 1 || !strings.Contains(stderr, "pkg: offline: not in the cache: dep 1, tool 1\n") {
		t.Errorf("offline install --dry-run of what is not cached: exit %d, %q", code, stderr)
	}
	sameTrees(t, "offline install --dry-run", before)
	// A tree deleted by hand is put back by a sync: a reinstall.
	if err := os.RemoveAll(filepath.Join(e.root, "pkgs", "app")); err != nil {
		t.Fatal(err)
	}
	out, _ := e.ok("sync", "-f", lock, "--keep-extra", "--dry-run", "--json")
	var plan txn.Plan
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatal(err)
	}
	if got, want := changes(plan), []string{"install dep 1 (in the lockfile)", "reinstall app 1 (in the lockfile)", "install tool 1 (in the lockfile)"}; !slices.Equal(got, want) {
		t.Errorf("sync --dry-run with app's tree deleted: %q, want %q", got, want)
	}
	if out, _ := e.ok("list"); strings.Contains(out, "tool") || !strings.Contains(out, "app") {
		t.Errorf("list after the dry runs: %q", out)
	}
}

// TestDryRunNothingYet: a dry run where there is no root and no cache yet makes neither.
func TestDryRunNothingYet(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "tool", "1")
	e := newEnv(t, base, dir)
	out, _ := e.ok("install", "--dry-run", "tool")
	if !strings.Contains(out, "install tool 1 (requested;") {
		t.Errorf("install --dry-run into no root: %q", out)
	}
	for _, d := range []string{e.root, e.cache} {
		if _, err := os.Lstat(d); !os.IsNotExist(err) {
			t.Errorf("%s after a dry run: %v, want it not made", d, err)
		}
	}
	if _, stderr, code := e.pkg("install", "--json", "tool"); code != 2 || !strings.Contains(stderr, "--dry-run") {
		t.Errorf("install --json without --dry-run: exit %d, %q", code, stderr)
	}
}

// TestDryRunChecks has a dry run refuse what the change would refuse on the index and the
// root alone, and the change refuse it before downloading anything: a command another
// package provides, a directory in pkgs/ or a command in bin/ that pkg did not make, a
// removal that breaks a dependency, a sync that breaks a package it keeps. Each leaves the
// root and the cache as they were.
func TestDryRunChecks(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "tool-a", "1")
	archive := pax(t, td("bin/"), moded(tf("bin/tool-b", "#!/bin/sh\n"), 0o755))
	addHostile(t, base, repo.Package{Name: "tool-b", Version: "1", Bin: testrepo.Commands("tool-a=bin/tool-b")}, archive)
	addPackage(t, dir, "lib", "1")
	addPackage(t, dir, "app", "1", "lib<2")
	addPackage(t, dir, "stray", "1")
	addPackage(t, dir, "cmd", "1")
	e := newEnv(t, base, dir)
	e.ok("install", "tool-a", "app")
	lock := filepath.Join(base, "pkg.lock")
	addPackage(t, dir, "lib", "2")
	e.ok("lock", "-o", lock, "lib@2")
	if err := os.Mkdir(filepath.Join(e.root, "pkgs", "stray"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.root, "bin", "cmd"), []byte("mine\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"install", "tool-b"}, `install tool-b 1: command "tool-a" is already provided by package tool-a`},
		{[]string{"install", "stray"}, "install stray 1: " + filepath.Join(e.root, "pkgs", "stray") + " exists and is not managed by pkg"},
		{[]string{"install", "cmd"}, "install cmd 1: command " + filepath.Join(e.root, "bin", "cmd") + " exists and is not managed by pkg"},
		{[]string{"remove", "lib"}, "remove lib: app 1 depends on it"},
		{[]string{"sync", "-f", lock, "--keep-extra"}, "install lib 2: app 1 depends on lib<2"},
	} {
		for _, dry := range []bool{true, false} {
			args := tt.args
			if dry {
				args = append(slices.Clone(args), "--dry-run")
			}
			before := map[string]map[string]string{e.root: snapshot(t, e.root), e.cache: snapshot(t, e.cache)}
			_, stderr, code := e.pkg(args...)
			if code != 1 || !strings.Contains(stderr, "pkg: "+tt.want) {
				t.Errorf("%s: exit %d, %q; want 1 and %q", strings.Join(args, " "), code, stderr, tt.want)
			}
			sameTrees(t, strings.Join(args, " "), before) // nothing downloaded
		}
	}
}

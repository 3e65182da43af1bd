package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"pkg/pkgtest/testrepo"
	"slices"
	"strings"
	"syscall"
	"testing"

	"pkg/internal/testfs"

	"pkg/repo"
)

// TestCommandClashInOneInstall installs two packages that both provide command x in one
// command: it must fail naming both, and change nothing.
func TestCommandClashInOneInstall(t *testing.T) {
	base := t.TempDir()
	for _, name := range []string{"left", "right"} {
		archive := pax(t, td("bin/"), tf("bin/x", "#!/bin/sh\necho "+name+"\n"))
		addHostile(t, base, repo.Package{Name: name, Version: "1", Bin: testrepo.Commands("bin/x")}, archive)
	}
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.initRoot()
	before := rootTree(t, e.root)
	_, stderr, code := e.pkg("install", "left", "right")
	if code != 1 || !strings.Contains(stderr, `install right 1: command "x" is also provided by left, installed with it`) {
		t.Fatalf("install left right: exit %d, stderr %q; want a clash naming both", code, stderr)
	}
	testfs.SameTree(t, "root", rootTree(t, e.root), before)
	if _, err := os.Lstat(filepath.Join(e.root, "bin", "x")); !os.IsNotExist(err) {
		t.Errorf("bin/x after the refused install: %v", err)
	}
}

// TestRemoveLinkFails removes a package whose command (its file in the prefix, bin/hello)
// cannot be deleted (bin/ made immutable): the remove is committed all the same, says so
// and what to do, and exits 1; verify says the same and checks nothing, and the first
// once bin/ can be changed removes the stale file.
func TestRemoveLinkFails(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	e.ok("install", "hello")
	bin := filepath.Join(e.root, "bin")
	mutable := immutable(t, bin)

	out, stderr, code := e.pkg("remove", "hello")
	unlinked := "pkg: the last change is recorded, but the links of its files in " + e.root + " are not all in place yet: "
	finish := "pkg: hint: once what stopped it is fixed, run '" + e.cmd("verify") + "': it puts the rest of the links in place first"
	if code != 1 || out != "removed hello 1.2.0\nlibgreet 1.0.0 is no longer needed by another package ('"+e.cmd("autoremove")+"' removes what is no longer needed)\n" ||
		!strings.Contains(stderr, unlinked) || !strings.Contains(stderr, finish) {
		t.Errorf("remove with bin/ immutable: exit %d, %q, %q", code, out, stderr)
	}
	if got := e.installed(); got != "libgreet 1.0.0" {
		t.Errorf("after the remove: installed %q", got)
	}
	out, stderr, code = e.pkg("verify")
	if code != 1 || out != "" || !strings.Contains(stderr, unlinked) || !strings.Contains(stderr, finish) {
		t.Errorf("verify with a stale link it cannot remove: exit %d, %q, %q; want exit 1, %q and %q", code, out, stderr, unlinked, finish)
	}

	mutable()
	if _, stderr := e.ok("verify"); stderr != "" {
		t.Errorf("verify once bin/ can be changed: %q", stderr)
	}
	if _, err := os.Lstat(filepath.Join(bin, "hello")); !os.IsNotExist(err) {
		t.Errorf("stale link bin/hello: %v", err)
	}
}

// TestReinstallRestoresLink follows verify's advice for a command changed by hand
// (bin/hello, the package's own file in the prefix): install --reinstall puts the
// package's file back. A file of the user's in its place is theirs: the reinstall keeps
// it in .pkg/saved, says so, and puts the package's back.
func TestReinstallRestoresLink(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	e.ok("install", "hello")
	link := filepath.Join(e.root, "bin", "hello")
	same := func() bool {
		var a, b syscall.Stat_t
		return syscall.Lstat(link, &a) == nil && syscall.Lstat(filepath.Join(e.root, "pkgs", "hello", "bin", "hello"), &b) == nil && a.Ino == b.Ino
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/bin/false", link); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := e.pkg("verify")
	if code != 1 || !strings.Contains(stderr, "'"+e.cmd("install --reinstall hello")+"' restores") {
		t.Fatalf("verify with bin/hello changed: exit %d, %q", code, stderr)
	}
	e.ok("install", "--reinstall", "hello")
	if !same() {
		t.Error("bin/hello after the reinstall is not the package's file")
	}
	e.ok("verify")

	// A file of the user's in the place of the command is theirs: kept.
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(link, []byte("wrapper\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, _, code := e.pkg("verify")
	if code != 1 || !strings.Contains(out, "modified "+link+" (in the root's prefix)") {
		t.Errorf("verify with a file of the user's as bin/hello: exit %d, %q", code, out)
	}
	if _, stderr := e.ok("install", "--reinstall", "hello"); !strings.Contains(stderr, "bin/hello") || !strings.Contains(stderr, ".pkg/saved") {
		t.Errorf("reinstall over a file of the user's: %q, want it kept in .pkg/saved", stderr)
	}
	if !same() {
		t.Error("bin/hello after the reinstall is not the package's file")
	}
	kept, _ := filepath.Glob(filepath.Join(e.root, ".pkg", "saved", "hello-1.2.0-root.*", "bin", "hello")) // and the symlink before
	if !slices.ContainsFunc(kept, func(k string) bool { b, err := os.ReadFile(k); return err == nil && string(b) == "wrapper\n" }) {
		t.Errorf("the user's bin/hello not kept: %q", kept)
	}

	e.ok("remove", "hello")
	if err := os.WriteFile(link, []byte("mine\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = e.pkg("install", "hello")
	if want := "command " + link + " exists and is not managed by pkg: remove or rename it, then try again"; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("install over a file of the user's: exit %d, %q; want %q", code, stderr, want)
	}
	if b, err := os.ReadFile(link); err != nil || string(b) != "mine\n" {
		t.Errorf("the user's file: %q, %v", b, err)
	}
}

// immutable makes path immutable (chattr +i), which even root cannot change, until t ends or
// the function it returns is called.
func immutable(t *testing.T, path string) (undo func()) {
	t.Helper()
	if _, err := exec.LookPath("chattr"); err != nil || os.Geteuid() != 0 {
		testfs.Unavailable(t, "chattr and root needed")
	}
	if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
		testfs.Unavailable(t, fmt.Sprintf("chattr +i %s: %v: %s", path, err, out))
	}
	undo = func() { exec.Command("chattr", "-i", path).Run() }
	t.Cleanup(undo)
	return undo
}

// TestLeftoverKept leaves in the trash a tree pkg cannot delete (immutable): commands warn
// and go on, and once it can be deleted the next command deletes it and says so.
func TestLeftoverKept(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	e.ok("install", "libgreet")
	stuck := filepath.Join(e.root, ".pkg", "trash", "old.1")
	if err := os.MkdirAll(stuck, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stuck, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	deletable := immutable(t, stuck)
	out, stderr := e.ok("install", "hello")
	if !strings.Contains(out, "installed hello") || !strings.Contains(stderr, "pkg: warning: could not delete what an earlier command left behind") ||
		strings.Contains(stderr, "deleted") {
		t.Errorf("install with an undeletable leftover: %q, %q", out, stderr)
	}
	deletable()
	if err := os.MkdirAll(filepath.Join(e.root, ".pkg", "staging", "big.7", "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	want := "pkg: note: an earlier pkg command was cut short: deleted the unfinished install of big; deleted the replaced or removed tree of old\n"
	if _, stderr := e.ok("verify"); stderr != want {
		t.Errorf("verify once the leftover can go: %q, want %q", stderr, want)
	}
	if _, err := os.Lstat(stuck); !os.IsNotExist(err) {
		t.Errorf("leftover: %v", err)
	}
}

// TestNamedBin publishes an npm tarball, whose bin is 0644 as npm packs it (npm sets the
// bit at install), with --bin NAME=PATH, and an archive made with tar -C DIR . with
// --bin ./usr/bin/jq, as tar -t lists it: installing links bin/prettier to an executable
// file, the database records it so and verify agrees, and remove takes the command away.
func TestNamedBin(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	npm := filepath.Join(base, "prettier-3.3.3.tar")
	if err := os.WriteFile(npm, pax(t, td("package/"), td("package/bin/"),
		tf("package/bin/prettier.cjs", "#!/bin/sh\necho prettier\n"), tf("package/package.json", "{}\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	jq := filepath.Join(base, "jq-1.7.1.tar")
	if err := os.WriteFile(jq, pax(t, td("./"), td("./usr/"), td("./usr/bin/"),
		moded(tf("./usr/bin/jq", "#!/bin/sh\necho jq\n"), 0o755)), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, base, dir)
	e.ok("repo", "add", dir, npm, "--name", "prettier", "--version", "3.3.3", "--bin", "prettier=package/bin/prettier.cjs")
	e.ok("repo", "add", dir, jq, "--name", "jq", "--version", "1.7.1", "--bin", "./usr/bin/jq")
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := repo.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var bins []string
	for _, p := range ix.Packages {
		for _, b := range p.Bin {
			bins = append(bins, b.String())
		}
	}
	if want := []string{"usr/bin/jq", "prettier=package/bin/prettier.cjs"}; !slices.Equal(bins, want) {
		t.Errorf("index bins %q, want %q", bins, want)
	}

	e.ok("install", "prettier", "jq")
	link := filepath.Join(e.root, "bin", "prettier")
	if got, err := os.Readlink(link); err != nil || got != "../lib/node_modules/prettier/bin/prettier.cjs" {
		t.Errorf("bin/prettier -> %q, %v", got, err)
	}
	if info, err := os.Stat(link); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("bin/prettier leads to %v, %v; want mode 0755", info.Mode(), err)
	}
	for cmd, want := range map[string]string{"prettier": "prettier\n", "jq": "jq\n"} {
		if out, err := exec.Command(filepath.Join(e.root, "bin", cmd)).Output(); err != nil || string(out) != want {
			t.Errorf("running %s: %q, %v", cmd, out, err)
		}
	}
	if out, stderr := e.ok("verify"); out != "verified 2 packages, 3 files\n" || stderr != "" {
		t.Errorf("verify: %q, %q", out, stderr)
	}
	if out, _ := e.ok("info", "prettier"); !strings.Contains(out, "prettier=package/bin/prettier.cjs") {
		t.Errorf("info prettier: %q", out)
	}
	e.ok("remove", "prettier")
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Errorf("bin/prettier after remove: %v", err)
	}
}

// TestBinThroughSymlinkedDir: a command whose path passes through a symlink to a directory
// of the package (c/bin -> realbin) is refused by repo add and a local install, naming that
// symlink and the file's own path, with which it is added, installed and runs.
func TestBinThroughSymlinkedDir(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	e := newEnv(t, base, dir)
	file := writeFile(t, base, "chg-1.0.tar", pax(t, td("c/"), td("c/realbin/"), moded(tf("c/realbin/chg", "#!/bin/sh\necho changed\n"), 0o755), tl("c/bin", "realbin")))
	want := `bin "c/bin/chg" passes through the symlink c/bin: a command's path may not; its file is c/realbin/chg`
	for _, args := range [][]string{{"repo", "add", dir, file, "--name", "chg", "--version", "1.0"}, {"install", file}} {
		_, stderr, code := e.pkg(append(args, "--bin", "c/bin/chg")...)
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("%v --bin c/bin/chg: exit %d, %q; want %q", args[:2], code, stderr, want)
		}
	}
	e.ok("repo", "add", dir, file, "--name", "chg", "--version", "1.0", "--bin", "c/realbin/chg")
	e.ok("install", "chg")
	if out, err := exec.Command(filepath.Join(e.root, "bin", "chg")).Output(); err != nil || string(out) != "changed\n" {
		t.Errorf("bin/chg: %q, %v", out, err)
	}
}

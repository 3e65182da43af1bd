package install

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/internal/testfs"
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
	if p, done, err := r.db.Prefix(); err != nil || p != nil && !done {
		t.Errorf("pending after the remove: %+v, %v", p, err)
	}
	if _, err := os.Lstat(r.path("usr/sub")); err == nil {
		t.Error("the user's symlink usr/sub stays in the prefix, not kept in .pkg/saved")
	}
	checkPrefix(t, r)
}

// TestPrefixRepair: a repair rebuilds the owners of the prefix's paths, the package that
// replaces the other on top, and the next start links again what the prefix lacks,
// keeping a file of the user's that took a package's place.
func TestPrefixRepair(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	cands := map[string][]Candidate{}
	install := func(p repo.Package, files ...string) {
		t.Helper()
		cands[p.Name] = []Candidate{{Package: p, Members: installIn(t, r, base, p, tree(files...))}}
	}
	install(prefixPkg("a", "1"), "etc/x=a", "etc/a=a", "etc/d/f=a")
	install(prefixPkg("b", "1", "a"), "etc/x=b")
	r.Close()
	must(t, os.Remove(filepath.Join(dir, "etc/a")))
	must(t, os.Remove(filepath.Join(dir, "etc/x")))
	must(t, os.WriteFile(filepath.Join(dir, "etc/x"), []byte("the user's"), 0o644))
	must(t, os.RemoveAll(filepath.Join(dir, "etc/d")))
	if _, err := Rebuild(context.Background(), dir, Options{}, func(name string) ([]Candidate, error) { return cands[name], nil }); err != nil {
		t.Fatal(err)
	}
	r = openRoot(t, dir)
	defer r.Close()
	if b, _ := os.ReadFile(filepath.Join(dir, "etc/x")); string(b) != "b" {
		t.Errorf("etc/x = %q after the repair, want b's", b)
	}
	checkPrefix(t, r)
}

// TestPrefixSymlinkDir: a package's symlink where another package's members would go
// through it is a conflict, installed before, after or with it, and nothing is written
// through it.
func TestPrefixSymlinkDir(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, prefixPkg("a", "1"), tree("usr/lib64->lib", "usr/lib/y=a"))}, nil); err != nil {
		t.Fatal(err)
	}
	var ce *ConflictError
	s := stageIn(t, r, base, prefixPkg("b", "1"), tree("usr/lib64/x=b"))
	if _, err := r.Apply(context.Background(), []*Staged{s}, nil); !errors.As(err, &ce) || ce.Path != "usr/lib64" {
		t.Errorf("b through a's symlink = %v, want a ConflictError on usr/lib64", err)
	}
	must(t, r.uninstall("a"))
	s1 := stageIn(t, r, base, prefixPkg("b", "1"), tree("usr/lib64/x=b"))
	s2 := stageIn(t, r, base, prefixPkg("c", "1"), tree("usr/lib64->lib"))
	if _, err := r.Apply(context.Background(), []*Staged{s1, s2}, nil); !errors.As(err, &ce) || ce.Path != "usr/lib64" {
		t.Errorf("b and a symlink in one change = %v, want a ConflictError on usr/lib64", err)
	}
	if _, err := os.Lstat(r.path("usr/lib/x")); err == nil {
		t.Error("usr/lib/x written through a symlink")
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

// TestPrefixKept: a change made while a roll-forward a start could not finish is
// still owed does not lose it: once what stopped it is gone, the prefix is what the
// records say.
func TestPrefixKept(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chattr +i needs root")
	}
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, prefixPkg("a", "1"), tree("usr/x=1", "usr/y=1"))}, nil); err != nil {
		t.Fatal(err)
	}
	testHookRecorded = func() bool { return true }
	_, err := r.Apply(context.Background(), nil, []string{"a"})
	testHookRecorded = nil
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	mutable := immutable(t, filepath.Join(dir, "usr/y"))
	r = openRoot(t, dir)
	if r.Links() == nil {
		t.Fatal("the roll-forward did not fail")
	}
	_, err = r.Apply(context.Background(), []*Staged{stageIn(t, r, base, prefixPkg("b", "1"), tree("opt/b=1"))}, nil)
	if le := new(LinksError); err == nil || errors.As(err, &le) || !strings.Contains(err.Error(), "usr/y") {
		t.Errorf("Apply while a roll-forward is owed = %v, want a refusal naming usr/y, not a *LinksError (committed)", err)
	}
	if _, err := r.db.Get("b"); err == nil {
		t.Error("b was recorded")
	}
	r.Close()
	mutable()
	r = openRoot(t, dir)
	defer r.Close()
	if err := r.Links(); err != nil {
		t.Fatal(err)
	}
	checkPrefix(t, r)
}

// TestVerifyLinksPending: Verify checks nothing while the last change's links into the
// prefix are still to make, which would all be missing, and says why: ErrNotLinked
// where the roll-forward has not run (a change cut short after its records, read with the
// lock it left or without one), the *LinksError, with its cause, where Open ran it and
// could not finish; once Open finishes it, Verify finds the root whole.
func TestVerifyLinksPending(t *testing.T) {
	_, dir, r := linksOwed(t)
	if problems, err := r.Verify(); len(problems) > 0 || !errors.Is(err, ErrNotLinked) {
		t.Errorf("Verify with the roll-forward not run = %v, %v; want nothing found and ErrNotLinked", problems, err)
	}
	r.Close()
	ro, err := OpenReadOnly(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if problems, err := ro.Verify(); len(problems) > 0 || !errors.Is(err, ErrNotLinked) {
		t.Errorf("Verify without the lock = %v, %v; want nothing found and ErrNotLinked", problems, err)
	}
	ro.Close()

	mutable := immutable(t, filepath.Join(dir, "usr"))
	r = openRoot(t, dir)
	problems, err := r.Verify()
	if le := new(LinksError); len(problems) > 0 || !errors.As(err, &le) || !le.Prefix || !errors.Is(err, unix.EPERM) {
		t.Errorf("Verify once Open's roll-forward failed = %v, %v; want nothing found and its *LinksError (Prefix, EPERM)", problems, err)
	}
	r.Close()
	mutable()
	r = openRoot(t, dir)
	defer r.Close()
	if problems, err := r.Verify(); len(problems) > 0 || err != nil {
		t.Errorf("Verify once Open finished the roll-forward = %v, %v", problems, err)
	}
}

// TestPrefixWrapperUnder: the wrapper of a command whose member bin/CMD another package's
// replaces (on top of the stack) does not take that package's file's place.
func TestPrefixWrapperUnder(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	a := prefixPkg("a", "1")
	a.Bin = testrepo.Commands("tool=bin/tool")
	a.Lib = []string{"lib"}
	if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, a, tree("bin/tool=a", "lib/liba.so.1=a"))}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, prefixPkg("b", "1", "a"), tree("bin/tool=b"))}, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(r.path("bin/tool")); string(b) != "b" {
		t.Errorf("bin/tool = %q, want b's file", b)
	}
	checkPrefix(t, r)
	must(t, r.uninstall("b"))
	if b, _ := os.ReadFile(r.path("bin/tool")); !strings.HasPrefix(string(b), wrapperHead) {
		t.Errorf("bin/tool = %q once b is gone, want a's wrapper", b)
	}
	if problems, err := r.Verify(); err != nil || len(problems) > 0 {
		t.Errorf("Verify: %v, %v", problems, err)
	}
}

// TestRepairCutKeepsTrees: a repair cut short once the rebuilt database took the old one's
// place leaves no intent kept as a name against it: one the old database's last commit
// made void (left by a crash before its removal) would be pending against the new one,
// whose next start would then put back a tree that was never swapped, and delete it.
func TestRepairCutKeepsTrees(t *testing.T) {
	base := testfs.Mount(t, "xfs")
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	p := prefixPkg("a", "1")
	members := installIn(t, r, base, p, tree("etc/x=a"))
	// A commit whose intent names a crash left after its records: void against this database.
	ino, _ := r.inode(treeOf("a"))
	must(t, r.db.SetIntents([]db.Intent{{Op: "install", Name: "a", Inode: ino, Staging: ".pkg/staging/a.1"}}))
	names, _ := filepath.Glob(filepath.Join(dir, ".pkg", intentNames, "*"))
	recs, lists, err := r.db.Installed("a")
	if err != nil || len(names) == 0 {
		t.Fatalf("intents not kept as names on XFS: %v, %v", names, err)
	}
	fl, err := r.db.WriteFiles(slices.Values(lists[0]))
	if err != nil {
		t.Fatal(err)
	}
	must(t, r.db.CommitRequested([]*db.Record{&recs[0]}, []*db.FileList{fl}, nil, nil, nil))
	r.Close() // which waits for the commit's removal of the names
	for _, n := range names {
		must(t, os.WriteFile(n, nil, 0o644))
	}
	damage(t, dir) // for the repair to replace
	testHookReplaced = func() bool { return true }
	_, err = Rebuild(context.Background(), dir, Options{}, func(string) ([]Candidate, error) { return []Candidate{{Package: p, Members: members}}, nil })
	testHookReplaced = nil
	if err == nil {
		t.Fatal("Rebuild not cut")
	}
	r = openRoot(t, dir)
	defer r.Close()
	if b, err := os.ReadFile(filepath.Join(dir, "pkgs", "a", "etc", "x")); string(b) != "a" {
		t.Fatalf("pkgs/a/etc/x after a repair cut short and a start: %q, %v", b, err)
	}
}

// TestRepairStampsLinked: the files a repair's roll-forward links again (a link changes
// their ctime) are not newer than their package's install time, which verify and salvage
// compare ctimes with.
func TestRepairStampsLinked(t *testing.T) {
	base := testfs.Mount(t, "xfs")
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	p := prefixPkg("a", "1")
	members := installIn(t, r, base, p, tree("etc/x=a"))
	r.Close()
	must(t, os.Remove(filepath.Join(dir, "etc/x")))
	time.Sleep(20 * time.Millisecond) // past the tree's ctime, which the rebuilt record starts from
	if _, err := Rebuild(context.Background(), dir, Options{}, func(string) ([]Candidate, error) { return []Candidate{{Package: p, Members: members}}, nil }); err != nil {
		t.Fatal(err)
	}
	r = openRoot(t, dir)
	defer r.Close()
	rec, err := r.db.Get("a")
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	must(t, unix.Lstat(filepath.Join(dir, "etc/x"), &st))
	if ctime := time.Unix(st.Ctim.Unix()); ctime.After(rec.Installed) {
		t.Errorf("etc/x linked at %v, after a's install time %v", ctime, rec.Installed)
	}
}

// immutable makes path immutable (chattr +i) for the rest of the test, or skips the test
// where it cannot (not root, or a filesystem without the flag), and returns what makes it
// mutable again before that.
func immutable(t *testing.T, path string) (mutable func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("chattr +i needs root")
	}
	if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
		t.Skipf("chattr: %v %s", err, out)
	}
	mutable = func() { must(t, exec.Command("chattr", "-i", path).Run()) }
	t.Cleanup(func() { exec.Command("chattr", "-i", path).Run() })
	return mutable
}

// linksOwed returns a root at dir, under base, open, holding a (usr/x) and b (usr/b/y),
// whose commit of b is recorded and its links into the prefix not made: a change cut
// short after its records (testHookRecorded).
func linksOwed(t *testing.T) (base, dir string, r *Root) {
	t.Helper()
	base = t.TempDir()
	dir = filepath.Join(base, "root")
	r = openRoot(t, dir)
	if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, prefixPkg("a", "1"), tree("usr/x=1"))}, nil); err != nil {
		t.Fatal(err)
	}
	testHookRecorded = func() bool { return true }
	_, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, prefixPkg("b", "1"), tree("usr/b/y=1"))}, nil)
	testHookRecorded = nil
	if err != nil {
		t.Fatal(err)
	}
	return base, dir, r
}

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"pkg/db"
	"pkg/internal/testfs"
)

// TestVerifyCommand installs the demo packages, verifies them, damages one file and checks
// the report and the exit codes.
func TestVerifyCommand(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	e.ok("install", "hello")
	if out, _ := e.ok("verify"); out != "verified 2 packages, 5 files\n" {
		t.Errorf("verify: %q", out)
	}
	if out, _ := e.ok("verify", "hello"); out != "verified 1 package, 3 files\n" {
		t.Errorf("verify hello: %q", out)
	}
	bin := filepath.Join(e.root, "pkgs/hello/bin/hello")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-2] ^= 1
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.root, "pkgs/libgreet/stray"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := e.pkg("verify")
	want := "hello 1.2.0: modified bin/hello (content)\nlibgreet 1.0.0: extra stray\n"
	if code != 1 || out != want || !strings.HasPrefix(stderr, "pkg: verify: 2 problems found; '"+e.cmd("install --reinstall hello libgreet")+"' restores") {
		t.Errorf("verify after damage: exit %d\nstdout %q\nstderr %q\nwant exit 1 and stdout %q", code, out, stderr, want)
	}
	if out, _, code := e.pkg("verify", "libgreet"); code != 1 || out != "libgreet 1.0.0: extra stray\n" {
		t.Errorf("verify libgreet: exit %d, %q", code, out)
	}
	if _, stderr, code := e.pkg("verify", "nosuch"); code != 1 || !strings.Contains(stderr, "verify nosuch: not installed") {
		t.Errorf("verify nosuch: exit %d, %q", code, stderr)
	}
	if _, _, code := e.pkg("verify", "--nope"); code != 2 {
		t.Errorf("verify --nope: exit %d, want 2", code)
	}

	// What verify suggests puts the installed files back, the stray one gone.
	if out, _ := e.ok("install", "--reinstall", "hello", "libgreet"); !strings.Contains(out, "reinstalled hello 1.2.0: 3 files") ||
		!strings.Contains(out, "reinstalled libgreet 1.0.0: 2 files") {
		t.Errorf("install --reinstall: %q", out)
	}
	if out, _ := e.ok("verify"); out != "verified 2 packages, 5 files\n" {
		t.Errorf("verify after reinstall: %q", out)
	}
	if out, _ := e.ok("install", "hello"); out != "hello 1.2.0 is already installed\n" {
		t.Errorf("install of an installed package: %q", out)
	}
	if _, stderr, code := e.pkg("install", "--reinstall", "fortunes"); code != 1 || !strings.Contains(stderr, "reinstall fortunes: not installed") {
		t.Errorf("reinstall of a package not installed: exit %d, %q", code, stderr)
	}
	if _, _, code := e.pkg("install", "--reinstall", "hello>=1"); code != 2 {
		t.Errorf("reinstall with a constraint: exit %d, want 2", code)
	}

	// A package directory replaced by a symlink: the reinstall swaps the link out and
	// unlinks it, leaving its target alone, and the next command starts cleanly.
	pkgDir, elsewhere := filepath.Join(e.root, "pkgs/hello"), filepath.Join(t.TempDir(), "mine")
	if err := os.Rename(pkgDir, elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, pkgDir); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := e.pkg("verify"); code != 1 || !strings.Contains(stderr, "'"+e.cmd("install --reinstall hello")+"' restores") {
		t.Errorf("verify of a symlinked package directory: exit %d, %q", code, stderr)
	}
	e.ok("install", "--reinstall", "hello")
	if out, _ := e.ok("verify"); out != "verified 2 packages, 5 files\n" {
		t.Errorf("verify after reinstalling over a symlink: %q", out)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "bin/hello")); err != nil {
		t.Errorf("the symlink's target: %v", err)
	}
}

// TestReadersChangeNothing checks that list, info and files create no root where there is
// none, and that no command but a commit puts back a command link deleted by hand: verify
// reports it, and reinstalling restores it.
func TestReadersChangeNothing(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	noRoot := "no root at " + e.root
	if out, stderr := e.ok("list"); out != "" || stderr != "pkg: note: nothing is installed: "+noRoot+"\n" {
		t.Errorf("list without a root: %q, %q", out, stderr)
	}
	if out, _ := e.ok("--quiet", "list", "--json"); out != "{\n  \"schema\": \"pkg.list/1\",\n  \"packages\": []\n}\n" {
		t.Errorf("list --json without a root: %q", out)
	}
	if out, _ := e.ok("info", "hello"); !strings.Contains(out, "installed: no ('"+e.cmd("install hello")+"' installs it)\n") {
		t.Errorf("info without a root: %q, want the repository's hello, not installed", out)
	}
	for _, args := range [][]string{{"files", "hello"}} {
		if _, stderr, code := e.pkg(args...); code != 1 || !strings.Contains(stderr, args[0]+" hello: not installed: "+noRoot+"\n") {
			t.Errorf("%s without a root: exit %d, %q", args[0], code, stderr)
		}
	}
	for _, args := range [][]string{{"verify"}, {"remove", "hello"}, {"upgrade"}, {"cache", "prune"}} {
		if _, stderr, code := e.pkg(args...); code != 1 || !strings.Contains(stderr, noRoot+": nothing was ever installed there") {
			t.Errorf("%s without a root: exit %d, %q", strings.Join(args, " "), code, stderr)
		}
	}
	if _, err := os.Stat(e.root); !os.IsNotExist(err) {
		t.Fatalf("the readers created the root: %v", err)
	}

	e.ok("install", "hello")
	link := filepath.Join(e.root, "bin", "hello")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	e.ok("list")
	out, _, code := e.pkg("verify")
	if code != 1 || !strings.Contains(out, "hello 1.2.0: missing "+link+" (in the root's prefix)") {
		t.Errorf("verify of a deleted link: exit %d, %q", code, out)
	}
	e.ok("install", "--reinstall", "hello")
	if _, err := os.Lstat(link); err != nil {
		t.Errorf("reinstall did not restore bin/hello: %v", err)
	}
	e.ok("verify")
}

// TestReadOnlyRoot checks a root on a read-only filesystem: verify and list work, and a
// change is refused saying why and what to do, its dry run too, as is a new root there.
func TestReadOnlyRoot(t *testing.T) {
	mnt := testfs.Tmpfs(t, 16<<20)
	e := newEnv(t, t.TempDir(), demoRepo)
	e.root = mnt
	e.ok("install", "hello")
	lock := filepath.Join(t.TempDir(), "pkg.lock")
	e.ok("lock", "-o", lock, "hello")
	if out, err := exec.Command("mount", "-o", "remount,ro", mnt).CombinedOutput(); err != nil {
		t.Fatalf("remount ro: %v: %s", err, out)
	}
	if out, stderr := e.ok("verify"); out != "verified 2 packages, 5 files\n" || stderr != "" {
		t.Errorf("verify of a read-only root: %q, %q", out, stderr)
	}
	if out, _ := e.ok("list"); !strings.HasPrefix(out, "hello ") {
		t.Errorf("list of a read-only root: %q", out)
	}
	// A dry run fails as the change does: its plan could not be carried out.
	for _, args := range [][]string{{"install", "fortunes"}, {"install", "-n", "fortunes"}, {"remove", "-n", "hello"},
		{"upgrade", "-n"}, {"autoremove", "-n"}, {"install", "--reinstall", "-n", "hello"}, {"sync", "-n", "-f", lock}} {
		out, stderr, code := e.pkg(args...)
		if want := "pkg: root " + mnt + " is on a read-only filesystem: "; code != 1 || out != "" || !strings.Contains(stderr, want) ||
			!strings.Contains(stderr, "pkg: hint: remount it read-write") {
			t.Errorf("%v in a read-only root: exit %d, %q, %q; want %q and a hint", args, code, out, stderr, want)
		}
	}
	// A new root beneath it: the change cannot make it.
	e.root = filepath.Join(mnt, "new")
	for _, args := range [][]string{{"install", "hello"}, {"install", "-n", "hello"}} {
		_, stderr, code := e.pkg(args...)
		if want := "pkg: root " + e.root + " is on a read-only filesystem: "; code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("%v in a new root on a read-only filesystem: exit %d, %q; want %q", args, code, stderr, want)
		}
	}
}

// TestListAfterCutShort lists a root a command was killed in the middle of changing: list
// says so, and no longer once the next command that locks the root has undone the change.
func TestListAfterCutShort(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	e.ok("install", "hello")
	d, err := db.Open(filepath.Join(e.root, ".pkg", "db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A remove killed after its intent, before it moved the tree.
	if err := d.SetIntents([]db.Intent{{Op: "remove", Name: "hello", Staging: ".pkg/trash/hello.1"}}); err != nil {
		t.Fatal(err)
	}
	if _, stderr := e.ok("list"); !strings.Contains(stderr, "a pkg command did not finish changing "+e.root+" (it was cut short, or failed)") {
		t.Errorf("list with an intent pending: %q", stderr)
	}
	e.ok("verify")
	if _, stderr := e.ok("list"); stderr != "" {
		t.Errorf("list once verify undid the change: %q", stderr)
	}
}

// TestVerifyFull damages, on XFS, a file whose data install cloned, in its cloned part, and
// checks that verify reports it with and without --full, that an entry gone from the cache
// leaves verify hashing, and that verify makes no cache.
func TestVerifyFull(t *testing.T) {
	e := newEnv(t, testfs.Mount(t, "xfs"), demoRepo)
	e.ok("install", "hello")
	for _, args := range [][]string{{"verify"}, {"verify", "--full"}} {
		if out, _ := e.ok(args...); out != "verified 2 packages, 5 files\n" {
			t.Errorf("%v: %q", args, out)
		}
	}
	book := filepath.Join(e.root, "pkgs/libgreet/share/libgreet/phrasebook")
	flip := func() {
		f, err := os.OpenFile(book, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b := make([]byte, 1)
		if _, err := f.ReadAt(b, 100); err != nil {
			t.Fatal(err)
		}
		b[0] ^= 1
		if _, err := f.WriteAt(b, 100); err != nil {
			t.Fatal(err)
		}
	}
	flip()
	want := "libgreet 1.0.0: modified share/libgreet/phrasebook (content)\n"
	for _, args := range [][]string{{"verify"}, {"verify", "--full"}} {
		if out, _, code := e.pkg(args...); code != 1 || out != want {
			t.Errorf("%v of a changed cloned byte: exit %d, %q; want 1, %q", args, code, out, want)
		}
	}
	flip() // back as it was, on blocks of its own
	if out, _ := e.ok("verify"); out != "verified 2 packages, 5 files\n" {
		t.Errorf("verify of the file changed back: %q", out)
	}
	if err := os.RemoveAll(e.cache); err != nil {
		t.Fatal(err)
	}
	flip()
	if out, _, code := e.pkg("verify"); code != 1 || out != want {
		t.Errorf("verify without the cache: exit %d, %q; want 1, %q", code, out, want)
	}
	if _, err := os.Stat(e.cache); !os.IsNotExist(err) {
		t.Errorf("verify made the cache: %v", err)
	}
}

// TestFirstInstallCutShort gives a root what a first install killed between moving its
// trees into pkgs/ and recording them leaves: trees and their intents, no database. No
// command says nothing was ever installed there: list shows nothing, saying a change was
// cut short; files names what undoes it; verify and remove, which lock the root, undo it.
func TestFirstInstallCutShort(t *testing.T) {
	e := newEnv(t, testfs.Mount(t, "xfs"), demoRepo) // intents kept as names
	cutShort := func() {
		t.Helper()
		e.initRoot()
		tree := filepath.Join(e.root, "pkgs", "hello")
		if err := os.MkdirAll(filepath.Join(tree, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tree, "bin", "hello"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		var st syscall.Stat_t
		if err := syscall.Stat(tree, &st); err != nil {
			t.Fatal(err)
		}
		d, err := db.Open(filepath.Join(e.root, ".pkg", "db"), db.Options{})
		if err == nil {
			err = d.SetIntents([]db.Intent{{Op: "install", Name: "hello", Staging: ".pkg/staging/hello.1", Inode: st.Ino}})
		}
		if err != nil {
			t.Fatal(err)
		}
		d.Release()
		for _, name := range []string{"db", "db.sum", "db.new"} { // it held no commit: the crash took it
			if err := os.Remove(filepath.Join(e.root, ".pkg", name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
		}
	}
	undone := func(what string) {
		t.Helper()
		if _, err := os.Lstat(filepath.Join(e.root, "pkgs", "hello")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("pkgs/hello after %s: %v, want it undone", what, err)
		}
	}
	const never = "nothing was ever installed"

	cutShort()
	out, stderr, code := e.pkg("list")
	if code != 0 || out != "" || strings.Contains(stderr, never) || !strings.Contains(stderr, "a pkg command did not finish changing "+e.root) {
		t.Errorf("list: exit %d, %q, %q", code, out, stderr)
	}
	_, stderr, code = e.pkg("files", "hello")
	if code != 1 || strings.Contains(stderr, never) || !strings.Contains(stderr, "was cut short") || !strings.Contains(stderr, "pkg: hint: '"+e.cmd("verify")+"' undoes it") {
		t.Errorf("files hello: exit %d, %q", code, stderr)
	}
	out, stderr, code = e.pkg("verify")
	if code != 0 || out != "verified 0 packages, 0 files\n" || !strings.Contains(stderr, "pkg: note: an earlier pkg command was cut short: ") {
		t.Errorf("verify: exit %d, %q, %q", code, out, stderr)
	}
	undone("verify")

	// A repair finds no database to repair, nor installed packages: it undoes the change,
	// recording nothing, rather than record the tree the change moved into pkgs/.
	if err := os.RemoveAll(filepath.Join(e.root)); err != nil {
		t.Fatal(err)
	}
	cutShort()
	out, stderr, code = e.pkg("verify", "--repair")
	if code != 0 || !strings.HasPrefix(out, "nothing to repair: ") || !strings.HasSuffix(out, "verified 0 packages, 0 files\n") ||
		!strings.Contains(stderr, "pkg: note: an earlier pkg command was cut short: undid an interrupted install of hello") {
		t.Errorf("verify --repair: exit %d, %q, %q", code, out, stderr)
	}
	undone("verify --repair")

	if err := os.RemoveAll(filepath.Join(e.root)); err != nil {
		t.Fatal(err)
	}
	cutShort()
	_, stderr, code = e.pkg("remove", "hello")
	if code != 1 || strings.Contains(stderr, never) || !strings.Contains(stderr, "pkg: note: an earlier pkg command was cut short: ") ||
		!strings.Contains(stderr, "pkg: remove hello: not installed") {
		t.Errorf("remove hello: exit %d, %q", code, stderr)
	}
	undone("remove")

	// An install, which reads the root's pins before it locks it, undoes the change and
	// installs; so does its dry run, which changes nothing.
	if err := os.RemoveAll(filepath.Join(e.root)); err != nil {
		t.Fatal(err)
	}
	cutShort()
	if out, stderr, code := e.pkg("install", "-n", "hello"); code != 0 || !strings.Contains(out, "install hello") {
		t.Errorf("install -n hello: exit %d, %q, %q", code, out, stderr)
	}
	_, stderr, code = e.pkg("install", "hello")
	if code != 0 || !strings.Contains(stderr, "pkg: note: an earlier pkg command was cut short: ") || e.installed() != "hello 1.2.0, libgreet 1.0.0" {
		t.Errorf("install hello: exit %d, %q; installed %q", code, stderr, e.installed())
	}
}

// TestFirstInstallCutShortStaging gives a root what a first install killed while it staged
// leaves: the database it created still db.new, a tree in staging, no intents. list says
// a change was cut short, and verify, rather than refusing a root where nothing was ever
// installed, deletes the tree and checks the empty root.
func TestFirstInstallCutShortStaging(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	e.initRoot()
	if err := os.Rename(filepath.Join(e.root, ".pkg", "db"), filepath.Join(e.root, ".pkg", "db.new")); err != nil {
		t.Fatal(err)
	}
	tree := filepath.Join(e.root, ".pkg", "staging", "hello.1")
	if err := os.MkdirAll(filepath.Join(tree, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "bin", "hello"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	const never = "nothing was ever installed"
	if out, stderr, code := e.pkg("list"); code != 0 || out != "" || !strings.Contains(stderr, "a pkg command did not finish changing "+e.root) {
		t.Errorf("list: exit %d, %q, %q", code, out, stderr)
	}
	out, stderr, code := e.pkg("verify")
	if code != 0 || out != "verified 0 packages, 0 files\n" || strings.Contains(stderr, never) ||
		!strings.Contains(stderr, "pkg: note: an earlier pkg command was cut short: deleted the unfinished install of hello") {
		t.Errorf("verify: exit %d, %q, %q", code, out, stderr)
	}
	if _, err := os.Lstat(tree); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the staged tree after verify: %v, want it deleted", err)
	}
}

// TestRepairFirstInstallCutShortStaging repairs a root a first install was killed in
// while it staged (db.new, a tree in staging, no intents): there is no database to
// repair, and the repair says so, undoes the change as any command that locks the root
// does, and leaves .pkg/ as a root where nothing was installed has it, with no warning of
// an old database that never was.
func TestRepairFirstInstallCutShortStaging(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	e.initRoot()
	meta := filepath.Join(e.root, ".pkg")
	empty, err := os.ReadFile(filepath.Join(meta, "db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(meta, "db"), filepath.Join(meta, "db.new")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(meta, "staging", "hello.1", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := e.pkg("verify", "--repair")
	want := "nothing to repair: no package was ever recorded in " + e.root + " (its first change was cut short, and is undone)\nverified 0 packages, 0 files\n"
	if code != 0 || out != want || strings.Contains(stderr, "old database") ||
		!strings.Contains(stderr, "pkg: note: an earlier pkg command was cut short: deleted the unfinished install of hello") {
		t.Errorf("verify --repair: exit %d, %q, %q; want stdout %q", code, out, stderr, want)
	}
	ents, err := os.ReadDir(meta)
	if err != nil {
		t.Fatal(err)
	}
	clean := []string{"db", "db.sum", "lock", "staging", "trash"} // db.sum once a note is remembered
	for _, ent := range ents {
		if !slices.Contains(clean, ent.Name()) {
			t.Errorf(".pkg after verify --repair holds %s, which a root where nothing was installed has not", ent.Name())
		}
	}
	if ents, err := os.ReadDir(filepath.Join(meta, "staging")); err != nil || len(ents) != 0 {
		t.Errorf("staging after verify --repair: %v, %v; want it empty", ents, err)
	}
	// What an older pkg's repair left: the empty db.new beside the database, which the
	// next command that locks the root removes.
	if err := os.WriteFile(filepath.Join(meta, "db.new"), empty, 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok("install", "hello")
	if e.installed() != "hello 1.2.0, libgreet 1.0.0" {
		t.Errorf("installed after the repair: %q", e.installed())
	}
	if _, err := os.Lstat(filepath.Join(meta, "db.new")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("db.new beside the database after an install: %v; want it removed", err)
	}
}

// TestRepairSaysWhatItUndid repairs a root whose database is sound and whose staging
// holds a tree a command cut short left: the repair, which deletes it, says so, as any
// command that opens the root does.
func TestRepairSaysWhatItUndid(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	e.ok("install", "hello")
	if err := os.MkdirAll(filepath.Join(e.root, ".pkg", "staging", "libgreet.1", "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, stderr := e.ok("verify", "--repair")
	if !strings.HasPrefix(out, "the database is not damaged") ||
		!strings.Contains(stderr, "pkg: note: an earlier pkg command was cut short: deleted the unfinished install of libgreet") {
		t.Errorf("verify --repair: %q, %q", out, stderr)
	}
}

// TestPrefixLinksFull installs a package into a root whose filesystem (a tmpfs short of
// inodes) holds its staged tree and not its links into the root: the install is committed
// and recorded, and says so, and that 'pkg verify' finishes the links once space is freed;
// verify says the same until then, rather than listing every path missing; one verify
// once space is freed makes every link.
func TestPrefixLinksFull(t *testing.T) {
	mnt := testfs.Tmpfs(t, 64<<20, "nr_inodes=200")
	e := newEnv(t, t.TempDir(), demoRepo)
	e.root = filepath.Join(mnt, "root")
	e.ok("install", "libgreet")
	e.ok("fetch", "hello")
	var fillers []string
	for i := 0; ; i++ {
		p := filepath.Join(mnt, fmt.Sprintf("filler.%d", i))
		if err := os.WriteFile(p, nil, 0o644); errors.Is(err, syscall.ENOSPC) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		fillers = append(fillers, p)
	}
	// One inode more at a time, until the install commits: its staging then took every
	// inode there was, and its links into the root find none.
	var stderr string
	for !strings.Contains(e.installed(), "hello") {
		if len(fillers) == 0 {
			t.Fatal("the install never committed")
		}
		if err := os.Remove(fillers[0]); err != nil {
			t.Fatal(err)
		}
		fillers = fillers[1:]
		var code int
		if _, stderr, code = e.pkg("install", "hello"); code != 1 {
			t.Fatalf("install on a full filesystem: exit %d, %q", code, stderr)
		}
	}
	want := []string{"pkg: the last change is recorded, but the links of its files in " + e.root + " are not all in place yet: ", "no space left on device",
		"pkg: hint: free space on the filesystem holding " + e.root + ", then run '" + e.cmd("verify") + "': it puts the rest of the links in place first"}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("install committed, its links short of inodes: stderr %q, want %q in it", stderr, w)
		}
	}
	out, stderr, code := e.pkg("verify")
	if code != 1 || out != "" || !strings.Contains(stderr, want[0]) || !strings.Contains(stderr, want[2]) || strings.Contains(stderr, "warning") {
		t.Errorf("verify before space is freed: exit %d, %q, %q; want exit 1, nothing listed, and once %q and %q", code, out, stderr, want[0], want[2])
	}
	for _, p := range fillers {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	if out, stderr := e.ok("verify"); out != "verified 2 packages, 5 files\n" || stderr != "" {
		t.Errorf("verify once space is freed: %q, %q", out, stderr)
	}
	for _, p := range []string{"bin/hello", "share/doc/hello/README", "share/doc/hello/README.txt"} {
		if _, err := os.Lstat(filepath.Join(e.root, p)); err != nil {
			t.Errorf("after one verify: %v", err)
		}
	}
}

// TestVerifyWorldWritablePrefixDir: a directory of the prefix that packages share, made
// writable by anyone (share/ of two packages, 0777), is reported once, under its first
// owner, by verify and verify --full, with the reinstall that takes the others' write
// away again; one with the sticky bit (1777, as tmp/ is) is not.
func TestVerifyWorldWritablePrefixDir(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "app", "1.0")
	addPackage(t, dir, "tool", "1.0")
	e := newEnv(t, base, dir)
	e.ok("install", "app", "tool")
	share := filepath.Join(e.root, "share")
	if err := os.Chmod(share, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"verify"}, {"verify", "--full"}} {
		out, stderr, code := e.pkg(args...)
		if code != 1 || out != "app 1.0: modified "+share+" (mode, in the root's prefix)\n" || !strings.Contains(stderr, e.cmd("install --reinstall app")) {
			t.Errorf("%v with %s made 0777: exit %d\n%s%s", args, share, code, out, stderr)
		}
	}
	e.ok("install", "--reinstall", "app")
	if info, err := os.Stat(share); err != nil || info.Mode().Perm()&0o002 != 0 {
		t.Errorf("%s after the reinstall: %v, %v; want no write for others", share, info.Mode(), err)
	}
	e.ok("verify")
	if err := os.Chmod(share, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	e.ok("verify")
}

// changedDep installs the npm package dep 1.0.0 from a repository that no configuration
// and no PKG_REPO names (its env's --repo alone), and changes one of its files.
func changedDep(t *testing.T) *env {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("PKG_REPO", "")
	base := t.TempDir()
	addNPM(t, base, "dep", "1.0.0")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "dep")
	index := filepath.Join(e.root, "lib/node_modules/.pnpm/dep@1.0.0/node_modules/dep/index.js")
	if err := os.WriteFile(index, []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestVerifyAdviceWithoutRepo: where no repository is in effect (a root synced from a
// lockfile), or the configuration that says which is cannot be read, verify advises the
// reinstall from the cache, --offline, and that advice, followed as given, puts back the
// file changed.
func TestVerifyAdviceWithoutRepo(t *testing.T) {
	e := changedDep(t)
	repoless := func(args ...string) (string, int) {
		var out, stderr bytes.Buffer
		code := run(append([]string{"pkg", "--root", e.root, "--cache", e.cache}, args...), &out, &stderr)
		return stderr.String(), code
	}
	stderr, code := repoless("verify")
	advice := "'pkg --root " + e.root + " --cache " + e.cache + " --offline install --reinstall dep@1.0.0' restores"
	if code != 1 || !strings.Contains(stderr, "with no repository in effect, "+advice) {
		t.Fatalf("verify with no repository: exit %d, %q; want the advice %q", code, stderr, advice)
	}
	if _, stderr, _ := e.pkg("verify"); !strings.Contains(stderr, "; '"+e.cmd("install --reinstall dep@1.0.0")+"' restores") {
		t.Errorf("verify with a repository: %q, want the reinstall from it", stderr)
	}
	config := filepath.Join(e.root, ".pkg", "config.toml")
	if err := os.WriteFile(config, []byte("[repo.team\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Not "with no repository in effect": the configuration may name some, unread.
	if stderr, code := repoless("verify"); code != 1 || !strings.Contains(stderr, "; "+advice) {
		t.Errorf("verify with a configuration it cannot read: exit %d, %q; want the advice %q", code, stderr, "; "+advice)
	}
	if err := os.Remove(config); err != nil {
		t.Fatal(err)
	}
	if stderr, code := repoless("--offline", "install", "--reinstall", "dep@1.0.0"); code != 0 {
		t.Fatalf("the advice followed: exit %d, %s", code, stderr)
	}
	if stderr, code := repoless("verify"); code != 0 {
		t.Errorf("verify after the advice: exit %d, %s", code, stderr)
	}
}

// TestVerifyAdviceUncached: where the cache no longer holds a changed package's archive
// (pruned, or found damaged and removed by the check at its use), verify advises the
// reinstall that fetches it, not the one from the cache, which would refuse it: with no
// repository in effect, from one; run --offline with one, online.
func TestVerifyAdviceUncached(t *testing.T) {
	e := changedDep(t)
	tars, err := filepath.Glob(filepath.Join(e.cache, "tars", "*"))
	if err != nil || len(tars) == 0 {
		t.Fatalf("the cache's entries: %v, %v", tars, err)
	}
	for _, p := range tars {
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
	var out, stderr bytes.Buffer
	code := run([]string{"pkg", "--root", e.root, "--cache", e.cache, "verify"}, &out, &stderr)
	want := "from a repository that offers it: 'pkg --root " + e.root + " --cache " + e.cache + " --repo URL install --reinstall dep@1.0.0'"
	if code != 1 || !strings.Contains(stderr.String(), want) || strings.Contains(stderr.String(), "--offline") {
		t.Errorf("verify with no repository, the archive gone: exit %d, %q; want %q", code, stderr.String(), want)
	}
	if _, stderr, code := e.pkg("--offline", "verify"); code != 1 || !strings.Contains(stderr, "'"+e.cmd("install --reinstall dep@1.0.0")+"' restores") || strings.Contains(stderr, "--offline") {
		t.Errorf("verify --offline, the archive gone: exit %d, %q; want the reinstall online", code, stderr)
	}
	e.ok("install", "--reinstall", "dep@1.0.0") // the advice followed
	e.ok("verify")
}

package install

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"pkg/pkgtest/testrepo"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"pkg/db"
	"pkg/internal/testfs"
	"pkg/repo"
	"pkg/tarutil"
)

// entry is one member of a test archive.
type entry struct {
	name, link string
	typ        byte
	mode       int64
	data       string
}

// alignedTar writes entries as a tar, converts it with tarutil.Align and returns the path.
func alignedTar(t testing.TB, dir string, entries []entry) string {
	t.Helper()
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Linkname: e.link, Typeflag: e.typ, Mode: e.mode, Size: int64(len(e.data))}
		if e.typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.data)); err != nil && h.Size > 0 {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(dir, "aligned-*.tar")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := tarutil.Align(f, &raw, tarutil.Limits{}); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

func version1() []entry {
	return []entry{
		{name: "libexec/", typ: tar.TypeDir, mode: 0o755},
		{name: "libexec/tool", typ: tar.TypeReg, mode: 0o755, data: "#!/bin/sh\necho v1\n"},
		{name: "share/", typ: tar.TypeDir, mode: 0o750},
		{name: "share/big", typ: tar.TypeReg, mode: 0o640, data: strings.Repeat("0123456789abcdef", 1000) + "tail"},
		{name: "share/same", typ: tar.TypeLink, link: "share/big"},
		{name: "share/latest", typ: tar.TypeSymlink, link: "big"},
		{name: "ro/", typ: tar.TypeDir, mode: 0o555},
	}
}

func version2() []entry {
	return []entry{
		{name: "libexec/tool", typ: tar.TypeReg, mode: 0o755, data: "#!/bin/sh\necho v2\n"},
	}
}

// under returns es, each member under the directory top, which it starts with: a tree
// of its own in the prefix.
func under(top string, es []entry) []entry {
	out := []entry{{name: top + "/", typ: tar.TypeDir, mode: 0o755}}
	for _, e := range es {
		e.name = top + "/" + e.name
		if e.typ == tar.TypeLink {
			e.link = top + "/" + e.link
		}
		out = append(out, e)
	}
	return out
}

func openRoot(t testing.TB, dir string) *Root {
	t.Helper()
	r, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func pkgOf(name, version string) repo.Package {
	return repo.Package{Name: name, Version: version, SHA256: strings.Repeat("a", 64), Bin: testrepo.Commands("tool=libexec/tool")}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestInstallUpgradeRemove(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	res, err := r.installFrom(alignedTar(t, base, version1()), pkgOf("tool", "1"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Commit <= 0 || res.Files != 4 || res.Bytes != 16004+18 || res.Cloned+res.Copied != res.Bytes {
		t.Errorf("result = %+v", res)
	}
	dir := r.pkgDir("tool")
	checks := []struct {
		path string
		mode os.FileMode
	}{{"libexec/tool", 0o755}, {"share", os.ModeDir | 0o750}, {"share/big", 0o640}, {"ro", os.ModeDir | 0o555}}
	for _, c := range checks {
		if info, err := os.Lstat(filepath.Join(dir, c.path)); err != nil || info.Mode() != c.mode {
			t.Errorf("%s: mode %v, %v; want %v", c.path, info.Mode(), err, c.mode)
		}
	}
	if got := readFile(t, filepath.Join(dir, "share/latest")); got != version1()[3].data {
		t.Errorf("share/latest through the symlink: %d bytes", len(got))
	}
	a, _ := os.Stat(filepath.Join(dir, "share/big"))
	b, _ := os.Stat(filepath.Join(dir, "share/same"))
	if !os.SameFile(a, b) {
		t.Error("share/same is not a hardlink of share/big")
	}
	if got := readFile(t, filepath.Join(r.Dir(), "bin/tool")); !strings.Contains(got, "v1") {
		t.Errorf("bin/tool = %q", got)
	}

	res, err = r.installFrom(alignedTar(t, base, version2()), pkgOf("tool", "2"))
	if err != nil || res.Previous != "1" {
		t.Fatalf("upgrade: %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "share")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("share survived the upgrade: %v", err)
	}
	if got := readFile(t, filepath.Join(r.Dir(), "bin/tool")); !strings.Contains(got, "v2") {
		t.Errorf("bin/tool after upgrade = %q", got)
	}
	if err := r.uninstall("tool"); err != nil {
		t.Fatal(err)
	}
	assertEmpty(t, r)
}

// assertEmpty checks that nothing is installed, staged, trashed or linked.
func assertEmpty(t *testing.T, r *Root) {
	t.Helper()
	for _, d := range []string{"pkgs", "bin", ".pkg/staging", ".pkg/trash"} {
		if ents, _ := os.ReadDir(r.path(d)); len(ents) != 0 {
			t.Errorf("%s holds %v", d, ents)
		}
	}
	if ps, _ := r.DB().List(); len(ps) != 0 {
		t.Errorf("database lists %+v", ps)
	}
}

func TestInstallRefusalChangesNothing(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	p := pkgOf("tool", "1")
	p.Bin = testrepo.Commands("bin/missing")
	var be *binError
	if _, err := r.installFrom(alignedTar(t, base, version1()), p); !errors.As(err, &be) || be.Bin != "bin/missing" || !errors.Is(err, errBinNotFile) {
		t.Errorf("install with a missing bin: %v", err)
	}
	p = pkgOf("tool", "1")
	p.Files = 99
	if _, err := r.installFrom(alignedTar(t, base, version1()), p); !errors.Is(err, repo.ErrContents) {
		t.Errorf("install with a wrong file count: %v", err)
	}
	p = pkgOf("tool", "1")
	p.Depends = testrepo.Requires("lib>=2")
	if _, err := r.installFrom(alignedTar(t, base, version1()), p); !errors.Is(err, ErrDependency) {
		t.Errorf("install with a dependency missing: %v", err)
	}
	assertEmpty(t, r)
}

// TestReconcileUndoesInterruptedUpgrade stages version 2, records the intent and swaps it in,
// then stops as a crash would. The next Open must put version 1 back: also when the trees'
// inodes changed meanwhile (the root moved to another filesystem), and when the crash came
// before the swap.
func TestReconcileUndoesInterruptedUpgrade(t *testing.T) {
	sameShape := version1() // version 1's paths, types and sizes, another content
	sameShape[1].data = strings.Replace(sameShape[1].data, "v1", "v3", 1)
	for _, tt := range []struct {
		name         string
		next         []entry
		moved, early bool
	}{
		{"swapped", version2(), false, false},
		{"swapped, moved", version2(), true, false},
		{"not swapped, moved", version2(), true, true},
		{"swapped, moved, same shape", sameShape, true, false},
		{"not swapped, moved, same shape", sameShape, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) { testInterruptedUpgrade(t, tt.next, tt.moved, tt.early) })
	}
}

func testInterruptedUpgrade(t *testing.T, next []entry, moved, early bool) {
	base := t.TempDir()
	rootDir := filepath.Join(base, "root")
	r := openRoot(t, rootDir)
	if _, err := r.installFrom(alignedTar(t, base, version1()), pkgOf("tool", "1")); err != nil {
		t.Fatal(err)
	}
	staging, ino := stageTool(t, r, base, next)
	if moved {
		ino += 1 << 20 // as the inode recorded before a move to another filesystem
	}
	rel := relOf(staging)
	if err := r.db.SetIntents([]db.Intent{{Op: "install", Name: "tool", Staging: rel, Inode: ino}}); err != nil {
		t.Fatal(err)
	}
	if !early {
		if err := r.swapIn(staging, place{pkgs, "tool"}); err != nil {
			t.Fatal(err)
		}
	}
	r.Close() // the crash: no record, no cleanup

	r = openRoot(t, rootDir)
	defer r.Close()
	if got := readFile(t, filepath.Join(r.pkgDir("tool"), "libexec/tool")); !strings.Contains(got, "v1") {
		t.Errorf("after reconcile bin/tool = %q, want version 1", got)
	}
	if p, err := r.DB().Get("tool"); err != nil || p.Version != "1" {
		t.Errorf("db after reconcile: %+v, %v", p, err)
	}
	if ents, _ := os.ReadDir(r.path(".pkg", "staging")); len(ents) != 0 {
		t.Errorf("staging after reconcile: %v", ents)
	}
	if ins, _ := r.DB().Intents(); len(ins) != 0 {
		t.Errorf("intents after reconcile: %+v", ins)
	}
}

// TestFirstChangeCutShort cuts short a root's first install after its tree moved into
// pkgs/, before its records: the database, which held no commit, is gone. The root
// exists for the commands that lock it (Exists), whose Open undoes the install; read
// without the lock it is ErrCutShort, not ErrNoRoot.
func TestFirstChangeCutShort(t *testing.T) {
	base := testfs.Mount(t, "xfs") // intents kept as names
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	staging, ino := stageTool(t, r, base, version1())
	must(t, r.db.SetIntents([]db.Intent{{Op: "install", Name: "tool", Staging: relOf(staging), Inode: ino}}))
	must(t, r.swapIn(staging, place{pkgs, "tool"}))
	r.Close()
	for _, name := range []string{"db", "db.sum", "db.new"} { // the crash took the database's link
		if err := os.Remove(filepath.Join(dir, ".pkg", name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}

	if err := Exists(dir); err != nil {
		t.Errorf("Exists: %v, want nil", err)
	}
	if _, err := OpenReadOnly(dir, Options{}); !errors.Is(err, ErrCutShort) || errors.Is(err, ErrNoRoot) {
		t.Errorf("OpenReadOnly: %v, want ErrCutShort", err)
	}
	if err := View(dir, Options{}, nil, func(*db.DB) error { return nil }); !errors.Is(err, ErrCutShort) {
		t.Errorf("View: %v, want ErrCutShort", err)
	}
	r = openRoot(t, dir)
	defer r.Close()
	if _, err := os.Lstat(filepath.Join(dir, "pkgs", "tool")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("pkgs/tool after Open: %v, want it undone", err)
	}
	if ps, err := r.DB().List(); err != nil || len(ps) != 0 {
		t.Errorf("records after Open: %v, %v", ps, err)
	}
}

// TestFirstChangeCutShortStaging cuts short a root's first install while it staged, before
// its intents: the empty database Open created is still db.new and staging holds the
// tree. Read without the lock that is ErrCutShort, not ErrNoRoot (a command that locks the
// root undoes it: Open empties staging), but for as long as a command holds the lock, as
// one still installing does.
func TestFirstChangeCutShortStaging(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	stageTool(t, r, base, version1())
	r.Close() // which adopts the database: the crash did not
	must(t, os.Rename(filepath.Join(dir, ".pkg", "db"), filepath.Join(dir, ".pkg", "db.new")))

	lock, err := os.Open(filepath.Join(dir, ".pkg", "lock"))
	must(t, err)
	defer lock.Close()
	must(t, syscall.Flock(int(lock.Fd()), syscall.LOCK_EX))
	if _, err := OpenReadOnly(dir, Options{}); !errors.Is(err, ErrNoRoot) {
		t.Errorf("OpenReadOnly while a command holds the lock: %v, want ErrNoRoot", err)
	}
	must(t, syscall.Flock(int(lock.Fd()), syscall.LOCK_UN))

	if err := Exists(dir); err != nil {
		t.Errorf("Exists: %v, want nil", err)
	}
	if _, err := OpenReadOnly(dir, Options{}); !errors.Is(err, ErrCutShort) || errors.Is(err, ErrNoRoot) {
		t.Errorf("OpenReadOnly: %v, want ErrCutShort", err)
	}
	must(t, os.Remove(filepath.Join(dir, ".pkg", "db.new"))) // the tree staged tells it alone
	if _, err := OpenReadOnly(dir, Options{}); !errors.Is(err, ErrCutShort) {
		t.Errorf("OpenReadOnly without db.new: %v, want ErrCutShort", err)
	}
	r = openRoot(t, dir)
	defer r.Close()
	if ents, _ := os.ReadDir(filepath.Join(dir, ".pkg", "staging")); len(ents) != 0 {
		t.Errorf("staging after Open: %v, want it emptied", ents)
	}
	if ps, err := r.DB().List(); err != nil || len(ps) != 0 {
		t.Errorf("records after Open: %v, %v", ps, err)
	}
}

// TestStageFull stages a package into a root whose filesystem has less room than its data,
// the cache's tar on another (so copied): the error names the root, whose filesystem is
// the full one, as well as the member, and no staged tree is left.
func TestStageFull(t *testing.T) {
	dir := filepath.Join(testfs.Tmpfs(t, 1<<20), "root")
	base := t.TempDir()
	r := openRoot(t, dir)
	defer r.Close()
	big := []entry{{name: "share/", typ: tar.TypeDir, mode: 0o755}, {name: "share/big", typ: tar.TypeReg, mode: 0o644, data: strings.Repeat("x", 4<<20)}}
	_, err := r.installFrom(alignedTar(t, base, big), repo.Package{Name: "big", Version: "1", SHA256: strings.Repeat("a", 64)})
	var pe *fs.PathError
	if !errors.Is(err, syscall.ENOSPC) || !errors.As(err, &pe) || pe.Path != dir {
		t.Fatalf("install of 4 MiB into 1 MiB: %v, want ENOSPC in a *fs.PathError naming %s", err, dir)
	}
	if !strings.Contains(err.Error(), `member "share/big"`) {
		t.Errorf("error %q names no member", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, ".pkg", "staging")); len(ents) != 0 {
		t.Errorf("staging after the failure: %v", ents)
	}
}

// TestStrayNewDatabase gives a root with a package installed the empty database an
// older pkg's repair left beside its own (db.new): Open removes it; and a database lost
// beside such a stray, removed or not, is lost (ErrLost), not a first change's, which would
// leave the root's trees to no package.
func TestStrayNewDatabase(t *testing.T) {
	base := t.TempDir()
	other := filepath.Join(base, "other")
	openRoot(t, other).Close()
	empty, err := os.ReadFile(filepath.Join(other, ".pkg", "db"))
	must(t, err)
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	installIn(t, r, base, pkgOf("tool", "1"), version1())
	r.Close()
	must(t, os.WriteFile(filepath.Join(dir, ".pkg", "db.new"), empty, 0o644))
	r = openRoot(t, dir)
	r.Close()
	if _, err := os.Lstat(filepath.Join(dir, ".pkg", "db.new")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("db.new after Open: %v; want it removed", err)
	}
	must(t, os.Remove(filepath.Join(dir, ".pkg", "db")))
	if _, err := Open(context.Background(), dir, Options{}); !errors.Is(err, ErrLost) {
		t.Errorf("Open with the database lost: %v; want ErrLost", err)
	}

	// A stray left where the database was lost first, which no Open removed.
	must(t, os.WriteFile(filepath.Join(dir, ".pkg", "db.new"), empty, 0o644))
	if _, err := OpenReadOnly(dir, Options{}); !errors.Is(err, ErrLost) {
		t.Errorf("OpenReadOnly with the database lost beside an empty db.new: %v; want ErrLost", err)
	}
	if _, err := Open(context.Background(), dir, Options{}); !errors.Is(err, ErrLost) {
		t.Errorf("Open with the database lost beside an empty db.new: %v; want ErrLost", err)
	}
}

// TestDatabaseLost deletes the database of a root with a package installed: the root
// exists (Exists), for verify --repair to record the package again, but Open and
// OpenReadOnly refuse it as damaged (ErrLost), creating no empty database that would leave
// pkgs/tool to no package.
func TestDatabaseLost(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	if _, err := r.installFrom(alignedTar(t, base, version1()), pkgOf("tool", "1")); err != nil {
		t.Fatal(err)
	}
	r.Close()
	must(t, os.Remove(filepath.Join(dir, ".pkg", "db")))
	// An earlier commit's intent, back after a crash undid its unsynced removal: the sum
	// the commit left says a database was there, so this is no first change cut short
	// (whose undo would take the installed tree away).
	var st syscall.Stat_t
	must(t, syscall.Stat(filepath.Join(dir, "pkgs", "tool"), &st))
	must(t, os.MkdirAll(filepath.Join(dir, ".pkg", "db.intents"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, ".pkg", "db.intents", fmt.Sprintf("0000000001234567 install %d 0 .pkg%%2Fstaging%%2Fx tool", st.Ino)), nil, 0o644))

	if err := Exists(dir); err != nil {
		t.Errorf("Exists: %v, want nil", err)
	}
	de := (*db.DamagedError)(nil)
	if _, err := OpenReadOnly(dir, Options{}); !errors.As(err, &de) || !errors.Is(err, ErrLost) {
		t.Errorf("OpenReadOnly: %v, want a *db.DamagedError, ErrLost", err)
	}
	if r, err := Open(context.Background(), dir, Options{}); !errors.As(err, &de) || !errors.Is(err, ErrLost) {
		if err == nil {
			r.Close()
		}
		t.Errorf("Open: %v, want a *db.DamagedError, ErrLost", err)
	}
	for _, name := range []string{"db", "db.new"} {
		if _, err := os.Lstat(filepath.Join(dir, ".pkg", name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf(".pkg/%s after the refusals: %v, want none", name, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "pkgs", "tool")); err != nil {
		t.Errorf("the installed tree after the refusals: %v", err)
	}
}

// TestMetaLost deletes the whole .pkg/ of a root with a package installed, as clutter: the
// root exists, for verify --repair to record the package again, and OpenReadOnly refuses
// it as damaged (ErrLost), where it said no root was there, nothing ever installed, and
// verify --repair refused it so.
func TestMetaLost(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	if _, err := r.installFrom(alignedTar(t, base, version1()), pkgOf("tool", "1")); err != nil {
		t.Fatal(err)
	}
	r.Close()
	must(t, os.RemoveAll(filepath.Join(dir, ".pkg")))
	if err := Exists(dir); err != nil {
		t.Errorf("Exists: %v, want nil", err)
	}
	de := (*db.DamagedError)(nil)
	if _, err := OpenReadOnly(dir, Options{}); !errors.As(err, &de) || !errors.Is(err, ErrLost) {
		t.Errorf("OpenReadOnly: %v, want a *db.DamagedError, ErrLost", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "pkgs", "tool")); err != nil {
		t.Errorf("the installed tree after the refusal: %v", err)
	}
}

// TestCloneShares installs on XFS and btrfs and proves with FIEMAP that the big file's
// block-aligned prefix shares extents with the cache. On XFS the tail is written; on btrfs the
// last block is cloned too and truncated.
func TestCloneShares(t *testing.T) {
	for kind, cloned := range map[string]int64{"xfs": 12288, "btrfs": 16004} {
		t.Run(kind, func(t *testing.T) {
			base := testfs.Mount(t, kind)
			r := openRoot(t, filepath.Join(base, "root"))
			defer r.Close()
			res, err := r.installFrom(alignedTar(t, base, version1()), pkgOf("tool", "1"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Method != Clone || res.Fallback != nil || res.Cloned != cloned || res.Cloned+res.Copied != res.Bytes {
				t.Errorf("result = %+v, want %d bytes cloned", res, cloned)
			}
			shared, _, err := testfs.SharedBytes(filepath.Join(r.pkgDir("tool"), "share/big"))
			if err != nil || shared < 12288 {
				t.Errorf("share/big: %d bytes shared, %v; want >= 12288", shared, err)
			}
			if got := readFile(t, filepath.Join(r.pkgDir("tool"), "share/big")); got != version1()[3].data {
				t.Errorf("share/big content differs (%d bytes)", len(got))
			}
		})
	}
}

// TestReconcileBins checks what opening a root does to bin/: a link whose package's record
// is gone (a remove cut short after its commit) is removed, a link deleted by hand is left
// missing, and a prepared link (an install cut short before its links were done) is put
// in place.
func TestReconcileBins(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	reopen := func() { openRoot(t, dir).Close() }
	r := openRoot(t, dir)
	if _, err := r.installFrom(alignedTar(t, base, version1()), pkgOf("tool", "1")); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "bin", "tool")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	r.Close()
	reopen()
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Errorf("a link deleted by hand was put back: %v", err)
	}

	if err := os.Symlink("../libexec/tool", filepath.Join(dir, "bin", ".tool.new")); err != nil {
		t.Fatal(err)
	}
	reopen()
	if got, err := os.Readlink(link); err != nil || got != "../libexec/tool" {
		t.Errorf("a prepared link was not put in place: %q, %v", got, err)
	}

	d, err := db.Open(filepath.Join(dir, ".pkg", "db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.CommitRequested(nil, nil, []string{"tool"}, nil, nil); err != nil { // recorded, links not yet done
		t.Fatal(err)
	}
	reopen()
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Errorf("the link of a removed package survived: %v", err)
	}
}

// TestPreparedLinksDropped makes preparing a package's second command link fail: the
// install fails, and the first link prepared is not left behind in bin/.
func TestPreparedLinksDropped(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	blocker := filepath.Join(dir, "bin", ".big.new", "x") // a directory where the link goes
	if err := os.MkdirAll(blocker, 0o755); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(dir, "bin", ".notes.new") // named like a prepared link, but the user's
	if err := os.WriteFile(notes, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := pkgOf("tool", "1")
	p.Bin = append(p.Bin, repo.ParseCommand("share/big"))
	if _, err := r.installFrom(alignedTar(t, base, version1()), p); err == nil {
		t.Fatal("Install succeeded with its link's place taken")
	}
	if _, err := os.Lstat(filepath.Join(dir, "bin", ".tool.new")); !os.IsNotExist(err) {
		t.Errorf("the link prepared first was left: %v", err)
	}
	r.Close()
	openRoot(t, dir).Close() // reconcile, which syncs bin/, leaves it too
	if b, err := os.ReadFile(notes); err != nil || string(b) != "mine\n" {
		t.Errorf("the user's .notes.new: %q, %v", b, err)
	}
}

// TestFileInPlaceOfCommand puts a file where a staged package's command goes, after it was
// staged: the commit leaves the file alone and says the command is not linked.
func TestFileInPlaceOfCommand(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	defer r.Close()
	tarPath := alignedTar(t, base, version1())
	members, err := scanWithDigests(tarPath)
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Stage(context.Background(), tarPath, pkgOf("tool", "1"), members)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "bin", "tool")
	if err := os.WriteFile(link, []byte("mine\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := r.Apply(context.Background(), []*Staged{s}, nil)
	var le *LinksError
	var ue *UnlinkedError
	if len(res) != 1 || !errors.As(err, &le) || !errors.As(err, &ue) || *ue != (UnlinkedError{Path: link, Package: "tool"}) {
		t.Errorf("Apply with a file in the place of bin/tool: %v, %v; want the result and a LinksError", res, err)
	}
	if b, err := os.ReadFile(link); err != nil || string(b) != "mine\n" {
		t.Errorf("the user's bin/tool: %q, %v", b, err)
	}
}

// TestUnmanagedTreeKept installs a package whose pkgs/ directory exists with no record: the
// install is refused, naming the directory, and the user's file stays.
func TestUnmanagedTreeKept(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	defer r.Close()
	mine := filepath.Join(dir, "pkgs", "tool", "mine")
	if err := os.MkdirAll(filepath.Dir(mine), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mine, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := r.installFrom(alignedTar(t, base, version1()), pkgOf("tool", "1"))
	if ue := (*unmanagedError)(nil); !errors.As(err, &ue) || ue.Path != filepath.Dir(mine) {
		t.Errorf("install over an unmanaged pkgs/tool: %v", err)
	}
	if b, err := os.ReadFile(mine); err != nil || string(b) != "precious\n" {
		t.Errorf("the user's file: %q, %v", b, err)
	}
	if ps, _ := r.DB().List(); len(ps) != 0 {
		t.Errorf("database lists %+v", ps)
	}
}

// TestCheckRunnable follows a bin entry through the package's links to a file, which an
// install makes executable (TestExecutable).
func TestCheckRunnable(t *testing.T) {
	members := []tarutil.Member{
		{Name: "bin/run", Type: tar.TypeReg, Mode: 0o755},
		{Name: "share/data", Type: tar.TypeReg, Mode: 0o644},
		{Name: "bin/alias", Type: tar.TypeSymlink, Linkname: "run"},
		{Name: "bin/up", Type: tar.TypeSymlink, Linkname: "../bin/alias"},
		{Name: "bin/hard", Type: tar.TypeLink, Linkname: "bin/run"},
		{Name: "bin/env", Type: tar.TypeSymlink, Linkname: "/usr/bin/env"},
		{Name: "bin/dangling", Type: tar.TypeSymlink, Linkname: "gone"},
		{Name: "bin/loop", Type: tar.TypeSymlink, Linkname: "loop"},
		{Name: "bin", Type: tar.TypeDir, Mode: 0o755},
		{Name: "c/realbin/chg", Type: tar.TypeReg, Mode: 0o755},
		{Name: "c/bin", Type: tar.TypeSymlink, Linkname: "realbin"},
		{Name: "c/up", Type: tar.TypeSymlink, Linkname: "../c/bin"},
		{Name: "c/out", Type: tar.TypeSymlink, Linkname: "/usr"},
		{Name: "c/cycle", Type: tar.TypeSymlink, Linkname: "cycle"},
	}
	for bin, want := range map[string]*binError{
		"bin/run": nil, "bin/alias": nil, "bin/up": nil, "bin/hard": nil, "bin/env": nil,
		"share/data": nil, "run=bin/run": nil, "data=share/data": nil, "x=bin/up": nil,
		"x=bin/gone":   {Bin: "x=bin/gone", Err: errBinNotFile},
		"bin/dangling": {Bin: "bin/dangling", At: "bin/gone", Err: errBinMissing},
		"bin/loop":     {Bin: "bin/loop", Err: errBinLoop},
		"bin":          {Bin: "bin", At: "bin", Err: errBinNotFile},
		"bin/none":     {Bin: "bin/none", Err: errBinNotFile},
		"c/bin/chg":    {Bin: "c/bin/chg", At: "c/realbin/chg", Link: "c/bin", Err: errBinThroughLink},
		"c/up/chg":     {Bin: "c/up/chg", At: "c/realbin/chg", Link: "c/up", Err: errBinThroughLink},
		"c/bin/none":   {Bin: "c/bin/none", Link: "c/bin", Err: errBinThroughLink},
		"c/out/bin/sh": {Bin: "c/out/bin/sh", Link: "c/out", Err: errBinThroughLink},
		"c/cycle/x":    {Bin: "c/cycle/x", Link: "c/cycle", Err: errBinThroughLink},
	} {
		err := CheckRunnable(testrepo.Commands(bin), members, false)
		var be *binError
		if want == nil && err != nil || want != nil && (!errors.As(err, &be) || *be != *want) {
			t.Errorf("CheckRunnable(%s) = %#v, want %#v", bin, err, want)
		}
		// A package with dependencies: a symlink to no member of its own leads to a
		// dependency's file; nothing else changes.
		if bin == "bin/dangling" {
			want = nil
		}
		err = CheckRunnable(testrepo.Commands(bin), members, true)
		if want == nil && err != nil || want != nil && (!errors.As(err, &be) || *be != *want) {
			t.Errorf("CheckRunnable(%s) with dependencies = %#v, want %#v", bin, err, want)
		}
	}
}

// TestBinErrorText checks the words of each kind of *binError.
func TestBinErrorText(t *testing.T) {
	for _, tt := range []struct {
		e    binError
		want string
	}{
		{binError{Bin: "x=bin/gone", Err: errBinNotFile}, `bin "x=bin/gone" is not a file in the package`},
		{binError{Bin: "bin/dangling", At: "bin/gone", Err: errBinMissing}, `bin "bin/dangling" leads to bin/gone, which is not in the package`},
		{binError{Bin: "bin/loop", Err: errBinLoop}, `bin "bin/loop": too many levels of symlinks`},
		{binError{Bin: "bin", At: "bin", Err: errBinNotFile}, `bin "bin" leads to bin, which is not a file`},
		{binError{Bin: "c/bin/chg", At: "c/realbin/chg", Link: "c/bin", Err: errBinThroughLink}, `bin "c/bin/chg" passes through the symlink c/bin: a command's path may not; its file is c/realbin/chg`},
		{binError{Bin: "c/bin/none", Link: "c/bin", Err: errBinThroughLink}, `bin "c/bin/none" passes through the symlink c/bin: a command's path may not`},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

// TestExecutable makes executable, by whoever may read it, the file each bin entry leads
// to, through symlinks and hardlinks, and nothing else, leaving its argument unchanged.
func TestExecutable(t *testing.T) {
	members := []tarutil.Member{
		{Name: "package/bin/prettier.cjs", Type: tar.TypeReg, Mode: 0o644},
		{Name: "package/bin/private", Type: tar.TypeReg, Mode: 0o600},
		{Name: "package/lib/real", Type: tar.TypeReg, Mode: 0o644},
		{Name: "package/bin/alias", Type: tar.TypeSymlink, Linkname: "../lib/real"},
		{Name: "package/bin/hard", Type: tar.TypeLink, Linkname: "package/lib/real"},
		{Name: "package/bin/env", Type: tar.TypeSymlink, Linkname: "/usr/bin/env"},
		{Name: "package/bin/run", Type: tar.TypeReg, Mode: 0o755},
		{Name: "package/README", Type: tar.TypeReg, Mode: 0o644},
	}
	before := slices.Clone(members)
	modes := func(ms []tarutil.Member) []fs.FileMode {
		var out []fs.FileMode
		for _, m := range ms {
			out = append(out, m.Mode)
		}
		return out
	}
	tests := []struct {
		bin  []string
		want []fs.FileMode
	}{
		{nil, modes(members)},
		{[]string{"prettier=package/bin/prettier.cjs"}, []fs.FileMode{0o755, 0o600, 0o644, 0, 0, 0, 0o755, 0o644}},
		{[]string{"package/bin/private", "package/bin/run", "package/bin/env"}, []fs.FileMode{0o644, 0o700, 0o644, 0, 0, 0, 0o755, 0o644}},
		{[]string{"package/bin/alias"}, []fs.FileMode{0o644, 0o600, 0o755, 0, 0, 0, 0o755, 0o644}},
		{[]string{"h=package/bin/hard", "package/bin/gone"}, []fs.FileMode{0o644, 0o600, 0o755, 0, 0, 0, 0o755, 0o644}},
	}
	for _, tt := range tests {
		if got := modes(executable(testrepo.Commands(tt.bin...), members, byName(members))); !slices.Equal(got, tt.want) {
			t.Errorf("executable(%q): modes %o, want %o", tt.bin, got, tt.want)
		}
		if !slices.Equal(members, before) {
			t.Fatalf("executable(%q) changed its argument", tt.bin)
		}
	}
}

// TestSalvageAfterCrash: a remove is cut short after its commit, once it moved one of the
// user's two files out of the old tree; the next start keeps the rest of the tree whole
// beside it, says so, and drops the marker of a change that did not happen.
func TestSalvageAfterCrash(t *testing.T) {
	base := t.TempDir()
	rootDir := filepath.Join(base, "root")
	r := openRoot(t, rootDir)
	for _, name := range []string{"tool", "other"} {
		p := pkgOf(name, "1")
		p.Bin = nil
		if _, err := r.installFrom(alignedTar(t, base, under(name, version1())), p); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := r.db.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"tool/NOTES", "tool/NOTES2", "other/NOTES"} {
		if err := os.WriteFile(filepath.Join(r.path("pkgs"), path), []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	svs, err := r.findChanges(recs, nil, []string{"tool", "other"})
	if err != nil || len(svs) != 2 {
		t.Fatalf("findChanges = %d, %v", len(svs), err)
	}
	trashDir := r.path(".pkg", "trash", "tool.1")
	for _, sv := range svs {
		tree := place{trash, "tool.1"}
		if sv.rec.Name == "other" {
			tree = place{trash, "other.1"} // a remove that did not happen
		}
		if err := sv.mark(tree); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(r.pkgDir("tool"), trashDir); err != nil {
		t.Fatal(err)
	}
	if err := r.db.CommitRequested(nil, nil, []string{"tool"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, sv := range svs {
		if sv.rec.Name == "tool" { // the first move of keep
			if err := os.Rename(filepath.Join(trashDir, "NOTES"), filepath.Join(sv.s.Dir, "NOTES")); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.Close() // the crash

	r = openRoot(t, rootDir)
	defer r.Close()
	moved, _ := filepath.Glob(r.path(".pkg", "saved", "tool-1.*", "NOTES"))
	rest, _ := filepath.Glob(r.path(".pkg", "saved", "tool-1.*-rest", "NOTES2"))
	if len(moved) != 1 || len(rest) != 1 || len(r.found.Kept) != 1 || r.found.Kept[0].Name != "tool" {
		t.Errorf("after the start: kept %q and %q; recovered %+v", moved, rest, r.found)
	}
	if got := readFile(t, filepath.Join(r.pkgDir("other"), "NOTES")); got != "mine" {
		t.Errorf("other's NOTES = %q", got)
	}
	if left, _ := filepath.Glob(r.path(".pkg", "saved", "*")); len(left) != 2 {
		t.Errorf("saved holds %q, want tool's file and tree alone", left)
	}
}

// scannedTar opens the aligned tar of entries, closed at the end of the test, and returns
// it with its members and size.
func scannedTar(tb testing.TB, base string, entries []entry) (*os.File, []tarutil.Member, int64) {
	tb.Helper()
	src, err := os.Open(alignedTar(tb, base, entries))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { src.Close() })
	members, err := tarutil.Scan(src)
	if err != nil {
		tb.Fatal(err)
	}
	info, err := src.Stat()
	if err != nil {
		tb.Fatal(err)
	}
	return src, members, info.Size()
}

// stageTool stages entries as package tool in r's staging, as an install does before its
// intent, and returns the staged tree and its inode.
func stageTool(t *testing.T, r *Root, base string, entries []entry) (place, uint64) {
	t.Helper()
	tree, fd, err := r.makeStaging("tool")
	if err != nil {
		t.Fatal(err)
	}
	src, members, size := scannedTar(t, base, entries)
	s := newStager(context.Background(), src, size, fd, r.pathOf(tree), r.umask)
	s.durable = r.filesys()
	if err := s.stage(members); err != nil {
		t.Fatal(err)
	}
	s.close()
	ino, _ := r.inode(tree)
	return tree, ino
}

// TestReconcileKeepsEditedTree: a reinstall is cut short after its intent and before its
// swap, in a tree the user edited (a file of the same size, a file added). The old tree's
// inode says nothing was swapped: the next start leaves it in place, edits and all, where
// the trees' shapes, which the edits changed, pointed at the staged tree.
func TestReconcileKeepsEditedTree(t *testing.T) {
	base := t.TempDir()
	rootDir := filepath.Join(base, "root")
	r := openRoot(t, rootDir)
	if _, err := r.installFrom(alignedTar(t, base, version1()), pkgOf("tool", "1")); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(r.pkgDir("tool"), "libexec", "tool")
	edited := strings.ToUpper(readFile(t, bin)) // same size
	for path, data := range map[string]string{bin: edited, filepath.Join(r.pkgDir("tool"), "mine"): "mine"} {
		if err := os.WriteFile(path, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	staging, ino := stageTool(t, r, base, version1())
	old, _ := r.inode(place{pkgs, "tool"})
	rel := relOf(staging)
	if err := r.db.SetIntents([]db.Intent{{Op: "install", Name: "tool", Staging: rel, Inode: ino, OldInode: old}}); err != nil {
		t.Fatal(err)
	}
	r.Close() // the crash, before the swap

	r = openRoot(t, rootDir)
	defer r.Close()
	if got := readFile(t, bin); got != edited {
		t.Errorf("after reconcile bin/tool = %q, want the user's edit", got)
	}
	if got := readFile(t, filepath.Join(r.pkgDir("tool"), "mine")); got != "mine" {
		t.Errorf("after reconcile mine = %q", got)
	}
}

// TestReconcileUnsure: an upgrade cut short after its swap, in a tree the user edited, on a
// root then restored from a copy (no inode matches): pkg cannot tell the trees apart, and
// keeps the one in staging rather than deleting it.
func TestReconcileUnsure(t *testing.T) {
	base := t.TempDir()
	rootDir := filepath.Join(base, "root")
	r := openRoot(t, rootDir)
	if _, err := r.installFrom(alignedTar(t, base, version1()), pkgOf("tool", "1")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.pkgDir("tool"), "libexec", "tool"), []byte("edited, longer than before\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	staging, ino := stageTool(t, r, base, version2())
	old, _ := r.inode(place{pkgs, "tool"})
	rel := relOf(staging)
	moved := uint64(1 << 20) // as recorded before the root was restored from a copy
	if err := r.db.SetIntents([]db.Intent{{Op: "install", Name: "tool", Staging: rel, Inode: ino + moved, OldInode: old + moved}}); err != nil {
		t.Fatal(err)
	}
	if err := r.swapIn(staging, place{pkgs, "tool"}); err != nil {
		t.Fatal(err)
	}
	r.Close() // the crash

	r = openRoot(t, rootDir)
	defer r.Close()
	kept, _ := filepath.Glob(r.path(".pkg", "saved", "tool-unsure.*", "libexec", "tool"))
	if len(kept) != 1 || readFile(t, kept[0]) != "edited, longer than before\n" || len(r.found.Unsure) != 1 || r.found.Unsure[0].Name != "tool" {
		t.Errorf("after reconcile: kept %q; recovered %+v", kept, r.found)
	}
}

// TestInstallOpensDatabase counts, with strace, how often a first install into a new root
// (Open, Install, Close) opens the database file, created as db.new and then linked: at
// most 4 times (its creation, a read-only open for the reads before the commit, one for
// each write transaction, which db.Options.Hold keeps for the reads after). An open is
// known by the path of the descriptor it returns (-y): the root opens the file by its name
// in a descriptor of .pkg.
func TestInstallOpensDatabase(t *testing.T) {
	if installStraced(t) {
		return
	}
	dir := t.TempDir()
	opened := regexp.MustCompile(`= \d+<` + regexp.QuoteMeta(filepath.Join(dir, "root", ".pkg", "db")) + `(\.new)?>$`) // -y: the fd's path
	var opens []string
	for _, line := range straceInstall(t, dir, "-y", "-e", "trace=open,openat,openat2") {
		if opened.MatchString(line) {
			opens = append(opens, line)
		}
	}
	if len(opens) > 4 {
		t.Errorf("%d opens of the database, want at most 4:\n%s", len(opens), strings.Join(opens, "\n"))
	}
}

// TestCommitSyncs installs one package into a new root and counts the syncs of files under
// the root and btrfs's transaction commits: on XFS the records' transaction's one
// fdatasync, which seals the new database's first commit and carries the renames before
// it (db's seal), none for the prefix that follows (its marker committed in order after
// its links: rollForward), no fsync of pkgs/ nor of the intents; on btrfs one transaction
// commit, of the trees, the prefix and the sealed records together (a first change:
// firstChange, db.PrefixChange.Sync), where the intents' fsync, the trees' commit, the
// records' fdatasync and the prefix's commit were four waits.
func TestCommitSyncs(t *testing.T) {
	tests := []struct {
		fs      string
		want    map[string]int
		commits int
	}{
		{"xfs", map[string]int{"fdatasync": 1}, 0},
		{"btrfs", map[string]int{}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.fs, func(t *testing.T) {
			if installStraced(t) {
				return
			}
			dir := testfs.Mount(t, tt.fs)
			skipUntracked(t, dir)
			root := filepath.Join(dir, "root")
			lines := straceInstall(t, dir, "-y", "-e", "trace=fsync,fdatasync,syncfs,ioctl,linkat")
			calls := testfs.SyncCalls(lines, root)
			commits := 0
			for _, l := range lines {
				if strings.Contains(l, "BTRFS_IOC_START_SYNC") {
					commits++
				}
			}
			if !maps.Equal(calls, tt.want) || commits != tt.commits {
				t.Errorf("syncs = %v and %d commits, want %v and %d:\n%s", calls, commits, tt.want, tt.commits, strings.Join(lines, "\n"))
			}
			if tt.commits == 1 { // the records written back, then the prefix's link, then the commit
				at := func(f func(string) bool) int { return slices.IndexFunc(lines, f) }
				written := at(func(l string) bool {
					return strings.Contains(l, "FS_IOC_FIEMAP") && strings.Contains(l, "/.pkg/db.new>")
				})
				linked := at(func(l string) bool {
					return strings.Contains(l, "linkat(") && strings.Contains(l, "<"+filepath.Join(root, "libexec")+">")
				})
				committed := at(func(l string) bool { return strings.Contains(l, "BTRFS_IOC_START_SYNC") })
				if written < 0 || linked < written || committed < linked {
					t.Errorf("the records written back at line %d, the prefix linked at %d, committed at %d: want them in that order:\n%s",
						written, linked, committed, strings.Join(lines, "\n"))
				}
			}
		})
	}
}

// TestForcesLog checks which changes Apply starts the journal's write for early: those of
// forceLogFiles files or more whose trees the records' sync carries, where the commit
// syncs on a filesystem that logs in order; not a one-file install (TestCommitSyncs).
func TestForcesLog(t *testing.T) {
	staged := func(files ...int) []*Staged {
		var s []*Staged
		for _, n := range files {
			s = append(s, &Staged{rec: &db.Record{Files: n}})
		}
		return s
	}
	whole := staged(forceLogFiles)
	whole[0].whole = true
	tests := []struct {
		fs     string
		noSync bool
		staged []*Staged
		want   bool
	}{
		{"xfs", false, staged(forceLogFiles/2, forceLogFiles/2), true},
		{"xfs", false, staged(1, forceLogFiles-2), false},
		{"xfs", false, whole, false},
		{"xfs", true, staged(forceLogFiles), false},
		{"btrfs", false, staged(forceLogFiles), false},
	}
	roots := map[string]*Root{}
	for _, tt := range tests {
		r := roots[tt.fs]
		if r == nil {
			r = openRoot(t, filepath.Join(testfs.Mount(t, tt.fs), "root"))
			defer r.Close()
			roots[tt.fs] = r
		}
		r.o.NoSync = tt.noSync
		if got := r.forcesLog(tt.staged); got != tt.want {
			t.Errorf("%s, NoSync %v, %d trees: forcesLog = %v, want %v", tt.fs, tt.noSync, len(tt.staged), got, tt.want)
		}
	}
}

// TestDiscardOnce installs one package into a new root and counts the statx of its staging
// name (removeTree's), which the tree left for pkgs/ at the commit: Apply discards the staged trees when
// it is done and again on its way out (a deferred Discard, for the paths that return
// early), and a tree Discard removed is not looked for again.
func TestDiscardOnce(t *testing.T) {
	if installStraced(t) {
		return
	}
	dir := t.TempDir()
	staging := filepath.Join(dir, "root", ".pkg", "staging")
	var looks []string
	for _, line := range straceInstall(t, dir, "-y", "-e", "trace=statx") {
		if strings.Contains(line, "statx(") && strings.Contains(line, "<"+staging+">, \"tool.") {
			looks = append(looks, line)
		}
	}
	if len(looks) != 1 {
		t.Errorf("%d statx of the staging name, want 1:\n%s", len(looks), strings.Join(looks, "\n"))
	}
}

// straceInstall runs t's test again in a child process under strace with args (what to
// trace), where installStraced installs tool 1 into a new root in dir, and returns strace's
// lines.
func straceInstall(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	testfs.NeedTools(t, "strace")
	if err := os.Rename(alignedTar(t, dir, version1()), filepath.Join(dir, "tool.tar")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "strace")
	args = append([]string{"-f", "-qq", "-o", out}, args...)
	cmd := exec.Command("strace", append(args, os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1")...)
	cmd.Env = append(os.Environ(), "PKG_STRACED="+dir)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\n")
}

// installStraced reports whether this is straceInstall's child, having installed tool 1
// from dir/tool.tar into the new root dir/root (Open, Install, Close).
func installStraced(t *testing.T) bool {
	dir := os.Getenv("PKG_STRACED")
	if dir == "" {
		return false
	}
	r := openRoot(t, filepath.Join(dir, "root"))
	if _, err := r.installFrom(filepath.Join(dir, "tool.tar"), pkgOf("tool", "1")); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	return true
}

// TestCommitDurable cuts the power (testfs.Shutdown) just after an upgrade on XFS and on
// ext4 returned: after it the root holds the new version, recorded and whole, its tree
// and the exchange made durable by the records' first sync alone (CommitRequested's
// carry; commitTrees syncs nothing there). The database's blocks are all written first,
// as in a root used a while: a new one's fallocated blocks, converted at bbolt's first
// write, would force the log anyway.
func TestCommitDurable(t *testing.T) {
	for _, kind := range []string{"xfs", "ext4"} {
		t.Run(kind, func(t *testing.T) {
			mnt := testfs.Mount(t, kind)
			root := filepath.Join(mnt, "root")
			r := openRoot(t, root)
			if _, err := r.installFrom(alignedTar(t, mnt, version1()), pkgOf("tool", "1")); err != nil {
				t.Fatal(err)
			}
			must(t, r.Close())
			testfs.Rewrite(t, filepath.Join(root, ".pkg", "db"))
			v2 := t.TempDir() // not on mnt: nothing of it is synced there
			r = openRoot(t, root)
			if _, err := r.installFrom(alignedTar(t, v2, version2()), pkgOf("tool", "2")); err != nil {
				t.Fatal(err)
			}
			must(t, testfs.Shutdown(mnt))
			r.Close() // fails on the shut filesystem; its descriptors are closed
			testfs.Remount(t, mnt)
			r = openRoot(t, root)
			defer r.Close()
			recs, err := r.db.List()
			if err != nil || len(recs) != 1 || recs[0].Version != "2" {
				t.Fatalf("records after the cut = %v, %v; want tool 2", recs, err)
			}
			if problems, err := r.Verify(); err != nil || len(problems) > 0 {
				t.Errorf("Verify after the cut = %v, %v", problems, err)
			}
		})
	}
}

// TestCommandNameTooLong installs a package whose command's name, 252 bytes, fits a file
// name but bin/.NAME.new does not: the install fails with ENAMETOOLONG, not as if
// something were in the way, and leaves nothing installed.
func TestCommandNameTooLong(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	p := pkgOf("tool", "1")
	p.Bin = testrepo.Commands(strings.Repeat("c", 252) + "=libexec/tool")
	_, err := r.installFrom(alignedTar(t, base, version1()), p)
	if !errors.Is(err, syscall.ENAMETOOLONG) {
		t.Fatalf("install: %v, want ENAMETOOLONG", err)
	}
	assertEmpty(t, r)
}

// TestAbsent finds the commands whose path is no member and passes through no symlink,
// and none that lead, through links, to a file or to nothing.
func TestAbsent(t *testing.T) {
	members := []tarutil.Member{
		{Name: "bin/run", Type: tar.TypeReg, Mode: 0o755},
		{Name: "bin/dangling", Type: tar.TypeSymlink, Linkname: "gone"},
		{Name: "c/bin", Type: tar.TypeSymlink, Linkname: "realbin"},
		{Name: "bin", Type: tar.TypeDir, Mode: 0o755},
	}
	bin := testrepo.Commands("bin/run", "x=bin/gone", "bin/dangling", "c/bin/none", "bin", "bin/none")
	if got, want := Absent(bin, members), testrepo.Commands("x=bin/gone", "bin/none"); !slices.Equal(got, want) {
		t.Errorf("Absent = %q, want %q", got, want)
	}
}

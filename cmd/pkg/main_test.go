package main

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/internal/shell"
	"pkg/internal/statfs"
	"pkg/internal/testfs"
	"pkg/pkgtest/testrepo"
	"pkg/repo"
)

// demoRepo is the checked-in demo repository (see testdata/mkrepo.sh).
const demoRepo = "../../testdata/repo"

// env is one root, cache and repository for running the real pkg in-process.
type env struct {
	t                 *testing.T
	root, cache, repo string
}

func newEnv(t *testing.T, base, repo string) *env {
	return &env{t: t, root: filepath.Join(base, "root"), cache: filepath.Join(base, "cache"), repo: repo}
}

// pkg runs pkg with the env's global flags and returns its output and exit code.
func (e *env) pkg(args ...string) (stdout, stderr string, code int) {
	var o, er bytes.Buffer
	full := append([]string{"pkg", "--root", e.root, "--cache", e.cache, "--repo", e.repo}, args...)
	code = run(full, &o, &er)
	return o.String(), er.String(), code
}

// initRoot creates the env's root, empty, as a first install would.
func (e *env) initRoot() {
	e.t.Helper()
	r, err := install.Open(context.Background(), e.root, install.Options{})
	if err != nil {
		e.t.Fatal(err)
	}
	r.Close()
}

// ok runs pkg and fails the test unless it exits 0.
func (e *env) ok(args ...string) (stdout, stderr string) {
	e.t.Helper()
	o, er, code := e.pkg(args...)
	if code != 0 {
		e.t.Fatalf("pkg %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, o, er)
	}
	return o, er
}

// serve serves dir over HTTP for the test's lifetime and returns its URL.
func serve(t *testing.T, dir string) string {
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return srv.URL
}

type listed struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Files   int    `json:"files"`
	Size    int64  `json:"size"`
}

func (e *env) list() []listed {
	e.t.Helper()
	out, _ := e.ok("list", "--json")
	var got struct {
		Schema   string   `json:"schema"`
		Packages []listed `json:"packages"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.Schema != "pkg.list/1" {
		e.t.Fatalf("list --json: %v, schema %q\n%s", err, got.Schema, out)
	}
	return got.Packages
}

// checkDBEmpty opens the database after pkg has exited and checks that it records nothing.
func checkDBEmpty(t *testing.T, root string) {
	t.Helper()
	d, err := db.Open(filepath.Join(root, ".pkg", "db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := d.List()
	ins, err2 := d.Intents()
	if err != nil || err2 != nil || len(ps) != 0 || len(ins) != 0 {
		t.Errorf("database not empty: packages %v, intents %v (%v, %v)", ps, ins, err, err2)
	}
	if err := d.Check(); err != nil {
		t.Errorf("bbolt check: %v", err)
	}
}

func TestInstallRemoveReflink(t *testing.T) {
	for _, kind := range []string{"xfs", "btrfs"} {
		t.Run(kind, func(t *testing.T) {
			e := newEnv(t, testfs.Mount(t, kind), serve(t, demoRepo))
			testInstallRemove(t, e, true)
		})
	}
}

func TestInstallRemoveCopy(t *testing.T) {
	e := newEnv(t, t.TempDir(), serve(t, demoRepo))
	testInstallRemove(t, e, false)
}

// testInstallRemove installs hello and its dependency, checks what pkg reports and how the
// data got there, then removes both and checks that root and database are as before.
func testInstallRemove(t *testing.T, e *env, reflink bool) {
	e.initRoot()
	before := rootTree(t, e.root)

	out, stderr := e.ok("install", "hello")
	for _, want := range []string{"installed libgreet 1.0.0", "installed hello 1.2.0"} {
		if !strings.Contains(out, want) {
			t.Errorf("install output lacks %q:\n%s", want, out)
		}
	}
	notes := strings.Count(stderr, "copying")
	if reflink && notes != 0 || !reflink && notes != 1 {
		t.Errorf("stderr has %d copy notes, want %d (reflink %v):\n%s", notes, map[bool]int{true: 0, false: 1}[reflink], reflink, stderr)
	}

	big := filepath.Join(e.root, "pkgs/libgreet/share/libgreet/phrasebook")
	shared, mapped, err := testfs.SharedBytes(big)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := os.Stat(big)
	if prefix := info.Size() &^ 4095; reflink && shared < prefix || !reflink && shared != 0 {
		t.Errorf("%s: %d of %d mapped bytes shared, want >= %d (reflink %v)", big, shared, mapped, prefix, reflink)
	}

	checkDigests(t, e.root, "libgreet")
	checkDigests(t, e.root, "hello")
	got := e.list()
	if len(got) != 2 || got[0].Name != "hello" || got[1].Name != "libgreet" || got[1].Files != 2 || got[1].Size != info.Size()+14 {
		t.Errorf("list --json = %+v", got)
	}
	files, _ := e.ok("files", "hello")
	for _, want := range []string{"bin/hello\n", "share/doc/hello/README.txt\n"} {
		if !strings.Contains(files, want) {
			t.Errorf("files hello lacks %q:\n%s", want, files)
		}
	}
	if out, err := exec.Command(filepath.Join(e.root, "bin", "hello")).CombinedOutput(); err != nil || string(out) != "Hello, world!\n" {
		t.Errorf("bin/hello: %q, %v", out, err)
	}
	if out, _ := e.ok("install", "hello"); !strings.Contains(out, "hello 1.2.0 is already installed") {
		t.Errorf("second install: %q", out)
	}

	e.ok("remove", "hello")
	e.ok("remove", "libgreet")
	testfs.SameTree(t, "root after remove", rootTree(t, e.root), before)
	checkDBEmpty(t, e.root)
}

// TestUpgradeSaysChanges: an upgrade says which commands a package renamed, and which
// dependency it no longer needs (kept: the user may have asked for it too).
func TestUpgradeSaysChanges(t *testing.T) {
	base := t.TempDir()
	for _, v := range []struct {
		version, bin string
		depends      []repo.Requirement
	}{{"1", "tool", testrepo.Requires("lib")}, {"2", "tool2", nil}} {
		archive := pax(t, td("bin/"), moded(tf("bin/"+v.bin, "#!/bin/sh\n"), 0o755))
		addHostile(t, base, repo.Package{Name: "tool", Version: v.version, Bin: testrepo.Commands("bin/" + v.bin), Depends: v.depends}, archive)
	}
	addHostile(t, base, repo.Package{Name: "lib", Version: "1"}, pax(t, tf("lib.so", "x")))
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "tool=1")
	out, _ := e.ok("upgrade", "tool>=1") // held at 1 until given a new constraint
	for _, want := range []string{"tool 2 has command tool2 in place of tool\n", "lib 1 is no longer needed by another package ('" + e.cmd("autoremove") + "' removes what is no longer needed)\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("upgrade: %q, want %q", out, want)
		}
	}
	if got := e.installed(); got != "lib 1, tool 2" {
		t.Errorf("after the upgrade: %s", got)
	}

	// Named in the command, lib is wanted: nothing says it is not needed.
	e2 := newEnv(t, t.TempDir(), filepath.Join(base, "repo"))
	e2.ok("install", "tool=1")
	if out, _ := e2.ok("install", "tool=2", "lib"); strings.Contains(out, "no longer needed") {
		t.Errorf("install tool=2 lib: %q", out)
	}
}

// TestRemoveSaysStranded: a remove names, beside the dependency no package needs now,
// what only it needs in turn, which autoremove takes with it, and the advice comes once.
func TestRemoveSaysStranded(t *testing.T) {
	base := t.TempDir()
	addHostile(t, base, repo.Package{Name: "tool", Version: "1", Depends: testrepo.Requires("lib")}, pax(t, tf("tool", "x")))
	addHostile(t, base, repo.Package{Name: "lib", Version: "1", Depends: testrepo.Requires("base")}, pax(t, tf("lib.so", "x")))
	addHostile(t, base, repo.Package{Name: "base", Version: "1"}, pax(t, tf("base.so", "x")))
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "tool")
	out, _ := e.ok("remove", "tool")
	want := "removed tool 1\nlib 1 is no longer needed by another package\n" +
		"base 1 is needed only by packages no longer needed ('" + e.cmd("autoremove") + "' removes what is no longer needed)\n"
	if out != want {
		t.Errorf("remove tool: %q, want %q", out, want)
	}
	if out, _ := e.ok("autoremove"); out != "removed base 1\nremoved lib 1\n" {
		t.Errorf("autoremove: %q, want base and lib removed", out)
	}
}

// TestCloneFallbackNote: on a filesystem that cannot share blocks, an install says so once,
// briefly, without the cache's paths.
func TestCloneFallbackNote(t *testing.T) {
	base := t.TempDir()
	d, err := os.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := statfs.Of(int(d.Fd()))
	d.Close()
	if err != nil || fs.Kind == statfs.XFS || fs.Kind == statfs.Btrfs {
		t.Skipf("%s may share blocks (%v): nothing to say", base, err)
	}
	e := newEnv(t, base, demoRepo)
	_, stderr := e.ok("install", "hello")
	if n := strings.Count(stderr, "cannot share blocks between files (XFS and btrfs can): copying "); n != 1 || strings.Contains(stderr, "tars/") {
		t.Errorf("install on %s: %q", base, stderr)
	}
}

// TestSalvage: what the user added to a package's directory, or changed in it, is moved to
// .pkg/saved when an upgrade or a remove deletes the directory, and said; an untouched
// directory goes without a word.
func TestSalvage(t *testing.T) {
	base := t.TempDir()
	e := newEnv(t, base, syncRepo(t))
	e.ok("install", "lib=1.0", "tool")
	libDir := filepath.Join(e.root, "pkgs", "lib")
	for path, data := range map[string]string{"NOTES": "mine\n", "cache/x/y": "1\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(libDir, path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(libDir, path), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(libDir, "share/lib/version"), []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr := e.ok("install", "lib=1.5")
	saved, _ := filepath.Glob(filepath.Join(e.root, ".pkg", "saved", "lib-1.0.*"))
	if len(saved) != 1 || !strings.Contains(stderr, "pkg: warning: the directory of lib 1.0 held 3 paths that it did not install or that changed since: kept in "+saved[0]+": NOTES, cache and share/lib/version\n") {
		t.Fatalf("upgrade of a changed lib: %q; saved %q", stderr, saved)
	}
	for path, want := range map[string]string{"NOTES": "mine\n", "cache/x/y": "1\n", "share/lib/version": "edited\n"} {
		if got, err := os.ReadFile(filepath.Join(saved[0], path)); err != nil || string(got) != want {
			t.Errorf("saved %s: %q, %v; want %q", path, got, err, want)
		}
	}
	e.checkInstalled("after the upgrade", "lib 1.5, tool 1.10")
	if _, stderr := e.ok("verify"); !strings.Contains(stderr, "pkg: note: "+filepath.Join(e.root, ".pkg", "saved")+" holds what upgrades and removes found added or changed in packages' directories (1 kept)") {
		t.Errorf("verify with something kept: %q", stderr)
	}
	// A file touched or chmodded, its data the same, is no change of the user's.
	toolVersion := filepath.Join(e.root, "pkgs", "tool", "share", "tool", "version")
	if err := os.Chmod(toolVersion, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(toolVersion, time.Now(), time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, stderr := e.ok("remove", "tool"); strings.Contains(stderr, "warning") {
		t.Errorf("remove of a package with a file touched and chmodded: %q", stderr)
	}
	if err := os.WriteFile(filepath.Join(libDir, "mine"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr := e.ok("remove", "lib"); !strings.Contains(stderr, "the directory of lib 1.5 held 1 path that it did not install or that changed since: kept in ") {
		t.Errorf("remove of lib with a file added: %q", stderr)
	}

	// A file pkg cannot move (immutable) makes it keep the whole tree.
	e.ok("install", "lib=1.5")
	stuck := filepath.Join(libDir, "stuck")
	if err := os.WriteFile(stuck, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	immutable(t, stuck)
	_, stderr = e.ok("remove", "lib")
	whole, _ := filepath.Glob(filepath.Join(e.root, ".pkg", "saved", "lib-1.5.*", "stuck"))
	for _, p := range whole {
		exec.Command("chattr", "-i", p).Run()
	}
	if len(whole) != 1 || !strings.Contains(stderr, "the directory of lib 1.5 held what pkg could not sort out (a part it could not read or move): kept whole in ") {
		t.Errorf("remove of lib with a file it cannot move: %q; kept %q", stderr, whole)
	}
}

func TestRemoveRefusesDependency(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	e.ok("install", "hello")
	_, stderr, code := e.pkg("remove", "libgreet")
	if code != 1 || !strings.Contains(stderr, "remove libgreet: hello 1.2.0 depends on it (remove hello too, or first)") {
		t.Errorf("remove libgreet: exit %d, %q", code, stderr)
	}
	if got := e.list(); len(got) != 2 {
		t.Errorf("after refused remove: %+v", got)
	}

	// Every dependent is named at once.
	dir := filepath.Join(t.TempDir(), "repo")
	addPackage(t, dir, "lib", "1")
	addPackage(t, dir, "a", "1", "lib")
	addPackage(t, dir, "b", "1", "lib>=1")
	e = newEnv(t, t.TempDir(), dir)
	e.ok("install", "a", "b")
	_, stderr, code = e.pkg("remove", "lib")
	if code != 1 || !strings.Contains(stderr, "remove lib: a 1 and b 1 depend on it (remove a b too, or first)") {
		t.Errorf("remove lib: exit %d, %q", code, stderr)
	}
}

// TestRemoveManyDependents: a removal refused as many packages depend on what it removes
// says how many, names a few, those asked for first, and hints how to see them all.
func TestRemoveManyDependents(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo")
	addPackage(t, dir, "lib", "1")
	for _, app := range []string{"app1", "app2", "app3", "app4", "app5", "app6", "app7"} {
		addPackage(t, dir, app, "1", "lib")
	}
	addPackage(t, dir, "meta", "1", "lib", "app3", "app4", "app5", "app6", "app7")
	e := newEnv(t, t.TempDir(), dir)
	e.ok("install", "lib", "meta", "app2", "app1")
	_, stderr, code := e.pkg("remove", "lib")
	want := "pkg: remove lib: 8 packages depend on it: app1 1, app2 1, meta 1, asked for, and app3 1, app4 1, and 3 more (remove them too, or first)\n" +
		"pkg: hint: lib was asked for: it stays installed while 8 packages need it ('" + e.cmd("why lib") + "' names every package that needs it, and how each one asked for does), and autoremove keeps it after"
	if code != 1 || !strings.HasPrefix(stderr, want) {
		t.Errorf("remove lib: exit %d, %q; want %q", code, stderr, want)
	}
	_, stderr, code = e.pkg("remove", "lib", "app1")
	want = "pkg: remove lib: 7 packages depend on it: app2 1, meta 1, asked for, and app3 1, app4 1, app5 1, and 2 more (remove them too, or first)\n"
	if code != 1 || !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, "'"+e.cmd("why lib")+"' names every package") {
		t.Errorf("remove lib app1: exit %d, %q; want %q and the hint", code, stderr, want)
	}
}

// TestRemoveTakesDependents checks that a removal takes along the installed packages that
// depend on what it removes where nothing asked for needs them (a dependency that depends
// back, as eslint's @eslint-community/eslint-utils does through its peer), and still
// refuses where a package asked for, or one it needs, would lose a dependency, naming
// what was asked for.
func TestRemoveTakesDependents(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo")
	addPackage(t, dir, "tool", "1", "utils")
	addPackage(t, dir, "utils", "1", "tool", "leaf")
	addPackage(t, dir, "leaf", "1")
	addPackage(t, dir, "top", "1", "mid")
	addPackage(t, dir, "mid", "1", "tool")
	e := newEnv(t, t.TempDir(), dir)
	e.ok("install", "tool")
	stdout, _ := e.ok("remove", "tool")
	if !strings.Contains(stdout, "removed utils 1 (depends on tool, and nothing asked for needs it)") {
		t.Errorf("remove tool: %q", stdout)
	}
	if got := e.list(); len(got) != 1 || got[0].Name != "leaf" { // no longer needed: autoremove's
		t.Errorf("after remove tool: %+v", got)
	}

	// top, asked for, needs tool through mid: refused, naming top and mid; removing top
	// too takes mid and utils along.
	e.ok("install", "top")
	_, stderr, code := e.pkg("remove", "tool")
	if code != 1 || !strings.Contains(stderr, "remove tool: top 1 (through mid 1), asked for, needs it: remove top too, or first") {
		t.Errorf("remove tool under top: exit %d, %q", code, stderr)
	}
	if got := e.list(); len(got) != 5 {
		t.Errorf("after refused remove: %+v", got)
	}
	e.ok("remove", "tool", "top")
	if got := e.list(); len(got) != 1 || got[0].Name != "leaf" {
		t.Errorf("after remove tool top: %+v", got)
	}
}

// TestRemoveDeletedTree checks that a package whose directory was deleted by hand can
// still be removed: its record goes, and nothing is left in the trash.
func TestRemoveDeletedTree(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	e.ok("install", "hello")
	if err := os.RemoveAll(filepath.Join(e.root, "pkgs/hello")); err != nil {
		t.Fatal(err)
	}
	e.ok("remove", "hello")
	if got := e.list(); len(got) != 1 || got[0].Name != "libgreet" {
		t.Errorf("after removing a deleted tree: %+v", got)
	}
	if ents, err := os.ReadDir(filepath.Join(e.root, ".pkg/trash")); err != nil || len(ents) != 0 {
		t.Errorf("trash: %v, %v", ents, err)
	}
}

// TestCachedTarInterop extracts the cached aligned tar with GNU tar and bsdtar and compares
// the trees with the original archive's, and checks the alignment of every big member.
func TestCachedTarInterop(t *testing.T) {
	testfs.NeedTools(t, "tar", "bsdtar")
	e := newEnv(t, t.TempDir(), demoRepo)
	e.ok("fetch", "hello", "fortunes")
	for _, pk := range []struct{ archive, sha string }{
		{"hello-1.2.0.tar.zst", indexSHA(t, "hello")},
		{"libgreet-1.0.0.tar.gz", indexSHA(t, "libgreet")},
		{"fortunes-0.9.1.tar.xz", indexSHA(t, "fortunes")},
	} {
		cached := filepath.Join(e.cache, "tars", pk.sha+".tar")
		want := extract(t, "tar", filepath.Join(demoRepo, pk.archive))
		for _, tool := range []string{"tar", "bsdtar"} {
			testfs.SameTree(t, tool+" of cached "+pk.archive, extract(t, tool, cached), want)
		}
		checkAligned(t, cached)
	}
}

func indexSHA(t *testing.T, name string) string {
	data, err := os.ReadFile(filepath.Join(demoRepo, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ix struct {
		Packages []struct{ Name, SHA256 string }
	}
	if err := json.Unmarshal(data, &ix); err != nil {
		t.Fatal(err)
	}
	for _, p := range ix.Packages {
		if p.Name == name {
			return p.SHA256
		}
	}
	t.Fatalf("%s not in the demo index", name)
	return ""
}

// extract unpacks archive with tool into a new directory, requiring a silent stderr.
func extract(t *testing.T, tool, archive string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(tool, "-xf", archive, "-C", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Fatalf("%s -xf %s: %v\n%s", tool, archive, err, stderr.String())
	}
	return rootTree(t, dir)
}

// checkAligned reads the tar with the standard library, counting bytes, and checks that the
// data of every regular member of 4096 bytes or more starts on a 4096-byte boundary.
func checkAligned(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cr := &countReader{r: f}
	tr := tar.NewReader(cr)
	big := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg && h.Size >= 4096 {
			big++
			if cr.n%4096 != 0 {
				t.Errorf("%s: member %s data at %d, not a multiple of 4096", path, h.Name, cr.n)
			}
		}
	}
	if strings.Contains(path, indexSHA(t, "libgreet")) && big == 0 {
		t.Errorf("%s: no member of 4096 bytes or more to check", path)
	}
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestWrongSHA installs from an index whose sha256 for hello is wrong: the error names the
// package, and the cache, root and database are left as they were.
func TestWrongSHA(t *testing.T) {
	repo := t.TempDir()
	if err := os.CopyFS(repo, os.DirFS(demoRepo)); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(repo, "index.json")
	data, _ := os.ReadFile(index)
	good := indexSHA(t, "hello")
	bad := strings.Repeat("0", 64)
	if err := os.WriteFile(index, bytes.Replace(data, []byte(good), []byte(bad), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, t.TempDir(), serve(t, repo))
	e.initRoot()
	e.ok("fetch", "libgreet")
	root, cache := rootTree(t, e.root), testfs.Tree(t, e.cache)

	_, stderr, code := e.pkg("install", "hello")
	if code != 1 || !strings.Contains(stderr, "hello 1.2.0") || !strings.Contains(stderr, "sha256 mismatch") ||
		!strings.Contains(stderr, "pkg: hint: the archive served is not the one the index (or lockfile) names") {
		t.Errorf("install with a wrong sha256: exit %d, stderr %q", code, stderr)
	}
	testfs.SameTree(t, "root", rootTree(t, e.root), root)
	testfs.SameTree(t, "cache", testfs.Tree(t, e.cache), cache)
	checkDBEmpty(t, e.root)
}

func TestUsage(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	for _, args := range [][]string{{"install"}, {"frobnicate"}, {"install", "Bad Name"}, {"list", "--nope"}} {
		if _, stderr, code := e.pkg(args...); code != 2 || !strings.HasPrefix(stderr, "pkg: ") {
			t.Errorf("pkg %v: exit %d, stderr %q; want 2 and a pkg: message", args, code, stderr)
		}
	}
	if _, stderr, code := e.pkg("install", "nosuchpackage"); code != 1 || !strings.Contains(stderr, `package "nosuchpackage" not found (repository file://`) {
		t.Errorf("install nosuchpackage: exit %d, %q", code, stderr)
	}
	if _, stderr, code := e.pkg("cache", "frob"); code != 2 || !strings.Contains(stderr, "run 'pkg cache help' for the list") {
		t.Errorf("cache frob: exit %d, %q", code, stderr)
	}
	for args, want := range map[string]string{"instal": `unknown command "instal"; did you mean "install"?`, "clean": `unknown command "clean"; did you mean "cache clean"?`} {
		if _, stderr, code := e.pkg(args); code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("pkg %s: exit %d, %q; want %q", args, code, stderr, want)
		}
	}
	for args, want := range map[string]string{
		"--lock-timeout 5 list": "pkg: invalid value \"5\" for --lock-timeout: a duration with its unit, such as 30s or 5m\npkg: hint: run 'pkg help' for usage\n",
		"--repo= search":        "pkg: no repository: pass --repo, set PKG_REPO or configure one (docs/config.md)\npkg: hint: run 'pkg help' for usage\n",
		"repo sign d --key k --expires 30d": "pkg: invalid value \"30d\" for --expires: a duration in hours, minutes or seconds, such as 720h for 30 days\n" +
			"pkg: hint: run 'pkg repo sign --help' for usage\n",
	} {
		if _, stderr, code := e.pkg(strings.Fields(args)...); code != 2 || stderr != want {
			t.Errorf("pkg %s: exit %d, %q; want %q", args, code, stderr, want)
		}
	}
	afile := filepath.Join(t.TempDir(), "afile")
	os.WriteFile(afile, nil, 0o644)
	if _, stderr, code := e.pkg("--root", afile, "list"); code != 2 || !strings.Contains(stderr, "--root "+afile+" is not a directory") {
		t.Errorf("list with --root a file: exit %d, %q", code, stderr)
	}
	if out, _, code := e.pkg("--version"); code != 0 || !strings.HasPrefix(out, "pkg version ") || !strings.Contains(out, runtime.Version()) {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	// run answers a lone --version or -v before building the commands; urfave/cli answers it
	// among other flags: the same line.
	viaCLI, _, _ := e.pkg("--quiet", "--version")
	for _, v := range []string{"--version", "-v"} {
		if out, _, _ := e.pkg(v); out != viaCLI {
			t.Errorf("pkg %s: %q, pkg --quiet --version: %q", v, out, viaCLI)
		}
	}
	missing := filepath.Join(t.TempDir(), "nope")
	if _, stderr, code := e.pkg("--repo", missing, "search"); code != 1 || !strings.Contains(stderr, "no repository at "+missing) ||
		!strings.Contains(stderr, "pkg: hint: check --repo (PKG_REPO)") {
		t.Errorf("search in a missing repository: exit %d, %q", code, stderr)
	}
	if _, stderr, code := e.pkg("sync", "-f", missing); code != 1 || !strings.Contains(stderr, "no lockfile "+missing+": '"+e.cmd("lock NAME...")+"' writes one") {
		t.Errorf("sync of a missing lockfile: exit %d, %q", code, stderr)
	}
}

// rootTree describes a root for before-and-after checks (testfs.RootTree).
func rootTree(t *testing.T, root string) map[string]string { return testfs.RootTree(t, root) }

// TestGlobalFlagsAnywhere checks that global flags work after the command too, as users of
// other package managers write them, and that an empty --root or PKG_ROOT means the default
// rather than the current directory.
func TestGlobalFlagsAnywhere(t *testing.T) {
	base := t.TempDir()
	root, cache := filepath.Join(base, "root"), filepath.Join(base, "cache")
	var o, er bytes.Buffer
	if code := run([]string{"pkg", "install", "hello", "--root", root, "--cache", cache, "--repo", demoRepo, "-q"}, &o, &er); code != 0 || o.Len() != 0 {
		t.Fatalf("install with global flags after it: exit %d\nstdout %q\nstderr %q", code, o.String(), er.String())
	}
	o.Reset()
	if code := run([]string{"pkg", "list", "--root", root}, &o, &er); code != 0 || !strings.Contains(o.String(), "hello") {
		t.Errorf("list --root: exit %d, %q", code, o.String())
	}

	t.Chdir(base)
	t.Setenv("XDG_DATA_HOME", filepath.Join(base, "data"))
	t.Setenv("PKG_ROOT", "")
	o.Reset()
	if code := run([]string{"pkg", "env", "--bin-dir"}, &o, &er); code != 0 || o.String() != filepath.Join(base, "data/pkg/bin")+"\n" {
		t.Errorf("env with PKG_ROOT empty: exit %d, %q", code, o.String())
	}
	o.Reset()
	if code := run([]string{"pkg", "--root", "", "env", "--bin-dir"}, &o, &er); code != 0 || o.String() != filepath.Join(base, "data/pkg/bin")+"\n" {
		t.Errorf("env with --root empty: exit %d, %q", code, o.String())
	}
}

// TestRepoAddChecks checks that repo add refuses a bin the archive lacks and says when it
// replaces an entry or records a dependency the repository does not offer.
func TestRepoAddChecks(t *testing.T) {
	base := t.TempDir()
	dir, archive := filepath.Join(base, "repo"), filepath.Join(base, "a-1.tar")
	if err := os.WriteFile(archive, packageTar(t, "a", "1", 'x'), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, base, dir)
	if _, stderr, code := e.pkg("repo", "add", dir, archive, "--name", "a", "--version", "1", "--bin", "bin/zzz"); code != 1 ||
		!strings.Contains(stderr, `repo add a 1: bin "bin/zzz" is not a file in the package`) {
		t.Errorf("repo add with a missing bin: exit %d, %q", code, stderr)
	}
	if _, stderr, code := e.pkg("repo", "add", dir, archive, "--name", "a", "--version", "1", "--bin", ".a=bin/a"); code != 1 ||
		!strings.Contains(stderr, `package a@1: bin ".a=bin/a": a command's name may not start with a dot`) {
		t.Errorf("repo add with a command named .a: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "index.json")); !os.IsNotExist(err) {
		t.Errorf("refused repo add wrote the index: %v", err)
	}
	_, stderr := e.ok("repo", "add", dir, archive, "--name", "a", "--version", "1", "--bin", "bin/a", "--depends", "lib>=2")
	if !strings.Contains(stderr, "a 1 depends on lib>=2, which "+dir+" does not offer (yet)") ||
		!strings.Contains(stderr, "pkg: note: "+dir+" had no index.json: this is a new repository") {
		t.Errorf("repo add with an unknown dependency, to a new repository: %q", stderr)
	}
	if _, stderr := e.ok("repo", "add", dir, archive, "--name", "a", "--version", "1.1-rc2"); strings.Contains(stderr, "new repository") ||
		!strings.Contains(stderr, "pkg: note: 1.1-rc2 is a pre-release of 1.1: it sorts before 1.1, and installs take a release while there is one (a packaging revision of 1.1 is written 1.1-1 or 1.1+1)") {
		t.Errorf("repo add of a pre-release: %q", stderr)
	}
	for _, v := range []string{"1.1-2", "1:1.1-2.1+deb12u3", "v1.1"} { // a Debian revision, an epoch, a git tag
		if _, stderr := e.ok("repo", "add", dir, archive, "--name", "a", "--version", v); strings.Contains(stderr, "pre-release") {
			t.Errorf("repo add of %s: %q", v, stderr)
		}
	}
	before, _ := os.ReadFile(filepath.Join(dir, "index.json"))
	// The same again changes nothing, and replaced nothing.
	if _, stderr := e.ok("repo", "add", dir, archive, "--name", "a", "--version", "1", "--bin", "bin/a", "--depends", "lib>=2"); strings.Contains(stderr, "replaced") {
		t.Errorf("repo add of the entry the index has: %q, want no entry said replaced", stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "index.json")); !bytes.Equal(after, before) {
		t.Errorf("repo add of the entry the index has changed the index")
	}
	_, stderr, code := e.pkg("repo", "add", dir, archive, "--name", "a", "--version", "1")
	if want := "pkg: " + dir + " already has a 1 (archive a-1.tar, sha256 "; code != 1 || !strings.Contains(stderr, want) ||
		!strings.Contains(stderr, "publish a new version") || !strings.Contains(stderr, "hint: or pass --replace") {
		t.Errorf("repo add over a published entry: exit %d, %q; want %q...", code, stderr, want)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "index.json")); !bytes.Equal(after, before) {
		t.Errorf("a refused repo add changed the index")
	}
	_, stderr = e.ok("repo", "add", dir, archive, "--name", "a", "--version", "1", "--replace")
	if !strings.Contains(stderr, `this replaced the entry of a 1 (archive a-1.tar, depends ["lib>=2"], bin ["bin/a"])`) {
		t.Errorf("repo add --replace over an entry: %q", stderr)
	}
}

// TestUsageHint checks that a usage error points at the help of the command it is about,
// and names an unknown flag as typed.
func TestUsageHint(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"install", "--bogus", "x"}, "pkg: unknown flag --bogus\npkg: hint: run 'pkg install --help' for usage\n"},
		{[]string{"cache", "list", "x"}, "pkg: cache list: unexpected argument \"x\" (cache list takes no arguments)\npkg: hint: run 'pkg cache list --help' for usage\n"},
		{[]string{"--bogus", "list"}, "pkg: unknown flag --bogus\npkg: hint: run 'pkg help' for usage\n"},
		{[]string{"sync", "tool", "-f"}, "pkg: flag -f needs a value\npkg: hint: run 'pkg sync --help' for usage\n"},
		{[]string{"install", "x", "--root"}, "pkg: flag --root needs a value\npkg: hint: run 'pkg help' for usage\n"},
		{[]string{"--jobs", "abc", "list"}, "pkg: invalid value \"abc\" for --jobs: a whole number\npkg: hint: run 'pkg help' for usage\n"},
		{[]string{"install", "--reinstal", "x"}, "pkg: unknown flag --reinstal; did you mean --reinstall?\npkg: hint: run 'pkg install --help' for usage\n"},
		{[]string{"--offlin", "list"}, "pkg: unknown flag --offlin; did you mean --offline?\npkg: hint: run 'pkg help' for usage\n"},
		{[]string{"install"}, "pkg: install: missing package name\npkg: hint: run 'pkg install --help' for usage\n"},
		{[]string{"list", "-j", "x"}, "pkg: invalid value \"x\" for -j: a whole number\npkg: hint: run 'pkg help' for usage\n"},
	} {
		if _, stderr, code := e.pkg(tt.args...); code != 2 || stderr != tt.want {
			t.Errorf("pkg %s: exit %d, %q; want 2 and %q", strings.Join(tt.args, " "), code, stderr, tt.want)
		}
	}
}

// TestEnvNotBoolean checks that a boolean environment variable pkg cannot read is named,
// with its value and what it takes.
func TestEnvNotBoolean(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	t.Setenv("PKG_OFFLINE", "yes")
	want := "pkg: environment variable PKG_OFFLINE=\"yes\" is not a boolean\npkg: hint: set it to 1 or 0 (true and false work too), or unset it\n"
	if _, stderr, code := e.pkg("list"); code != 2 || stderr != want {
		t.Errorf("PKG_OFFLINE=yes pkg list: exit %d, %q; want 2 and %q", code, stderr, want)
	}
}

// TestRenameHints gives the commit's rename failures a hint that names the cause.
func TestRenameHints(t *testing.T) {
	for err, want := range map[error]string{
		&os.LinkError{Op: "rename", Old: "/r/pkgs/a", New: "/r/.pkg/trash/a.1", Err: install.ErrSplitRoot}:    "pkgs/ and .pkg/ must be on one filesystem",
		&os.LinkError{Op: "exchange", Old: "/r/.pkg/staging/a", New: "/r/pkgs/a", Err: install.ErrNoExchange}: "local filesystem",
		fmt.Errorf("fetch a 1: %w", fetch.ErrGone):                                                            "does not have the archive",
	} {
		if h := hint(err, nil); !strings.Contains(h, want) {
			t.Errorf("hint for %v: %q, want %q in it", err, h, want)
		}
	}
}

// TestVersionEarly builds pkg with the commit stamped (-buildvcs=true) and runs it: a lone
// --version or -v is answered by early's initializer, before urfave/cli's runs
// (GODEBUG=inittrace=1 names each initializer that ran), with the commit `go version -m`
// reads from the same binary; urfave/cli answers --version among other flags with the
// same line. A binary its user may run but not read (mode 0711, run as nobody) is answered
// by main from runtime/debug's copy of the record, with the same line.
func TestVersionEarly(t *testing.T) {
	testfs.NeedTools(t, "git") // -buildvcs=true fails without it in a checkout

	dir, err := os.MkdirTemp("", "pkg-version-") // 0700; opened to nobody below
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "pkg")
	if out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "pkg/cmd/pkg").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	meta, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	want := "(devel)" // the go command stamps no commit in a git worktree (its .git is a file)
	for line := range strings.SplitSeq(string(meta), "\n") {
		if rev, ok := strings.CutPrefix(strings.TrimSpace(line), "build\tvcs.revision="); ok {
			want = rev[:12]
		}
	}
	if want == "(devel)" && os.Getenv("CI") == "true" {
		t.Fatalf("go version -m finds no commit in a -buildvcs=true build of a clone:\n%s", meta)
	}
	const cliInit = "init github.com/urfave/cli/v2 "
	run := func(cmd *exec.Cmd) (stdout, inits string) {
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		var out, errs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errs
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, errs.String())
		}
		return out.String(), errs.String()
	}
	viaCLI, inits := run(exec.Command(bin, "--quiet", "--version"))
	if !strings.HasPrefix(viaCLI, "pkg version "+want) || !strings.HasSuffix(viaCLI, " ("+runtime.Version()+")\n") {
		t.Errorf("pkg --quiet --version: %q, want the commit %s", viaCLI, want)
	}
	if !strings.Contains(inits, cliInit) {
		t.Fatalf("GODEBUG=inittrace=1 does not name urfave/cli's initializer:\n%s", inits)
	}
	for _, v := range []string{"--version", "-v"} {
		if out, inits := run(exec.Command(bin, v)); out != viaCLI || strings.Contains(inits, cliInit) {
			t.Errorf("pkg %s: %q, with urfave/cli initialized: %v; want %q before it", v, out, strings.Contains(inits, cliInit), viaCLI)
		}
	}
	if os.Getuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("needs root to run pkg as nobody: CI runs as root")
		}
		t.Skip("not root: cannot run pkg as nobody")
	}
	testfs.NeedTools(t, "setpriv")
	if err := errors.Join(os.Chmod(dir, 0o755), os.Chmod(bin, 0o711)); err != nil {
		t.Fatal(err)
	}
	unread := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", bin, "--version")
	if out, inits := run(unread); out != viaCLI || !strings.Contains(inits, cliInit) {
		t.Errorf("pkg --version, unreadable: %q, answered by main: %v; want %q", out, strings.Contains(inits, cliInit), viaCLI)
	}
}

// TestNoHomeNoDefaultDirs: with no home, nor an absolute XDG_DATA_HOME or XDG_CACHE_HOME,
// a command that opens the root or the cache is refused, saying how to name them, and
// nothing is made in the temporary directory (where another user may have made pkg first);
// a command that opens neither still runs.
func TestNoHomeNoDefaultDirs(t *testing.T) {
	base := t.TempDir()
	t.Setenv("HOME", "")
	t.Setenv("TMPDIR", base)
	t.Setenv("XDG_DATA_HOME", "data") // relative: ignored
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("PKG_ROOT", "")
	t.Setenv("PKG_CACHE", "")
	t.Chdir(base)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"pkg", "--repo", demoRepo, "install", "hello"}, "set HOME, or pass --root or set PKG_ROOT"},
		{[]string{"pkg", "--root", filepath.Join(base, "root"), "list"}, "set HOME, or pass --cache or set PKG_CACHE"},
	} {
		var o, er bytes.Buffer
		if code := run(tt.args, &o, &er); code != 2 || !strings.Contains(er.String(), tt.want) {
			t.Errorf("%q with no home: exit %d, %q", tt.args, code, er.String())
		}
	}
	if entries, err := os.ReadDir(base); err != nil || len(entries) != 0 {
		t.Errorf("with no home, pkg made %v in the temporary directory and the current one (%v)", entries, err)
	}
	var o, er bytes.Buffer
	if code := run([]string{"pkg", "completion", "bash"}, &o, &er); code != 0 {
		t.Errorf("completion with no home: exit %d, %q", code, er.String())
	}
	if code := run([]string{"pkg", "--root", filepath.Join(base, "root"), "--cache", filepath.Join(base, "cache"), "list"}, &o, &er); code != 0 {
		t.Errorf("list with --root and --cache and no home: exit %d, %q", code, er.String())
	}
	// A command's help, and the cache's commands that read no root, need no default.
	for _, args := range [][]string{{"pkg", "install", "--help"}, {"pkg", "run", "-h"}, {"pkg", "--cache", filepath.Join(base, "cache"), "cache", "list"}} {
		o.Reset()
		er.Reset()
		if code := run(args, &o, &er); code != 0 {
			t.Errorf("%q with no home: exit %d, %q", args, code, er.String())
		}
	}
}

// cmd returns the pkg command line "pkg ARGS" as advice gives it to the env's user: with
// the env's global options, as pkg carries them.
func (e *env) cmd(args string) string {
	line := "pkg --root " + shell.Quote(e.root) + " --cache " + shell.Quote(e.cache) + " "
	if e.repo != "" {
		line += "--repo " + shell.Quote(e.repo) + " "
	}
	return line + args
}

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"pkg/pkgtest/testrepo"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"pkg/internal/testfs"
	"pkg/repo"
)

// addPackage makes a plain tar archive for name and version, with its command
// bin/NAME, a version file and 64 KiB of data, and adds it to the repository in dir.
func addPackage(t *testing.T, dir, name, version string, depends ...string) repo.Package {
	t.Helper()
	archive := filepath.Join(t.TempDir(), name+"-"+version+".tar")
	if err := os.WriteFile(archive, packageTar(t, name, version, 'v'), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := repo.Add(t.Context(), dir, archive, repo.Package{Name: name, Version: version, Depends: testrepo.Requires(depends...), Bin: testrepo.Commands("bin/" + name)}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Package
}

// packageTar returns the archive of name and version; fill varies its data.
func packageTar(t *testing.T, name, version string, fill byte) []byte {
	return pax(t,
		moded(tf("bin/"+name, "#!/bin/sh\necho "+name+" "+version+"\n"), 0o755),
		tf("share/"+name+"/version", version+"\n"),
		tf("share/"+name+"/data", strings.Repeat(string(fill), 64<<10)))
}

// syncRepo is a repository for lock and sync tests: app needs lib>=1,<2, and lib and
// tool each have an older and a newer version.
func syncRepo(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "repo")
	addPackage(t, dir, "lib", "1.0")
	addPackage(t, dir, "lib", "1.5")
	addPackage(t, dir, "lib", "2.0")
	addPackage(t, dir, "app", "1.0", "lib>=1,<2")
	addPackage(t, dir, "tool", "1.0")
	addPackage(t, dir, "tool", "1.10")
	addPackage(t, dir, "extra", "1.0")
	return dir
}

// installed returns the root's packages as "name version" lines, by name.
func (e *env) installed() string {
	var s []string
	for _, p := range e.list() {
		s = append(s, p.Name+" "+p.Version)
	}
	return strings.Join(s, ", ")
}

// checkInstalled checks the root's packages, their version files and their commands.
func (e *env) checkInstalled(what, want string) {
	e.t.Helper()
	if got := e.installed(); got != want {
		e.t.Fatalf("%s: installed %q, want %q", what, got, want)
	}
	for _, nv := range strings.Split(want, ", ") {
		name, _, _ := strings.Cut(nv, " ")
		out, err := exec.Command(filepath.Join(e.root, "bin", name)).Output()
		if err != nil || string(out) != nv+"\n" {
			e.t.Errorf("%s: bin/%s says %q, %v; want %q", what, name, out, err, nv)
		}
	}
}

func TestSyncConverges(t *testing.T) {
	base := t.TempDir()
	e := newEnv(t, base, syncRepo(t))
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "app", "tool@1.0")
	want := "app 1.0, lib 1.5, tool 1.0"

	// From empty, then again: the second run changes nothing and says so.
	out, _ := e.ok("sync", "-f", lock)
	for _, line := range []string{"installed lib 1.5", "installed app 1.0", "installed tool 1.0"} {
		if !strings.Contains(out, line) {
			t.Errorf("sync from empty: no %q in\n%s", line, out)
		}
	}
	e.checkInstalled("sync from empty", want)
	before := rootTree(t, e.root)
	if out, _ := e.ok("sync", "-f", lock); out != "nothing to do: root matches "+lock+"\n" {
		t.Errorf("second sync: %q", out)
	}
	testfs.SameTree(t, "root after a second sync", rootTree(t, e.root), before)

	// A superset: extras stay with --keep-extra, and go without.
	e.ok("install", "extra")
	out, stderr := e.ok("sync", "-f", lock, "--keep-extra")
	if !strings.Contains(out, "nothing to do") || !strings.Contains(stderr, "keeping extra, not in") {
		t.Errorf("sync --keep-extra: %q, %q", out, stderr)
	}
	e.checkInstalled("sync --keep-extra", "app 1.0, extra 1.0, lib 1.5, tool 1.0")
	if out, _ := e.ok("sync", "-f", lock); !strings.Contains(out, "removed extra") {
		t.Errorf("sync of a superset: %q", out)
	}
	e.checkInstalled("sync of a superset", want)

	// Older and newer versions: an upgrade and a downgrade in one sync.
	e.ok("install", "lib@1.0", "tool@1.10")
	e.checkInstalled("before sync", "app 1.0, lib 1.0, tool 1.10")
	out, _ = e.ok("sync", "-f", lock)
	for _, line := range []string{"upgraded lib 1.0 to 1.5", "downgraded tool 1.10 to 1.0"} {
		if !strings.Contains(out, line) {
			t.Errorf("sync of other versions: no %q in\n%s", line, out)
		}
	}
	e.checkInstalled("sync of other versions", want)

	// Everything at once: missing, extra, older and newer.
	e.ok("remove", "app")
	e.ok("install", "extra", "lib@1.0", "tool@1.10")
	out, _ = e.ok("sync", "-f", lock)
	// The commit's line follows the removal's and counts every change, the removal too.
	const summary = "\nremoved extra 1.0\ncommitted 4 packages (1 installed, 1 upgraded, 1 downgraded, 1 removed) in "
	if !strings.Contains(out, summary) {
		t.Errorf("sync of a mixed root:\n%s\nwant %q...", out, summary)
	}
	e.checkInstalled("sync of a mixed root", want)
	testfs.SameTree(t, "root after converging again", rootTree(t, e.root), before)
	if out, _ := e.ok("sync", "-f", lock); !strings.Contains(out, "nothing to do") {
		t.Errorf("sync after converging: %q", out)
	}
	checkDigests(t, e.root, "app")
}

// TestSyncKeepExtraDependency syncs, keeping an installed package the lockfile does not
// list, to a version of its dependency it does not allow: the sync is refused, naming the
// dependency, and changes nothing.
func TestSyncKeepExtraDependency(t *testing.T) {
	base := t.TempDir()
	e := newEnv(t, base, syncRepo(t))
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "lib@2.0")
	e.ok("install", "app")
	e.checkInstalled("install app", "app 1.0, lib 1.5")
	before := rootTree(t, e.root)
	_, stderr, code := e.pkg("sync", "-f", lock, "--keep-extra")
	if code != 1 || !strings.Contains(stderr, "install lib 2.0: app 1.0 depends on lib>=1,<2") {
		t.Errorf("sync --keep-extra breaking app: exit %d, %q", code, stderr)
	}
	testfs.SameTree(t, "root after the refused sync", rootTree(t, e.root), before)
}

func TestSyncFailsOnChangedArchive(t *testing.T) {
	base := t.TempDir()
	dir := syncRepo(t)
	e := newEnv(t, base, dir)
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "app")

	// lib 1.5 is republished with other data of the same size, and the index follows.
	archive := filepath.Join(dir, "lib-1.5.tar")
	old, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	forged := packageTar(t, "lib", "1.5", 'x')
	if len(forged) != len(old) {
		t.Fatalf("forged archive is %d bytes, want %d", len(forged), len(old))
	}
	if err := os.WriteFile(archive, forged, 0o644); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, "index.json")
	data, _ := os.ReadFile(index)
	oldSum, newSum := sha256.Sum256(old), sha256.Sum256(forged)
	data = bytes.Replace(data, []byte(hex.EncodeToString(oldSum[:])), []byte(hex.EncodeToString(newSum[:])), 1)
	if err := os.WriteFile(index, data, 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok("install", "lib@1.5") // the index and the archive agree now
	e.ok("remove", "lib")

	e.initRoot()
	before := rootTree(t, e.root)
	_, stderr, code := e.pkg("sync", "-f", lock)
	if code != 1 || !strings.Contains(stderr, "lib 1.5") || !strings.Contains(stderr, "sha256 mismatch") {
		t.Errorf("sync of a changed archive: exit %d, %q", code, stderr)
	}
	testfs.SameTree(t, "root after a refused sync", rootTree(t, e.root), before)
	checkDBEmpty(t, e.root)

	_, stderr, code = e.pkg("sync", "-f", lock, "--frozen")
	if code != 1 || !strings.Contains(stderr, "lib 1.5 is locked with sha256 "+hex.EncodeToString(oldSum[:])) || !strings.Contains(stderr, "\npkg: hint: run '"+e.cmd("lock -o "+lock)+"' to update it\n") {
		t.Errorf("sync --frozen of a changed archive: exit %d, %q", code, stderr)
	}
}

func TestSyncFrozen(t *testing.T) {
	base := t.TempDir()
	dir := syncRepo(t)
	e := newEnv(t, base, dir)
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "app", "tool<1.5")
	e.ok("sync", "-f", lock, "--frozen")
	e.ok("sync", "-f", lock, "--frozen", "tool<1.5", "app") // the same requirements
	e.checkInstalled("frozen sync", "app 1.0, lib 1.5, tool 1.0")

	for _, args := range [][]string{{"app"}, {"app", "tool<2"}, {"app", "tool<1.5", "extra"}} {
		_, stderr, code := e.pkg(append([]string{"sync", "-f", lock, "--frozen"}, args...)...)
		if code != 1 || !strings.Contains(stderr, lock+" records the requirements app tool<1.5; the requirements given (") {
			t.Errorf("sync --frozen %q: exit %d, %q", args, code, stderr)
		}
	}
	// A name it records already: the hint syncs the lockfile as it is, never locks that name alone.
	if _, stderr, _ := e.pkg("sync", "-f", lock, "app"); !strings.Contains(stderr, "\npkg: hint: '"+e.cmd("sync -f "+lock)+"' with no names syncs what it locks\n") {
		t.Errorf("sync app: %q", stderr)
	}

	addPackage(t, dir, "lib", "1.9")
	e.ok("install", "extra")
	before := rootTree(t, e.root)
	_, stderr, code := e.pkg("sync", "-f", lock, "--frozen")
	if code != 1 || !strings.Contains(stderr, "lib is locked at 1.5, the index now resolves 1.9") {
		t.Errorf("sync --frozen of a stale lockfile: exit %d, %q", code, stderr)
	}
	testfs.SameTree(t, "root after a refused frozen sync", rootTree(t, e.root), before)

	e.ok("sync", "-f", lock) // not frozen: the lockfile wins
	e.checkInstalled("sync of a stale lockfile", "app 1.0, lib 1.5, tool 1.0")

	out, _ := e.ok("lock", "-o", lock) // refreshes the recorded requirements
	if !strings.Contains(out, "locked lib 1.9 (was 1.5)") {
		t.Errorf("lock refresh: %q", out)
	}
	e.ok("sync", "-f", lock, "--frozen")
	e.checkInstalled("frozen sync after lock", "app 1.0, lib 1.9, tool 1.0")
}

// TestSyncFrozenUnresolved: a lockfile whose recorded requirement the repository no longer
// meets (hello=2.0, once 2.0 is removed) is refused by a frozen sync with a hint giving the
// command that locks it again, naming that requirement's package and keeping the others;
// that command works, and the frozen sync then passes.
func TestSyncFrozenUnresolved(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	e := newEnv(t, base, dir)
	addPackage(t, dir, "hello", "1.0")
	addPackage(t, dir, "hello", "2.0")
	addPackage(t, dir, "lib", "1.0")
	lock := filepath.Join(base, "pin.lock")
	e.ok("lock", "-o", lock, "hello=2.0", "lib>=1,<2")
	e.ok("repo", "remove", dir, "hello=2.0")
	_, stderr, code := e.pkg("sync", "--frozen", "-f", lock)
	want := "the repositories no longer meet hello=2.0, which " + lock + " records (so '" + e.cmd("lock -o "+lock) + "' refuses it too): name the packages to lock, hello=2.0 by name alone: '" + e.cmd("lock -o "+lock+" hello 'lib>=1,<2'") + "'\n"
	if code != 1 || !strings.Contains(stderr, "its requirements no longer resolve") || !strings.Contains(stderr, "pkg: hint: ") || !strings.Contains(stderr, want) {
		t.Fatalf("sync --frozen of a lockfile whose requirement is gone: exit %d, %q; want a hint with %s", code, stderr, want)
	}
	e.ok("lock", "-o", lock, "hello", "lib>=1,<2")
	e.ok("sync", "--frozen", "-f", lock)
	e.checkInstalled("frozen sync after the lock the hint gave", "hello 1.0, lib 1.0")
}

// TestSyncRestoresTree: a package whose tree was deleted by hand is installed again by the
// next sync, which does not say the root matches.
func TestSyncRestoresTree(t *testing.T) {
	base := t.TempDir()
	e := newEnv(t, base, syncRepo(t))
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "app")
	e.ok("sync", "-f", lock)
	if err := os.RemoveAll(filepath.Join(e.root, "pkgs", "lib")); err != nil {
		t.Fatal(err)
	}
	if out, _ := e.ok("sync", "-f", lock); !strings.Contains(out, "reinstalled lib 1.5: ") {
		t.Errorf("sync of a root missing lib's tree: %q", out)
	}
	e.checkInstalled("sync after lib's tree was deleted", "app 1.0, lib 1.5")
	if out, _ := e.ok("sync", "-f", lock); !strings.Contains(out, "nothing to do") {
		t.Errorf("sync again: %q", out)
	}
}

// TestUpgradeNamesBlocker: an upgrade that keeps a library names what keeps it below the
// newest version, and below the newest its other dependents allow.
func TestUpgradeNamesBlocker(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	for _, v := range []string{"1.0", "1.2", "2.0"} {
		addPackage(t, dir, "libfoo", v)
	}
	addPackage(t, dir, "appa", "1.0", "libfoo>=1.0,<2")
	addPackage(t, dir, "appc", "1", "libfoo=1.0")
	e := newEnv(t, base, dir)
	e.ok("install", "appa", "appc")
	out, _ := e.ok("upgrade", "libfoo")
	want := "kept libfoo at 1.0: libfoo 2.0 cannot be installed: no version of \"libfoo\" satisfies libfoo=2.0 (the newest) and libfoo>=1.0,<2 (required by appa 1.0); " +
		"nor 1.2: no version of \"libfoo\" satisfies libfoo=1.2 (tried), libfoo>=1.0,<2 (required by appa 1.0) and libfoo=1.0 (required by appc 1)\n"
	if !strings.Contains(out, want) {
		t.Errorf("upgrade libfoo: %q, want %q", out, want)
	}
}

// TestLockPreRelease: a lockfile that took a pre-release (none was released yet) stays
// current when an older release appears, and locking again moves it on to a later
// pre-release of the same release, as install would, never back to the older release.
func TestLockPreRelease(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "jq", "2.0-rc1")
	e := newEnv(t, base, dir)
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "jq")
	addPackage(t, dir, "jq", "1.7")
	e.ok("sync", "-f", lock, "--frozen")
	e.checkInstalled("frozen sync of a locked pre-release", "jq 2.0-rc1")

	addPackage(t, dir, "jq", "2.0-rc2")
	if _, stderr, code := e.pkg("sync", "-f", lock, "--frozen"); code != 1 || !strings.Contains(stderr, "jq is locked at 2.0-rc1, the index now resolves 2.0-rc2") {
		t.Errorf("sync --frozen after 2.0-rc2: exit %d, %q", code, stderr)
	}
	if out, _ := e.ok("lock", "-o", lock); !strings.Contains(out, "locked jq 2.0-rc2 (was 2.0-rc1)") {
		t.Errorf("lock refresh: %q", out)
	}
	e.ok("sync", "-f", lock, "--frozen")
	e.checkInstalled("frozen sync after lock", "jq 2.0-rc2")

	fresh := filepath.Join(base, "fresh.lock")
	if out, _ := e.ok("lock", "-o", fresh, "jq"); !strings.Contains(out, "jq 1.7") {
		t.Errorf("a new lock of jq: %q, want the release 1.7", out)
	}
}

// TestSyncOffline syncs one root from a repository over HTTP, stops the server, and syncs
// a second root sharing the cache on XFS: it needs no network, and its files share their
// blocks with the cache. Session's TestSyncOffline has the offline contract on any
// filesystem, and the refusal of what the cache lacks.
func TestSyncOffline(t *testing.T) {
	base := testfs.Mount(t, "xfs")
	srv := httptest.NewServer(http.FileServer(http.Dir(syncRepo(t))))
	first := newEnv(t, base, srv.URL)
	lock := filepath.Join(base, "pkg.lock")
	first.ok("lock", "-o", lock, "app", "tool")
	first.ok("sync", "-f", lock)
	srv.Close()

	second := newEnv(t, filepath.Join(base, "second"), srv.URL)
	second.cache = first.cache
	out, _ := second.ok("--offline", "sync", "-f", lock, "--frozen")
	if strings.Contains(out, "fetched") || !strings.Contains(out, "installed app 1.0") {
		t.Errorf("offline sync: %q", out)
	}
	second.checkInstalled("offline sync", "app 1.0, lib 1.5, tool 1.10")
	data := filepath.Join(second.root, "pkgs/lib/share/lib/data")
	if shared, mapped, err := testfs.SharedBytes(data); err != nil || shared != 64<<10 {
		t.Errorf("%s: %d of %d bytes shared (%v), want all 64 KiB", data, shared, mapped, err)
	}
	checkDigests(t, second.root, "lib")
}

// TestSyncOfflineRepositoryGone syncs a root from a repository directory, then, offline, a
// fresh root from a copy of that cache, the repository gone: the archives are cached, so
// nothing needs it (a CI job that restores pkg's cache but not the repository).
func TestSyncOfflineRepositoryGone(t *testing.T) {
	first, base, dir, lock := syncedLock(t)
	if err := os.Rename(dir, dir+".gone"); err != nil {
		t.Fatal(err)
	}
	second := newEnv(t, filepath.Join(base, "second"), dir)
	second.cache = first.cache
	if out, _ := second.ok("--offline", "sync", "-f", lock); strings.Contains(out, "fetched") {
		t.Errorf("offline sync: %q", out)
	}
	second.checkInstalled("offline sync", "app 1.0, lib 1.5, tool 1.10")

	// A damaged archive: the hint syncs the lockfile again online, which fetches the version
	// it pins ('pkg fetch lib' would fetch the one the index resolves).
	tars, err := filepath.Glob(filepath.Join(first.cache, "tars", "*.tar"))
	if err != nil || len(tars) == 0 {
		t.Fatalf("cached tars: %v, %v", tars, err)
	}
	for _, tar := range tars {
		if err := os.Truncate(tar, 512); err != nil {
			t.Fatal(err)
		}
	}
	third := newEnv(t, filepath.Join(base, "third"), dir)
	third.cache = first.cache
	refusedOffline(t, third, lock, "damaged archives")
}

// TestSyncOfflineNotCached syncs offline from a cache that lacks an archive of the
// lockfile, as a cache restored under an older lockfile's key does: the hint syncs the
// lockfile online, which fetches the version it pins ('pkg fetch lib' would fetch the one
// the index resolves, lib 2.0), and the new root gets no database.
func TestSyncOfflineNotCached(t *testing.T) {
	first, base, dir, lock := syncedLock(t)
	l, err := repo.ReadLock(lock)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(l.Packages, func(p repo.Package) bool { return p.Name == "lib" })
	for _, ext := range []string{".idx", ".tar"} {
		if err := os.Remove(filepath.Join(first.cache, "tars", l.Packages[i].SHA256+ext)); err != nil {
			t.Fatal(err)
		}
	}
	second := newEnv(t, filepath.Join(base, "second"), dir)
	second.cache = first.cache
	refusedOffline(t, second, lock, "an archive the cache lacks")
	if _, err := os.Stat(filepath.Join(second.root, ".pkg", "db")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("refused sync left a database: %v", err)
	}
}

// movingServer serves the repository directory dir under /old/ until moved is set, then
// under /new/ alone, answering 404 for the other prefix.
func movingServer(t *testing.T, dir string) (srv *httptest.Server, moved *atomic.Bool) {
	files := http.FileServer(http.Dir(dir))
	moved = new(atomic.Bool)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prefix := "/old"
		if moved.Load() {
			prefix = "/new"
		}
		http.StripPrefix(prefix, files).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, moved
}

// TestSyncMovedHTTP syncs from a lockfile whose repository, over HTTP, moved: the
// archive's 404 is advised the --repo that names where it is now (a sync reads no index
// to tell that the repository, not the archive, is gone), which then syncs it.
func TestSyncMovedHTTP(t *testing.T) {
	base := t.TempDir()
	srv, moved := movingServer(t, syncRepo(t))
	e := newEnv(t, base, srv.URL+"/old/")
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "tool")
	moved.Store(true)
	e.root, e.repo = filepath.Join(base, "moved"), srv.URL+"/new/"
	var out, stderr bytes.Buffer
	code := run([]string{"pkg", "--root", e.root, "--cache", e.cache, "sync", "-f", lock}, &out, &stderr)
	if want := "'pkg --root " + e.root + " --cache " + e.cache + " --repo LOCATION sync -f " + lock + "'"; code != 1 || !strings.Contains(stderr.String(), want) {
		t.Errorf("sync from a repository that moved: exit %d, %q; want a hint with %q", code, stderr.String(), want)
	}
	e.ok("sync", "-f", lock)
	e.checkInstalled("sync from where it moved", "tool 1.10")
}

// TestSyncMovedHTTPSeveral: where the lockfile records several repositories, a sync's and
// a run's archive 404 is advised the --repo NAME=LOCATION that names where the one that
// moved is now.
func TestSyncMovedHTTPSeveral(t *testing.T) {
	base := t.TempDir()
	srv, moved := movingServer(t, syncRepo(t))
	other := filepath.Join(base, "other")
	addPackage(t, other, "other", "1.0")
	e := newEnv(t, base, "a="+srv.URL+"/old/")
	lock := filepath.Join(base, "pkg.lock")
	e.ok("--repo", "b="+other, "lock", "-o", lock, "tool", "other")
	moved.Store(true)
	for cmd, want := range map[string]string{
		"sync": " --repo NAME=LOCATION sync -f " + lock + "'",
		"run":  " --repo NAME=LOCATION run --lock " + lock + " tool'",
	} {
		args := []string{"sync", "-f", lock}
		if cmd == "run" {
			args = []string{"run", "--lock", lock, "tool"}
		}
		var stderr bytes.Buffer
		code := run(append([]string{"pkg", "--root", e.root, "--cache", e.cache}, args...), io.Discard, &stderr)
		if code != 1 || !strings.Contains(stderr.String(), want) {
			t.Errorf("%s from a lockfile of two repositories, one moved: exit %d, %q; want a hint with %q", cmd, code, stderr.String(), want)
		}
	}
}

// TestSyncRelocates syncs from a lockfile made against one copy of the repository, with
// --repo naming another: the archives come from the one --repo names.
func TestSyncRelocates(t *testing.T) {
	base := t.TempDir()
	dir := syncRepo(t)
	e := newEnv(t, base, dir)
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "app")
	mirror := filepath.Join(base, "mirror")
	if err := os.Rename(dir, mirror); err != nil {
		t.Fatal(err)
	}
	e.repo = serve(t, mirror)
	_, stderr := e.ok("sync", "-f", lock)
	e.checkInstalled("sync from a mirror", "app 1.0, lib 1.5")
	if want := "pkg: note: using the repository at " + e.repo; !strings.Contains(stderr, want) || !strings.Contains(stderr, "in place of file://"+dir+"/, which "+lock+" records") {
		t.Errorf("sync from a mirror: stderr %q; want a note that it uses %s", stderr, e.repo)
	}
	if out, _ := e.ok("lock", "-o", lock); !strings.HasPrefix(out, "repository "+strings.TrimSuffix(e.repo, "/")+"/ (was file://"+dir+"/)\n") {
		t.Errorf("lock against a mirror: %q; want the repository's change first", out)
	}
}

// TestLockConstraintSyntax locks each form of requirement the command line takes.
func TestLockConstraintSyntax(t *testing.T) {
	base := t.TempDir()
	dir := syncRepo(t)
	addPackage(t, dir, "plugin", "1.0", "tool@1.0", "lib>=1.0,<1.5")
	e := newEnv(t, base, dir)
	tests := []struct {
		args []string
		want string // locked "name version" lines
	}{
		{[]string{"tool"}, "tool 1.10"},
		{[]string{"tool=1.0"}, "tool 1.0"},
		{[]string{"tool@1.0"}, "tool 1.0"},
		{[]string{"tool<1.10"}, "tool 1.0"},
		{[]string{"tool>=1.2"}, "tool 1.10"},
		{[]string{"lib>=1.1,<2"}, "lib 1.5"},
		{[]string{"lib>1,<=1.5", "app"}, "app 1.0, lib 1.5"},
		{[]string{"plugin"}, "lib 1.0, plugin 1.0, tool 1.0"},
	}
	lock := filepath.Join(base, "pkg.lock")
	for _, tt := range tests {
		e.ok(append([]string{"lock", "-o", lock}, tt.args...)...)
		l, err := repo.ReadLock(lock)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range l.Packages {
			got = append(got, p.Name+" "+p.Version)
		}
		if strings.Join(got, ", ") != tt.want {
			t.Errorf("lock %q: %q, want %q", tt.args, strings.Join(got, ", "), tt.want)
		}
	}
	_, stderr, code := e.pkg("lock", "-o", lock, "plugin", "tool>=1.5")
	if code != 1 || !strings.Contains(stderr, `no version of "tool" satisfies tool>=1.5 (requested) and tool@1.0 (required by plugin 1.0)`) {
		t.Errorf("lock of conflicting requirements: exit %d, %q", code, stderr)
	}
	for _, arg := range []string{"tool>=", "tool@1.0,<2", "To+ol", "tool >=1"} {
		if _, stderr, code := e.pkg("lock", "-o", lock, arg); code != 2 || !strings.Contains(stderr, "requirement") {
			t.Errorf("lock %q: exit %d, %q; want a usage error", arg, code, stderr)
		}
	}
	if _, stderr, code := e.pkg("lock", "-o", lock, "Tool"); code != 1 || !strings.Contains(stderr, `package "Tool" not found; did you mean "tool"?`) { // an old npm name's shape
		t.Errorf("lock Tool: exit %d, %q; want not found, did you mean tool", code, stderr)
	}
}

func TestUpgrade(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo")
	addPackage(t, dir, "lib", "1.5")
	addPackage(t, dir, "app", "1.0", "lib>=1")
	addPackage(t, dir, "plugin", "1.0", "lib<2")
	addPackage(t, dir, "tool", "1.0")
	e := newEnv(t, t.TempDir(), dir)
	e.ok("install", "app", "plugin", "tool")
	if out, _ := e.ok("upgrade"); out != "everything is up to date\n" {
		t.Errorf("upgrade with nothing newer: %q", out)
	}

	addPackage(t, dir, "lib", "1.9")
	addPackage(t, dir, "lib", "2.0")
	addPackage(t, dir, "app", "1.1", "lib>=2")
	addPackage(t, dir, "tool", "1.10")
	addPackage(t, dir, "tool", "1.9")
	out, _ := e.ok("upgrade", "tool")
	if !strings.Contains(out, "upgraded tool 1.0 to 1.10") || strings.Contains(out, "lib") {
		t.Errorf("upgrade tool: %q", out)
	}
	e.checkInstalled("upgrade tool", "app 1.0, lib 1.5, plugin 1.0, tool 1.10")

	// plugin 1.0 holds lib below 2, so app cannot move to 1.1, and upgrade says why.
	out, _ = e.ok("upgrade")
	if !strings.Contains(out, "upgraded lib 1.5 to 1.9") || strings.Contains(out, "upgraded app") ||
		!strings.Contains(out, "kept app at 1.0: app 1.1 cannot be installed: ") || !strings.Contains(out, "lib<2 (required by plugin 1.0)") ||
		!strings.Contains(out, "lib goes from 1.5 to 1.9, not further: lib 2.0 cannot be installed: ") || strings.Contains(out, "(requested)") {
		t.Errorf("upgrade held back by plugin: %q", out)
	}
	if out, _ := e.ok("upgrade"); !strings.HasSuffix(out, "nothing to upgrade\n") || !strings.Contains(out, "kept app at 1.0") {
		t.Errorf("upgrade with only kept packages: %q", out)
	}
	e.checkInstalled("upgrade held back", "app 1.0, lib 1.9, plugin 1.0, tool 1.10")

	addPackage(t, dir, "plugin", "2.0", "lib>=1")
	out, _ = e.ok("upgrade")
	for _, line := range []string{"upgraded lib 1.9 to 2.0", "upgraded app 1.0 to 1.1", "upgraded plugin 1.0 to 2.0"} {
		if !strings.Contains(out, line) {
			t.Errorf("upgrade: no %q in\n%s", line, out)
		}
	}
	e.checkInstalled("upgrade", "app 1.1, lib 2.0, plugin 2.0, tool 1.10")
	if out, _ := e.ok("upgrade"); out != "everything is up to date\n" {
		t.Errorf("second upgrade: %q", out)
	}
	if _, stderr, code := e.pkg("upgrade", "nope"); code != 1 || !strings.Contains(stderr, "upgrade nope: not installed") {
		t.Errorf("upgrade nope: exit %d, %q", code, stderr)
	}
	if _, stderr, code := e.pkg("upgrade", "tool>=1|app"); code != 2 || !strings.Contains(stderr, "upgrade takes names of installed packages, not tool>=1|app") {
		t.Errorf("upgrade of alternatives, which no hold can be: exit %d, %q", code, stderr)
	}
}

// TestUpgradeNotOffered upgrades from a repository that no longer offers tool and offers
// only an older old: both stay, each with a line saying so.
func TestUpgradeNotOffered(t *testing.T) {
	base := t.TempDir()
	first := filepath.Join(base, "first")
	addPackage(t, first, "app", "1.0")
	addPackage(t, first, "old", "1.0")
	addPackage(t, first, "tool", "1.0")
	e := newEnv(t, base, first)
	e.ok("install", "app", "old", "tool")

	e.repo = filepath.Join(base, "second")
	addPackage(t, e.repo, "app", "1.0")
	addPackage(t, e.repo, "app", "1.1")
	addPackage(t, e.repo, "old", "0.8")
	addPackage(t, e.repo, "old", "0.9")
	kept := []string{
		"kept old at 1.0: the repository offers only older versions (newest 0.9)\n",
		"kept tool at 1.0: the repository no longer offers it\n",
	}
	out, _ := e.ok("upgrade")
	for _, line := range append(kept, "upgraded app 1.0 to 1.1") {
		if !strings.Contains(out, line) {
			t.Errorf("upgrade: no %q in\n%s", line, out)
		}
	}
	e.checkInstalled("upgrade", "app 1.1, old 1.0, tool 1.0")
	if out, _ := e.ok("upgrade"); out != strings.Join(kept, "")+"nothing to upgrade\n" {
		t.Errorf("upgrade with only packages no longer offered: %q", out)
	}
	if out, _ := e.ok("upgrade", "app"); out != "everything is up to date\n" {
		t.Errorf("upgrade app: %q", out)
	}
	if out, _ := e.ok("upgrade", "tool"); out != kept[1]+"nothing to upgrade\n" {
		t.Errorf("upgrade tool: %q", out)
	}
}

func TestEnv(t *testing.T) {
	for _, root := range []string{"/opt/pkg", `/tmp/a b/$HOME/"q"/back\slash/` + "`tick`"} {
		e := newEnv(t, t.TempDir(), demoRepo)
		e.root = root
		out, _ := e.ok("env")
		if !strings.HasPrefix(out, `export PATH="`) || !strings.HasSuffix(out, `/bin:$PATH"`+"\n") {
			t.Errorf("env: %q", out)
		}
		got, err := exec.Command("sh", "-c", out+`printf %s "$PATH"`).Output()
		if want := root + "/bin:" + os.Getenv("PATH"); err != nil || string(got) != want {
			t.Errorf("sh after env %q: PATH %q, %v; want %q", out, got, err, want)
		}
		if out, _ := e.ok("env", "--bin-dir"); out != root+"/bin\n" {
			t.Errorf("env --bin-dir: %q", out)
		}
	}
}

// TestSyncAllOrNothing makes the last swap of a sync fail (an immutable package directory
// cannot be renamed): the packages swapped before it go back, and the root and database
// are as they were.
func TestSyncAllOrNothing(t *testing.T) {
	base := t.TempDir()
	e := newEnv(t, base, syncRepo(t))
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "app", "tool@1.0")
	e.ok("install", "app", "lib@1.0", "tool@1.10")
	mutable := immutable(t, filepath.Join(e.root, "pkgs", "tool"))
	before := rootTree(t, e.root)

	_, stderr, code := e.pkg("sync", "-f", lock)
	if code != 1 || !strings.Contains(stderr, "install tool 1.0") {
		t.Errorf("sync with tool immutable: exit %d, %q", code, stderr)
	}
	testfs.SameTree(t, "root after a failed sync", rootTree(t, e.root), before)
	e.checkInstalled("after a failed sync", "app 1.0, lib 1.0, tool 1.10")

	mutable()
	e.ok("sync", "-f", lock)
	e.checkInstalled("after sync", "app 1.0, lib 1.5, tool 1.0")
}

// TestSyncMovesCommand syncs a lockfile where command node moves from an installed package
// the lockfile drops (node18) to one it adds (node20): one commit removes the one and
// installs the other, and bin/node follows. Without --keep-extra only; with it, the clash
// is refused and nothing changes.
func TestSyncMovesCommand(t *testing.T) {
	base := t.TempDir()
	for _, name := range []string{"node18", "node20"} {
		archive := pax(t, td("bin/"), moded(tf("bin/node", "#!/bin/sh\necho "+name+"\n"), 0o755))
		addHostile(t, base, repo.Package{Name: name, Version: "1", Bin: testrepo.Commands("bin/node")}, archive)
	}
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "node18")
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "node20")
	before := rootTree(t, e.root)
	_, stderr, code := e.pkg("sync", "-f", lock, "--keep-extra")
	if code != 1 || !strings.Contains(stderr, `command "node" is already provided by package node18 (remove node18 first to have node20's)`) {
		t.Errorf("sync --keep-extra: exit %d, %q", code, stderr)
	}
	testfs.SameTree(t, "root after a refused sync", rootTree(t, e.root), before)
	out, _ := e.ok("sync", "-f", lock)
	if !strings.Contains(out, "installed node20 1") || !strings.Contains(out, "removed node18 1\n") {
		t.Errorf("sync: %q", out)
	}
	if got := e.installed(); got != "node20 1" {
		t.Errorf("after sync: %s", got)
	}
	if got, err := exec.Command(filepath.Join(e.root, "bin", "node")).Output(); err != nil || string(got) != "node20\n" {
		t.Errorf("bin/node: %q, %v", got, err)
	}
	if ents, _ := os.ReadDir(filepath.Join(e.root, ".pkg", "trash")); len(ents) != 0 {
		t.Errorf("trash after sync: %v", ents)
	}
}

// TestInstallKeepsDependents checks that an install honours the depends of installed
// packages: it moves a dependent along when it must, refuses when no version of the
// dependent allows the request, and leaves installed dependencies where they are.
func TestInstallKeepsDependents(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo")
	addPackage(t, dir, "lib", "1.0")
	addPackage(t, dir, "lib", "2.0")
	addPackage(t, dir, "app", "1.0", "lib>=1.0")
	addPackage(t, dir, "app", "2.0", "lib>=2.0")
	e := newEnv(t, t.TempDir(), dir)
	e.ok("install", "app")
	e.checkInstalled("install app", "app 2.0, lib 2.0")

	out, _ := e.ok("install", "lib=1.0")
	if !strings.Contains(out, "downgraded lib 2.0 to 1.0") || !strings.Contains(out, "downgraded app 2.0 to 1.0") {
		t.Errorf("install lib=1.0 under app 2.0: %q", out)
	}
	e.checkInstalled("install lib=1.0", "app 1.0, lib 1.0")

	addPackage(t, dir, "tool", "1.0", "lib")
	if out, _ := e.ok("install", "tool"); strings.Contains(out, "lib") {
		t.Errorf("install tool moved the installed lib: %q", out)
	}
	e.checkInstalled("install tool", "app 1.0, lib 1.0, tool 1.0")

	addPackage(t, dir, "pin", "1.0", "lib>=2.0")
	if _, stderr, code := e.pkg("install", "pin"); code != 1 || !strings.Contains(stderr, "lib=1.0") { // lib=1.0 holds it
		t.Errorf("install pin, which needs lib>=2.0, with lib=1.0 held: exit %d, %q", code, stderr)
	}
	e.ok("install", "pin", "lib") // named without a version, lib is held no more
	e.checkInstalled("install pin", "app 1.0, lib 2.0, pin 1.0, tool 1.0")
	_, stderr, code := e.pkg("install", "lib=1.0")
	if code != 1 || !strings.Contains(stderr, `no version of "lib" satisfies lib=1.0 (requested), `) || !strings.Contains(stderr, ` and lib>=2.0 (required by pin 1.0)`) {
		t.Errorf("install lib=1.0 under pin: exit %d, %q", code, stderr)
	}
	e.checkInstalled("refused install", "app 1.0, lib 2.0, pin 1.0, tool 1.0")
}

// TestSyncRefusesEditedLock checks that sync refuses a lockfile whose package lines were
// edited by hand (a version that names another archive), changing nothing.
func TestSyncRefusesEditedLock(t *testing.T) {
	base := t.TempDir()
	e := newEnv(t, base, syncRepo(t))
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "app")
	data, err := os.ReadFile(lock)
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(data, []byte(`"name":"lib","version":"1.5"`), []byte(`"name":"lib","version":"1.7"`), 1)
	if bytes.Equal(edited, data) {
		t.Fatalf("no lib 1.5 in\n%s", data)
	}
	if err := os.WriteFile(lock, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := e.pkg("sync", "-f", lock)
	if code != 1 || !strings.Contains(stderr, "is not the digest of its packages") || !strings.Contains(stderr, "edited by hand?") ||
		!strings.Contains(stderr, "pkg: hint: pkg reads a lockfile only as pkg lock wrote it") {
		t.Errorf("sync of an edited lockfile: exit %d, %q", code, stderr)
	}
	if err := os.WriteFile(lock, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = e.pkg("sync", "-f", lock)
	if code != 1 || !strings.Contains(stderr, "(truncated?)") || !strings.Contains(stderr, "pkg: hint: pkg reads a lockfile only as pkg lock wrote it") {
		t.Errorf("sync of a truncated lockfile: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(e.root); !os.IsNotExist(err) {
		t.Errorf("the refused sync made the root: %v", err)
	}
}

// TestLockRefreshGone: refreshing a lockfile that requires a package the repository no
// longer has names the requirements it records and how to change them.
func TestLockRefreshGone(t *testing.T) {
	base := t.TempDir()
	e := newEnv(t, base, syncRepo(t))
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "app", "extra")
	other := filepath.Join(base, "other")
	addPackage(t, other, "app", "1.0", "lib>=1,<2")
	addPackage(t, other, "lib", "1.5")
	e.repo = other
	_, stderr, code := e.pkg("lock", "-o", lock)
	if code != 1 || !strings.Contains(stderr, `package "extra" not found`) ||
		!strings.Contains(stderr, "these are the requirements "+lock+" records (app extra): to change them, name the ones to lock, '"+e.cmd("lock -o "+lock+" NAME...")+"'") {
		t.Errorf("lock refresh with extra gone: exit %d, %q", code, stderr)
	}
}

// TestSyncDefaultRoot syncs a lockfile into the default root, which holds packages the
// lockfile does not list: nothing is removed unless the root is named.
func TestSyncDefaultRoot(t *testing.T) {
	base := t.TempDir()
	t.Setenv("XDG_DATA_HOME", filepath.Join(base, "data"))
	t.Setenv("PKG_ROOT", "")
	e := newEnv(t, base, syncRepo(t))
	e.root = filepath.Join(base, "data", "pkg")
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "tool@1.0")
	e.ok("install", "app")
	before := rootTree(t, e.root)
	var out, stderr bytes.Buffer
	code := run([]string{"pkg", "--cache", e.cache, "sync", "-f", lock}, &out, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "sync "+lock+" into your default root "+e.root+": app, lib would be removed, as "+lock+" does not list them; nothing was changed: pass --keep-extra") {
		t.Errorf("sync into the default root: exit %d, %q", code, stderr.String())
	}
	testfs.SameTree(t, "default root after the refused sync", rootTree(t, e.root), before)
	e.ok("sync", "-f", lock) // --root named
	e.checkInstalled("sync with --root", "tool 1.0")
}

// TestSyncDefaultRootAsked syncs into the default root a lockfile that has a package the
// root holds as asked for as another's dependency alone, and lacks another: recording the
// one so is refused, as removing the other is, in a clause of its own, unless the root is
// named, and with --keep-extra the request stays.
func TestSyncDefaultRootAsked(t *testing.T) {
	base := t.TempDir()
	t.Setenv("XDG_DATA_HOME", filepath.Join(base, "data"))
	t.Setenv("PKG_ROOT", "")
	e := newEnv(t, base, syncRepo(t))
	e.root = filepath.Join(base, "data", "pkg")
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "app")
	e.ok("install", "app", "lib", "extra")
	before := rootTree(t, e.root)
	sync := func(args ...string) (string, int) {
		var out, stderr bytes.Buffer
		code := run(append([]string{"pkg", "--cache", e.cache, "sync", "-f", lock}, args...), &out, &stderr)
		return stderr.String(), code
	}
	if stderr, code := sync(); code != 1 || !strings.Contains(stderr, "sync "+lock+" into your default root "+e.root+": extra would be removed, as "+lock+" does not list it; lib would no longer be asked for, kept as a dependency, as "+lock+" lists it; nothing was changed: pass --keep-extra") {
		t.Errorf("sync into the default root: exit %d, %q", code, stderr)
	}
	testfs.SameTree(t, "default root after the refused sync", rootTree(t, e.root), before)
	if stderr, code := sync("--keep-extra"); code != 0 {
		t.Errorf("sync --keep-extra into the default root: exit %d, %q", code, stderr)
	}
	if out, _ := e.ok("info", "lib"); !strings.Contains(out, "requested: yes") {
		t.Errorf("info lib after a sync --keep-extra: %q", out)
	}
	e.ok("sync", "-f", lock) // --root named
	if out, _ := e.ok("info", "lib"); !strings.Contains(out, "requested: no") {
		t.Errorf("info lib after a sync with --root: %q", out)
	}
	e.ok("remove", "app")
	if out, _ := e.ok("autoremove"); !strings.HasPrefix(out, "removed lib ") {
		t.Errorf("autoremove once app is gone: %q", out)
	}
}

// TestSyncKeepExtraHelp: sync's help says that --keep-extra keeps the requests it would
// record as dependencies too, not only the packages it would remove.
func TestSyncKeepExtraHelp(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	want := "--keep-extra            keep installed packages the lockfile does not list, and the requests of those it lists only as another's dependency"
	if out, _ := e.ok("sync", "--help"); !strings.Contains(out, want) {
		t.Errorf("sync --help: %q, want %q", out, want)
	}
}

// TestSyncWrongSize syncs a lockfile whose size of a package is wrong and whose sha256 is
// right (locked from an index that declared it so): with the archive in the cache and
// without, the sync is refused the same way, naming the package, both sizes and the
// lockfile to correct, and the root and the cache stay as they were; the hint says the
// root was not changed only of a command that was to change it.
func TestSyncWrongSize(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	tool := addPackage(t, dir, "tool", "1.0")
	addPackage(t, dir, "lib", "1.0")
	e := newEnv(t, base, dir)
	good, bad := filepath.Join(base, "good.lock"), filepath.Join(base, "bad.lock")
	e.ok("lock", "-o", good, "tool")
	index := filepath.Join(dir, "index.json")
	data, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	var ix map[string]any
	if err := json.Unmarshal(data, &ix); err != nil {
		t.Fatal(err)
	}
	for _, p := range ix["packages"].([]any) {
		if p := p.(map[string]any); p["name"] == "tool" {
			p["size"] = tool.Size - 1
		}
	}
	if data, err = json.Marshal(ix); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(index, data, 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok("lock", "-o", bad, "tool")
	e.ok("install", "lib")
	// pkg mirror --lock and pkg run --lock take their sizes from the lockfile too, which is
	// what to correct. Only a command that was to change the root says it was not changed:
	// install does, and mirror, run and fetch, which change none, do not.
	fromLock := "pkg: hint: " + bad + " declares that size, as the repository's index did when it was locked: the lockfile is what is wrong, not the archive; lock it again with '" + e.cmd("lock -o "+bad) + "' once the index declares the archive's size (tell its publisher if it does not)\n"
	fromIndex := "pkg: hint: the repository's index declares that size: tell its publisher (the publisher of a local repository corrects its entry by adding the archive again: '" + e.cmd("repo add REPO_DIR FILE --replace") + "')"
	for _, tt := range []struct {
		args []string
		hint string
	}{
		{[]string{"mirror", "--lock", bad, filepath.Join(base, "mirror")}, fromLock},
		{[]string{"run", "--lock", bad, "tool"}, fromLock},
		{[]string{"fetch", "tool"}, fromIndex + "\n"},
		{[]string{"mirror", "tool", filepath.Join(base, "mirror")}, fromIndex + "\n"},
		{[]string{"install", "tool"}, fromIndex + "; the root was not changed\n"},
	} {
		if _, stderr, code := e.pkg(tt.args...); code != 1 || !strings.HasSuffix(stderr, tt.hint) {
			t.Errorf("%s, tool declared %d bytes: exit %d, %q; want the hint %q", strings.Join(tt.args, " "), tool.Size-1, code, stderr, tt.hint)
		}
	}
	want := fmt.Sprintf("pkg: fetch tool 1.0: its archive is %d bytes, not the %d declared; its sha256 is the one declared, so the size declared is wrong\npkg: hint: %s declares that size, as the repository's index did when it was locked: the lockfile is what is wrong, not the archive, and the root was not changed; lock it again", tool.Size, tool.Size-1, bad)
	for _, warm := range []bool{false, true} {
		if warm {
			fresh := newEnv(t, t.TempDir(), dir)
			fresh.cache = e.cache
			fresh.ok("sync", "-f", good)
		}
		root, cached := rootTree(t, e.root), e.cachedNames()
		_, stderr, code := e.pkg("sync", "-f", bad)
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("sync of a lockfile declaring tool %d bytes, cached %v: exit %d, %q; want %q", tool.Size-1, warm, code, stderr, want)
		}
		testfs.SameTree(t, "the root after the refused sync", rootTree(t, e.root), root)
		if got := e.cachedNames(); !slices.Equal(got, cached) {
			t.Errorf("cached after the refused sync, cached %v: %q, want %q", warm, got, cached)
		}
	}
	// With the archive in the cache, a dry run refuses it as the sync does, online and
	// offline; it cannot know the size of one it does not fetch.
	refused := fmt.Sprintf("pkg: fetch tool 1.0: its archive is %d bytes, not the %d declared", tool.Size, tool.Size-1)
	for _, args := range [][]string{{"sync", "--dry-run", "-f", bad}, {"--offline", "sync", "--dry-run", "-f", bad}} {
		if _, stderr, code := e.pkg(args...); code != 1 || !strings.Contains(stderr, refused) || !strings.Contains(stderr, "hint: "+bad+" declares that size") {
			t.Errorf("%s: exit %d, %q; want %q and the hint that %s declares it", strings.Join(args, " "), code, stderr, refused, bad)
		}
	}
}

// TestReinstallTakesEntry reinstalls a package whose index entry was republished, same
// archive, with an env and other depends: the reinstall restores the files and takes the
// env (its command's wrapper), keeping the installed depends, which upgrade then takes.
func TestReinstallTakesEntry(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	e := newEnv(t, base, dir)
	archive := filepath.Join(base, "lib-1.0.tar")
	script := "#!/bin/sh\necho \"lib 1.0 $GREETING\"\n"
	if err := os.WriteFile(archive, pax(t, td("bin/"), moded(tf("bin/lib", script), 0o755),
		tf("share/lib/version", "1.0\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	addPackage(t, dir, "dep", "1.0")
	e.ok("repo", "add", dir, archive, "--name", "lib", "--version", "1.0", "--bin", "bin/lib")
	e.ok("install", "lib")
	e.ok("repo", "add", dir, archive, "--name", "lib", "--version", "1.0", "--bin", "bin/lib",
		"--env", "GREETING=from {root}", "--depends", "dep", "--replace")
	if out, _ := e.ok("outdated"); !strings.Contains(out, "the repository's entry of lib 1.0 is not the one installed") {
		t.Errorf("outdated after the entry was republished: %q", out)
	}
	os.Remove(filepath.Join(e.root, "pkgs", "lib", "share", "lib", "version"))
	e.ok("install", "--reinstall", "lib")
	if out, err := exec.Command(filepath.Join(e.root, "bin", "lib")).CombinedOutput(); err != nil || string(out) != "lib 1.0 from "+e.root+"\n" {
		t.Errorf("bin/lib after the reinstall: %v, %q; want the republished env", err, out)
	}
	e.ok("verify")
	if out, _ := e.ok("upgrade"); !strings.Contains(out, "reinstalled lib 1.0") || !strings.Contains(out, "installed dep 1.0") {
		t.Errorf("upgrade after the entry was republished: %q", out)
	}
	if got := e.installed(); got != "dep 1.0, lib 1.0" {
		t.Errorf("after the upgrade: installed %q, want dep and lib", got)
	}
	if out, _ := e.ok("upgrade"); !strings.Contains(out, "everything is up to date") {
		t.Errorf("upgrade again: %q", out)
	}

	// The publisher republishes the version with another archive: upgrade takes it.
	fixed := filepath.Join(base, "lib-1.0-fixed.tar")
	if err := os.WriteFile(fixed, packageTar(t, "lib", "1.0", 'w'), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok("repo", "add", dir, fixed, "--name", "lib", "--version", "1.0", "--bin", "bin/lib", "--replace")
	if _, stderr, code := e.pkg("install", "--reinstall", "lib"); code != 1 || !strings.Contains(stderr, "'"+e.cmd("upgrade lib")+"' takes the repository's") {
		t.Errorf("reinstall of a republished version: exit %d, %q", code, stderr)
	}
	if out, _ := e.ok("upgrade"); !strings.Contains(out, "replaced lib 1.0 with the entry the repository now has of it") {
		t.Errorf("upgrade after the archive was republished: %q", out)
	}
	e.checkInstalled("after the upgrade", "dep 1.0, lib 1.0")
}

// TestSyncRepoGone syncs a lockfile whose repository directory is gone, plainly and
// --frozen (which reads the repository's index first): the refusal names the lockfile and
// the repository, the hint the --repo NAME=LOCATION that syncs from where it is now, which
// then does.
func TestSyncRepoGone(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "tmprepo")
	addPackage(t, dir, "tool", "1.0")
	e := newEnv(t, base, dir)
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "tool")
	moved := filepath.Join(base, "moved")
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	// Offline, with no copy of its index in the cache, --frozen is refused the same way:
	// going online would not find the repository either.
	fresh := filepath.Join(t.TempDir(), "cache")
	for _, args := range [][]string{{"--offline", "--cache", fresh, "sync", "--frozen", "-f", lock}, {"sync", "-f", lock}, {"sync", "--frozen", "-f", lock}} {
		globals, sync := "--root "+e.root+" --cache "+e.cache, "sync" // the hint keeps --offline and --frozen
		if args[0] == "--offline" {
			globals = "--root " + e.root + " --cache " + fresh + " --offline"
		}
		if slices.Contains(args, "--frozen") {
			sync += " --frozen"
		}
		var stderr bytes.Buffer // neither --repo nor PKG_REPO
		code := run(append([]string{"pkg", "--root", e.root, "--cache", e.cache}, args...), io.Discard, &stderr)
		for _, want := range []string{
			"pkg: sync " + lock + ": repository tmprepo (from lockfile " + lock + "): ",
			"no repository at " + dir,
			"pkg: hint: the repository is no longer where " + lock + " records it: name where it is now, or a copy of it, with 'pkg " + globals + " --repo tmprepo=LOCATION " + sync + " -f " + lock + "'",
		} {
			if code != 1 || !strings.Contains(stderr.String(), want) {
				t.Errorf("%v with the repository gone: exit %d, %s\nwant %s", args, code, stderr.String(), want)
			}
		}
		if strings.Contains(stderr.String(), "check --repo") || strings.Contains(stderr.String(), "online") {
			t.Errorf("%v with no --repo given: %s\nwant no advice on --repo as given, nor on going online", args, stderr.String())
		}
		if args[0] == "--offline" {
			continue
		}
		e.repo = "tmprepo=" + moved
		e.ok(args...)
		e.checkInstalled(fmt.Sprint(args, " from where the repository went"), "tool 1.0")
	}
}

// refusedOffline syncs lock offline in e and checks the refusal's exit and its hint: the
// lockfile synced again online, which fetches the versions it pins. what says why.
func refusedOffline(t *testing.T, e *env, lock, what string) {
	t.Helper()
	_, stderr, code := e.pkg("--offline", "sync", "-f", lock)
	if want := "\npkg: hint: run '" + e.cmd("sync -f "+lock) + "' online, without --offline"; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("offline sync of %s: exit %d, %q, want %q", what, code, stderr, want)
	}
}

// syncedLock returns a root synced from a lockfile of app and tool, made in a temporary
// directory base from syncRepo's repository dir, and the lockfile's path.
func syncedLock(t *testing.T) (first *env, base, dir, lock string) {
	t.Helper()
	base = t.TempDir()
	dir = syncRepo(t)
	first = newEnv(t, base, dir)
	lock = filepath.Join(base, "pkg.lock")
	first.ok("lock", "-o", lock, "app", "tool")
	first.ok("sync", "-f", lock)
	return first, base, dir, lock
}

// TestReinstallNotOffered: a reinstall of a version the repository no longer offers is
// refused naming the repository and, where the cache still holds the archive installed,
// saying so, with the advice to reinstall it from there offline, which works though the
// repository is still in effect; without the archive, the advice is another repository.
// The refusal said only "package not found".
func TestReinstallNotOffered(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "lib", "1.0")
	e := newEnv(t, base, dir)
	e.ok("install", "lib")
	e.ok("repo", "remove", dir, "lib=1.0")
	addPackage(t, dir, "lib", "2.0")
	_, stderr, code := e.pkg("install", "--reinstall", "lib")
	if code != 1 || !strings.Contains(stderr, "pkg: reinstall lib 1.0: repository file://"+dir+"/ does not offer it") || !strings.Contains(stderr, "the cache still holds the archive installed") ||
		!strings.Contains(stderr, "pkg: hint: '"+e.cmd("--offline install --reinstall lib")+"' reinstalls it from the cache") || !strings.Contains(stderr, "'"+e.cmd("upgrade lib")+"'") {
		t.Fatalf("reinstall of a version no longer offered: exit %d\n%s", code, stderr)
	}
	os.Remove(filepath.Join(e.root, "pkgs", "lib", "bin", "lib"))
	if out, stderr := e.ok("--offline", "install", "--reinstall", "lib"); !strings.Contains(out, "reinstalled lib 1.0") {
		t.Errorf("offline reinstall from the cache: %q %q", out, stderr)
	}
	e.ok("verify")

	e.ok("cache", "clean")
	if _, stderr, code := e.pkg("install", "--reinstall", "lib"); code != 1 || strings.Contains(strings.ReplaceAll(stderr, "--cache "+e.cache, ""), "cache") ||
		!strings.Contains(stderr, "pkg: hint: give a repository that still offers it") {
		t.Errorf("reinstall of a version no longer offered nor cached: exit %d\n%s", code, stderr)
	}
}

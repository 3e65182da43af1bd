package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pkg/db"
	"pkg/internal/testfs"
	"pkg/repo"
)

// TestMain deletes the pkg command testfs.PkgBinary built, once for the package's tests.
func TestMain(m *testing.M) {
	code := m.Run()
	testfs.RemovePkgBinary()
	os.Exit(code)
}

// TestFetchTwoProcesses runs two pkg processes that fetch the same package into one cache
// at the same time: the server holds the first download until the second says it waits
// for it, naming it. Both succeed, the archive is downloaded once, and the cache holds one
// entry and no temporary file.
func TestFetchTwoProcesses(t *testing.T) {
	bin := testfs.PkgBinary(t)
	h := holdDownloads(t)
	cache := filepath.Join(t.TempDir(), "cache")
	fetch := func() *exec.Cmd { return exec.Command(bin, "--cache", cache, "--repo", h.URL, "fetch", "libgreet") }

	first := fetch()
	var out1 bytes.Buffer
	first.Stdout, first.Stderr = &out1, &out1
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { first.Process.Kill() })
	<-h.got
	second := fetch()
	out2 := waitForLine(t, second, fmt.Sprintf("libgreet 1.0.0: waiting for pid %d (pkg --cache %s", first.Process.Pid, cache))
	h.free()
	if err := first.Wait(); err != nil || !strings.Contains(out1.String(), "fetched libgreet 1.0.0") {
		t.Errorf("first process: %v\n%s", err, &out1)
	}
	if err := second.Wait(); err != nil || !strings.Contains(out2(), "libgreet 1.0.0 is in the cache: another pkg fetched it") {
		t.Errorf("second process: %v\n%s", err, out2())
	}
	if n := h.downloads.Load(); n != 1 {
		t.Errorf("the server saw %d downloads, want 1", n)
	}
	sha := indexSHA(t, "libgreet")
	if got := names(t, filepath.Join(cache, "tars")); got != sha+".idx "+sha+".tar" {
		t.Errorf("cache tars: %s", got)
	}
	if got := names(t, filepath.Join(cache, "tmp")); got != "" {
		t.Errorf("cache tmp: %s", got)
	}
}

// TestFetchAfterKilledFetch kills a pkg process downloading a package while a second waits
// for it: the second downloads the package itself.
func TestFetchAfterKilledFetch(t *testing.T) {
	bin := testfs.PkgBinary(t)
	h := holdDownloads(t)
	cache := filepath.Join(t.TempDir(), "cache")
	fetch := func() *exec.Cmd { return exec.Command(bin, "--cache", cache, "--repo", h.URL, "fetch", "libgreet") }

	first := fetch()
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	<-h.got
	second := fetch()
	out := waitForLine(t, second, ", fetching it into the cache")
	first.Process.Kill()
	first.Wait()
	h.free()
	if err := second.Wait(); err != nil || !strings.Contains(out(), "fetched libgreet 1.0.0") {
		t.Errorf("second process: %v\n%s", err, out())
	}
	if n := h.downloads.Load(); n != 2 {
		t.Errorf("the server saw %d downloads, want 2", n)
	}
	sha := indexSHA(t, "libgreet")
	if got := names(t, filepath.Join(cache, "tars")); got != sha+".idx "+sha+".tar" {
		t.Errorf("cache tars: %s", got)
	}
}

// heldServer serves the demo repository, holding every download until free is called (at
// the test's end, or after twice lineWait, at the latest), and counting them; got
// receives when each starts.
type heldServer struct {
	*httptest.Server
	downloads atomic.Int32
	got       chan struct{}
	release   chan struct{}
	once      sync.Once
}

func holdDownloads(t *testing.T) *heldServer {
	h := &heldServer{got: make(chan struct{}, 8), release: make(chan struct{})}
	files := http.FileServer(http.Dir(demoRepo))
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".tar.gz") {
			h.downloads.Add(1)
			h.got <- struct{}{}
			select {
			case <-h.release:
			case <-time.After(2 * lineWait): // a test that never frees them fails, not hangs
			}
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		h.free()
		h.Close()
	})
	return h
}

// free lets the held downloads go on, and those to come.
func (h *heldServer) free() { h.once.Do(func() { close(h.release) }) }

// lineWait bounds waitForLine's wait, which a process slowed by a loaded machine (CI runs
// the crash tests' syncs beside these) must not reach.
const lineWait = 90 * time.Second

// waitForLine starts cmd and returns once its output has a line containing want. output
// waits for cmd to close its output and returns all of it.
func waitForLine(t *testing.T, cmd *exec.Cmd, want string) (output func() string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() }) // a no-op once it exited
	w.Close()
	seen, done := make(chan struct{}), make(chan struct{})
	var out strings.Builder
	go func() {
		defer close(done)
		defer r.Close()
		said := false
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			if !said && strings.Contains(sc.Text(), want) {
				said = true
				close(seen)
			}
		}
	}()
	output = func() string {
		<-done
		return out.String()
	}
	select {
	case <-seen:
		return output
	case <-done:
		t.Fatalf("%s said no %q:\n%s", cmd, want, output())
	case <-time.After(lineWait):
		cmd.Process.Kill() // ends its output, to show what it said instead
		t.Fatalf("%s said no %q in %s; it said:\n%s", cmd, want, lineWait, output())
	}
	return nil
}

// names lists a directory's entries, space-separated.
func names(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ns []string
	for _, e := range ents {
		ns = append(ns, e.Name())
	}
	return strings.Join(ns, " ")
}

// TestFetchSharedArchive: two packages of one archive are fetched once, without waiting
// for "another pkg", and both install (the second replaces the first's files).
func TestFetchSharedArchive(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	archive := filepath.Join(base, "shared-1.tar")
	if err := os.WriteFile(archive, packageTar(t, "shared", "1", 's'), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []repo.Package{{Name: "one", Version: "1"}, {Name: "two", Version: "1", Replaces: []repo.Requirement{{Name: "one"}}}} {
		if _, err := repo.Add(t.Context(), dir, archive, p, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	e := newEnv(t, base, serve(t, dir))
	out, stderr := e.ok("--jobs", "2", "install", "one", "two")
	if strings.Contains(stderr, "another pkg") || strings.Contains(stderr, "waiting") || strings.Count(out, "fetched ") != 1 ||
		!strings.Contains(out, "installed one 1") || !strings.Contains(out, "installed two 1") {
		t.Errorf("install of two packages of one archive: %q, %q", out, stderr)
	}
}

// TestOfflineOtherVersion: offline, pkg says how old the index it uses is, and an install
// of a version not cached is exit 1 with the advice; PKG_OFFLINE=1 is --offline. Session's
// TestOffline and txn's TestCheckCached have the refusals.
func TestOfflineOtherVersion(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "hello", "1.1")
	addPackage(t, dir, "hello", "1.2")
	e := newEnv(t, base, serve(t, dir))
	e.ok("fetch", "hello=1.1")
	_, stderr, code := e.pkg("--offline", "install", "hello")
	if code != 1 || !strings.Contains(stderr, "pkg: note: offline: using the index of "+e.repo) ||
		!strings.Contains(stderr, "pkg: offline: not in the cache: hello 1.2 (the cache holds hello 1.1: ask for hello=1.1)\n"+
			"pkg: hint: fetch them while online ('"+e.cmd("fetch NAME...")+"' fills the cache), or run without --offline (and PKG_OFFLINE unset)\n") {
		t.Errorf("offline install of an uncached version: exit %d, %q", code, stderr)
	}
	t.Setenv("PKG_OFFLINE", "1")
	if _, stderr, code := e.pkg("install", "hello"); code != 1 || !strings.Contains(stderr, "not in the cache: hello 1.2") {
		t.Errorf("PKG_OFFLINE=1 install of an uncached version: exit %d, %q", code, stderr)
	}
	e.ok("install", "hello=1.1")
}

// checkDigests checks that the database records, for each regular file and hardlink of an
// installed package, the sha256 of the installed file.
func checkDigests(t *testing.T, root, name string) {
	t.Helper()
	d, err := db.Open(filepath.Join(root, ".pkg", "db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	files, err := d.Files(name)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if f.Type != '0' && f.Type != '1' {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, "pkgs", name, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		if f.SHA256 != sha256.Sum256(data) {
			t.Errorf("%s: recorded sha256 %x is not the installed file's", f.Path, f.SHA256)
		}
		n++
	}
	if n == 0 {
		t.Errorf("%s: no regular file recorded", name)
	}
}

// TestCacheCommands lists, prunes and cleans the cache.
func TestCacheCommands(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	e.ok("install", "hello")
	e.ok("fetch", "fortunes")
	out, _ := e.ok("cache", "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "fortunes 0.9.1") || !strings.HasPrefix(lines[1], indexSHA(t, "hello")[:16]) {
		t.Errorf("cache list:\n%s", out)
	}
	e.ok("install", "fortunes") // a hardlink's digest is its target's
	checkDigests(t, e.root, "fortunes")
	if out, _ := e.ok("cache", "prune"); !strings.Contains(out, "removed 0 cached packages") {
		t.Errorf("cache prune with all installed: %q", out)
	}
	e.ok("remove", "fortunes")
	if out, _ := e.ok("cache", "prune"); !strings.Contains(out, "removed 1 cached package") {
		t.Errorf("cache prune: %q", out)
	}
	if out, _ := e.ok("cache", "clean"); !strings.Contains(out, "removed 2 cached packages") {
		t.Errorf("cache clean: %q", out)
	}
	if out, _ := e.ok("cache", "list"); out != "" {
		t.Errorf("cache list after clean: %q", out)
	}
}

// TestInstallSettlesCache checks that pkg fetch leaves its entry marked as written in this
// boot and not yet synced, and that installing the package settles it, with --no-sync too.
func TestInstallSettlesCache(t *testing.T) {
	if _, err := os.Stat("/proc/sys/kernel/random/boot_id"); err != nil {
		t.Skip("no boot id: entries are synced at fetch")
	}
	e := newEnv(t, t.TempDir(), demoRepo)
	marks := func() (n int) {
		idx, _ := filepath.Glob(filepath.Join(e.cache, "tars", "*.idx"))
		if len(idx) == 0 {
			t.Fatal("no entry in the cache")
		}
		for _, path := range idx {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			line, _, _ := strings.Cut(string(data), "\n")
			if len(strings.Fields(line)) == 6 { // pkg-entry 2 NAME VERSION SIZE BOOT
				n++
			}
		}
		return n
	}
	e.ok("fetch", "libgreet")
	if n := marks(); n != 1 {
		t.Fatalf("after fetch: %d entries marked unsynced, want 1", n)
	}
	e.ok("install", "libgreet")
	if n := marks(); n != 0 {
		t.Errorf("after install: %d entries still marked unsynced", n)
	}
	e.ok("fetch", "fortunes")
	if n := marks(); n != 1 {
		t.Fatalf("after fetching another: %d entries marked unsynced, want 1", n)
	}
	e.ok("--no-sync", "install", "fortunes")
	if n := marks(); n != 0 {
		t.Errorf("after install --no-sync: %d entries still marked unsynced", n)
	}
}

// TestOfflineReinstallNoRepo reinstalls, offline and with no repository given or
// configured, an installed package whose archive the cache holds: the record names the
// archive's sha256, so no index is needed, and the reinstall puts back a file deleted by
// hand. An archive the cache lacks is refused naming it, with the advice to fetch it from a
// repository, which the command lacks.
func TestOfflineReinstallNoRepo(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	e.ok("install", "hello")
	readme := filepath.Join(e.root, "pkgs", "hello", "share", "doc", "hello", "README")
	if err := os.Remove(readme); err != nil {
		t.Fatal(err)
	}
	bare := func(args ...string) (stdout, stderr string, code int) { // neither --repo nor PKG_REPO
		var o, er bytes.Buffer
		code = run(append([]string{"pkg", "--root", e.root, "--cache", e.cache, "--offline"}, args...), &o, &er)
		return o.String(), er.String(), code
	}
	if out, stderr, code := bare("install", "--reinstall", "hello"); code != 0 || !strings.Contains(out, "reinstalled hello 1.2.0") {
		t.Fatalf("offline reinstall with no repository: exit %d, %q, %q", code, out, stderr)
	}
	if _, err := os.Stat(readme); err != nil {
		t.Errorf("the reinstall did not put back README: %v", err)
	}
	e.ok("verify")

	e.ok("cache", "clean")
	_, stderr, code := bare("install", "--reinstall", "libgreet")
	if want := "pkg: offline: not in the cache: libgreet 1.0.0\npkg: hint: no repository is in effect to fetch them from"; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("offline reinstall of an archive the cache lacks: exit %d, %q; want %q", code, stderr, want)
	}
}

// TestReinstallPutsBackGoneDependency: a reinstall of hello whose dependency libgreet's
// tree was deleted by hand installs libgreet again with it, offline from the cache with no
// repository as online, and where the cache lacks it says so by name: both reinstalled
// hello alone and said nothing of libgreet.
func TestReinstallPutsBackGoneDependency(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	e.ok("install", "hello")
	tree := filepath.Join(e.root, "pkgs", "libgreet")
	bare := func(args ...string) (stdout, stderr string, code int) { // neither --repo nor PKG_REPO
		var o, er bytes.Buffer
		code = run(append([]string{"pkg", "--root", e.root, "--cache", e.cache, "--offline"}, args...), &o, &er)
		return o.String(), er.String(), code
	}
	for _, reinstall := range []func() (string, string, int){
		func() (string, string, int) { return bare("install", "--reinstall", "hello") },
		func() (string, string, int) { return e.pkg("install", "--reinstall", "hello") },
	} {
		if err := os.RemoveAll(tree); err != nil {
			t.Fatal(err)
		}
		if out, stderr, code := reinstall(); code != 0 || !strings.Contains(out, "reinstalled libgreet 1.0.0") {
			t.Fatalf("reinstall hello with libgreet's tree gone: exit %d\n%s%s", code, out, stderr)
		}
		e.ok("verify")
	}

	if err := os.RemoveAll(tree); err != nil {
		t.Fatal(err)
	}
	e.ok("cache", "clean")
	_, stderr, code := bare("install", "--reinstall", "hello")
	if code != 1 || !strings.Contains(stderr, "pkg: offline: not in the cache: ") || !strings.Contains(stderr, "libgreet 1.0.0") {
		t.Errorf("offline reinstall of hello, libgreet's tree gone and the cache empty: exit %d\n%s", code, stderr)
	}
}

// TestOfflineNotCachedNoRepo: an offline reinstall of an archive the cache lacks, with no
// repository in effect, is told to fetch it from a repository, which it must name: the hint
// advised 'pkg fetch NAME...', which fetches from none.
func TestOfflineNotCachedNoRepo(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "tool", "1.0")
	e := newEnv(t, base, dir)
	e.ok("install", "tool")
	e.ok("cache", "clean")
	var out, stderr bytes.Buffer
	code := run([]string{"pkg", "--root", e.root, "--cache", e.cache, "--offline", "install", "--reinstall", "tool"}, &out, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "pkg: hint: no repository is in effect to fetch them from") || !strings.Contains(stderr.String(), "--repo URL fetch NAME...'") {
		t.Errorf("offline reinstall without a repository, tool not cached: exit %d\n%s%s", code, out.String(), stderr.String())
	}
	_, er, code := e.pkg("--offline", "install", "--reinstall", "tool")
	if code != 1 || !strings.Contains(er, "pkg: hint: fetch them while online ('pkg --root "+e.root+" --cache "+e.cache+" --repo "+dir+" fetch NAME...'") {
		t.Errorf("offline reinstall with its repository, tool not cached: exit %d\n%s", code, er)
	}
}

// TestOfflineDamagedNoRepo: an offline reinstall of an archive found damaged in the cache,
// with no repository in effect, is told to fetch it again from a repository, which it must
// name; with its repository, to fetch it again as the command line runs.
func TestOfflineDamagedNoRepo(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	e.ok("install", "hello")
	tarPath := filepath.Join(e.cache, "tars", indexSHA(t, "hello")+".tar")
	damage := func() {
		if err := os.WriteFile(tarPath, []byte("damaged"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	damage()
	var out, stderr bytes.Buffer
	code := run([]string{"pkg", "--root", e.root, "--cache", e.cache, "--offline", "install", "--reinstall", "hello"}, &out, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "is damaged (") ||
		!strings.Contains(stderr.String(), "pkg: hint: no repository is in effect to fetch it from") || !strings.Contains(stderr.String(), "--repo URL fetch NAME...'") {
		t.Errorf("offline reinstall without a repository, hello damaged: exit %d\n%s%s", code, out.String(), stderr.String())
	}
	e.ok("fetch", "hello")
	damage()
	_, er, code := e.pkg("--offline", "install", "--reinstall", "hello")
	if code != 1 || !strings.Contains(er, "pkg: hint: fetch the package again while online ('"+e.cmd("fetch NAME...")+"'") {
		t.Errorf("offline reinstall with its repository, hello damaged: exit %d\n%s", code, er)
	}
}

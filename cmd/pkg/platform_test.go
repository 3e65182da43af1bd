package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"pkg/internal/testfs"
	"pkg/repo"
)

// otherPlatform is a platform this machine is not.
func otherPlatform() string {
	if repo.Host == "linux-arm64" {
		return "linux-amd64"
	}
	return "linux-arm64"
}

// addBothHellos publishes into dir hello 1.0 built for this machine and for
// otherPlatform, each for its platform.
func addBothHellos(t *testing.T, pub *env, dir string) {
	t.Helper()
	for _, p := range []string{repo.Host, otherPlatform()} {
		pub.ok("repo", "add", dir, platformTar(t, "hello", p), "--name", "hello", "--version", "1.0", "--bin", "bin/hello", "--platform", p)
	}
}

// platformTar is hello 1.0 built for platform: its command says which.
func platformTar(t *testing.T, name, platform string) string {
	t.Helper()
	archive := filepath.Join(t.TempDir(), name+".tar")
	data := pax(t, moded(tf("bin/"+name, "#!/bin/sh\necho "+name+" for "+platform+"\n"), 0o755))
	if err := os.WriteFile(archive, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return archive
}

// TestPlatforms serves a repository for two platforms: a lock for both records each one's
// hello, sync here installs this machine's, and a package or a lock for the other platform
// alone is refused, naming it and this one.
func TestPlatforms(t *testing.T) {
	if repo.Host != "linux-amd64" && repo.Host != "linux-arm64" {
		t.Skipf("its repository and lockfile are for linux-amd64 and linux-arm64, one of them this machine's; this is %s", repo.Host)
	}
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	other := otherPlatform()
	pub := newEnv(t, base, dir)
	addBothHellos(t, pub, dir)
	pub.ok("repo", "add", dir, platformTar(t, "jq", other), "--name", "jq", "--version", "1.7", "--bin", "bin/jq", "--platform", other)
	if got := names(t, dir); got != "hello-1.0-linux-amd64.tar hello-1.0-linux-arm64.tar index.json jq-1.7-"+other+".tar" {
		t.Errorf("repository holds %s", got)
	}
	if _, stderr, code := pub.pkg("repo", "add", dir, platformTar(t, "x", other), "--name", "x", "--version", "1", "--platform", "linux-x86_64"); code != 2 || !strings.Contains(stderr, `did you mean "linux-amd64"?`) {
		t.Errorf("repo add --platform linux-x86_64: exit %d, %q", code, stderr)
	}

	e := newEnv(t, base, serve(t, dir))
	lock := filepath.Join(base, "pkg.lock")
	if out, _ := e.ok("lock", "-o", lock, "--platform", "linux-amd64,linux-arm64", "hello"); out != "locked hello 1.0 for linux-amd64\nlocked hello 1.0 for linux-arm64\nwrote "+lock+": 1 package for 2 platforms\n" {
		t.Errorf("lock for two platforms says %q", out)
	}
	if _, stderr, code := e.pkg("lock", "-o", lock, "--platform", "linux-amd64,linux-aarch64"); code != 2 || !strings.Contains(stderr, `did you mean "linux-arm64"?`) {
		t.Errorf("lock --platform linux-aarch64: exit %d, %q", code, stderr)
	}
	text, _ := os.ReadFile(lock)
	for _, want := range []string{`"platforms": ["linux-amd64","linux-arm64"]`, "/hello-1.0-linux-amd64.tar", "/hello-1.0-linux-arm64.tar"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("lockfile lacks %s:\n%s", want, text)
		}
	}
	if out, _ := e.ok("lock", "-o", lock); !strings.Contains(out, "is up to date") {
		t.Errorf("lock again, with no --platform: %q, want the lock for both platforms kept", out)
	}
	e.ok("sync", "-f", lock, "--root", e.root)
	out, err := exec.Command(filepath.Join(e.root, "bin", "hello")).Output()
	if want := "hello for " + repo.Host + "\n"; err != nil || string(out) != want {
		t.Errorf("synced hello says %q, %v; want %q", out, err, want)
	}

	_, stderr, code := e.pkg("install", "jq")
	if want := "jq 1.7 is offered for " + other + " only; this machine is " + repo.Host; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("install jq: exit %d, %q; want %q", code, stderr, want)
	}
	otherLock := filepath.Join(base, "other.lock")
	e.ok("lock", "-o", otherLock, "--platform", other, "jq")
	before := rootTree(t, e.root)
	_, stderr, code = e.pkg("sync", "-f", otherLock, "--root", e.root)
	if want := "pkg: lockfile " + otherLock + " locks packages for " + other + " only; this machine is " + repo.Host; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("sync of a lock for %s: exit %d, %q; want %q", other, code, stderr, want)
	}
	if want := "pkg: hint: lock it for " + repo.Host + " too, keeping its platforms: '" + e.cmd("lock -o "+otherLock) + " --platform " + other + "," + repo.Host + "'"; !strings.Contains(stderr, want) {
		t.Errorf("sync of a lock for %s: %q; want the hint %q", other, stderr, want)
	}
	testfs.SameTree(t, "root", rootTree(t, e.root), before)
}

// TestRepoAddURL adds an archive by the URL it is published at: the index holds the URL,
// the repository no copy, an install fetches and verifies it, and refuses it once the
// server's bytes change.
func TestRepoAddURL(t *testing.T) {
	base := t.TempDir()
	archive := filepath.Join(base, "upstream", "tool-1.0.tar")
	if err := os.MkdirAll(filepath.Dir(archive), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(archive, packageTar(t, "tool", "1.0", 'u'), 0o644); err != nil {
		t.Fatal(err)
	}
	var gets atomic.Int32
	files := http.FileServer(http.Dir(filepath.Dir(archive)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	url := srv.URL + "/tool-1.0.tar"

	dir := filepath.Join(base, "repo")
	e := newEnv(t, base, dir)
	out, _ := e.ok("repo", "add", dir, url, "--name", "tool", "--version", "1.0", "--bin", "bin/tool")
	if !strings.Contains(out, "added tool 1.0 to "+dir+": "+url) || gets.Load() != 1 {
		t.Errorf("repo add %s: %q after %d GETs", url, out, gets.Load())
	}
	if got := names(t, dir); got != "index.json" {
		t.Errorf("repository holds %s, want only index.json", got)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "index.json"))
	ix, err := repo.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	size, sum, _ := repo.HashFile(archive)
	if p := ix.Packages[0]; p.Archive != url || p.Size != size || p.SHA256 != sum || p.Files != 3 {
		t.Errorf("index entry %+v, want archive %s, size %d, sha256 %s, 3 files", p, url, size, sum)
	}

	e.ok("install", "tool")
	e.checkInstalled("install by URL", "tool 1.0")

	if err := os.WriteFile(archive, packageTar(t, "tool", "1.0", 'X'), 0o644); err != nil {
		t.Fatal(err)
	}
	later := newEnv(t, t.TempDir(), dir)
	_, stderr, code := later.pkg("install", "tool")
	if code != 1 || !strings.Contains(stderr, "sha256 mismatch") || !strings.Contains(stderr, url) {
		t.Errorf("install after the server changed the archive: exit %d, %q", code, stderr)
	}

	_, stderr, code = e.pkg("repo", "add", dir, srv.URL+"/missing.tar", "--name", "gone", "--version", "1")
	if code != 1 || !strings.Contains(stderr, srv.URL+"/missing.tar") || !strings.Contains(stderr, "404") ||
		!strings.Contains(stderr, "pkg: hint: the server has no file at that URL: check it") || strings.Contains(stderr, "lockfile") {
		t.Errorf("repo add of a missing URL: exit %d, %q; want the hint to check the URL", code, stderr)
	}
	srv.Close()
	_, stderr, code = e.pkg("repo", "add", dir, url, "--name", "gone", "--version", "1")
	if code != 1 || !strings.Contains(stderr, "pkg: hint: check the network, and the URL's host") || strings.Contains(stderr, "--offline") {
		t.Errorf("repo add of a URL whose server is down: exit %d, %q; want the hint to check the network and the URL", code, stderr)
	}
}

package main

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"pkg/internal/testfs"
	"pkg/repo"
)

// nginx serves dir with Debian's nginx on 127.0.0.1, with a configuration and prefix of
// its own in a temporary directory, until the test ends; it returns the URL and the
// access log's path; without nginx the test is Unavailable.
func nginx(t *testing.T, dir string) (url, accessLog string) {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		bin = "/usr/sbin/nginx"
	}
	if _, err := os.Stat(bin); err != nil {
		testfs.Unavailable(t, "nginx is not installed (.ci/run installs nginx-light)")
	}
	prefix := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	accessLog = filepath.Join(prefix, "access.log")
	conf := `daemon off;
master_process off;
pid ` + prefix + `/nginx.pid;
error_log ` + prefix + `/error.log;
events { worker_connections 64; }
http {
	access_log ` + accessLog + ` combined;
	client_body_temp_path ` + prefix + `/body;
	proxy_temp_path ` + prefix + `/proxy;
	fastcgi_temp_path ` + prefix + `/fastcgi;
	uwsgi_temp_path ` + prefix + `/uwsgi;
	scgi_temp_path ` + prefix + `/scgi;
	default_type application/octet-stream;
	types { application/json json; }
	server {
		listen 127.0.0.1:` + strconv.Itoa(port) + `;
		root ` + dir + `;
	}
}
`
	confFile := filepath.Join(prefix, "nginx.conf")
	if err := os.WriteFile(confFile, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", prefix, "-c", confFile, "-e", filepath.Join(prefix, "error.log"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGQUIT)
		<-exited
	})
	url = "http://127.0.0.1:" + strconv.Itoa(port)
	for { // until it answers, or exits
		if resp, err := http.Get(url + "/"); err == nil {
			resp.Body.Close()
			return url, accessLog
		}
		select {
		case err := <-exited:
			exited <- err
			log, _ := os.ReadFile(filepath.Join(prefix, "error.log"))
			t.Fatalf("nginx exited (%v): %s\n%s", err, out.String(), log)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestMirrorLock mirrors a lockfile of a signed repository into a directory, serves it
// with nginx once the repository's own server is gone, and installs and syncs from it
// alone: the archives come by sha256 from the mirror, whatever URL the index or the
// lockfile names, and the index is the publisher's, byte for byte, believed with its key.
func TestMirrorLock(t *testing.T) {
	r := newSignedRepo(t)
	upstream := httptest.NewServer(http.FileServer(http.Dir(r.dir)))
	user := newEnv(t, t.TempDir(), "demo="+upstream.URL+"/")
	trusted := []string{"--trusted-key", r.pub}
	lock := filepath.Join(t.TempDir(), "pkg.lock")
	user.ok(append(trusted, "lock", "-o", lock, "hello", "fortunes")...)

	dir := filepath.Join(t.TempDir(), "mirror")
	out, _ := user.ok(append(trusted, "mirror", "--lock", lock, dir)...)
	if !strings.Contains(out, "wrote 3 archives") {
		t.Errorf("pkg mirror said %q, want 3 archives written", out)
	}
	index, sig := r.files()
	for name, want := range map[string][]byte{"demo/index.json": index, "demo/index.json.sig": sig} {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is not the published file (%v)", name, err)
		}
	}
	l, err := repo.ReadLock(lock)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range l.Packages {
		if !strings.HasPrefix(p.Archive, upstream.URL) {
			t.Errorf("the lockfile names %s at %s, not at the repository", p.Name, p.Archive)
		}
		if _, err := os.Stat(filepath.Join(dir, "sha256", p.SHA256)); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
	}
	again, _ := user.ok(append(trusted, "mirror", "--lock", lock, dir)...)
	if !strings.Contains(again, "wrote 0 archives") || !strings.Contains(again, "3 there already") {
		t.Errorf("mirroring again said %q, want every archive there already", again)
	}
	byName := filepath.Join(t.TempDir(), "by-name")
	if out, _ := user.ok(append(trusted, "mirror", "hello", byName)...); !strings.Contains(out, "wrote 2 archives") {
		t.Errorf("pkg mirror hello said %q, want hello and libgreet written", out)
	}
	one := filepath.Join(t.TempDir(), "one")
	if out, _ := user.ok(append(trusted, "mirror", "libgreet", one)...); !strings.Contains(out, "wrote 1 archive (") {
		t.Errorf("pkg mirror libgreet said %q, want 1 archive written", out)
	}
	upstream.Close() // the repository's host is gone

	url, accessLog := nginx(t, dir)
	mirror := []string{"--digest-mirror", url + "/", "--trusted-key", r.pub}
	installer := newEnv(t, t.TempDir(), "demo="+url+"/demo/")
	installer.ok(append(mirror, "install", "hello")...)
	syncer := newEnv(t, t.TempDir(), "demo="+upstream.URL+"/")
	syncer.ok(append(mirror, "sync", "-f", lock)...)
	for _, e := range []*env{installer, syncer} {
		if got := e.installed(); !strings.Contains(got, "hello 1.2.0") || !strings.Contains(got, "libgreet 1.0.0") {
			t.Errorf("installed %q, want hello and libgreet", got)
		}
	}

	log, err := os.ReadFile(accessLog)
	if err != nil {
		t.Fatal(err)
	}
	archives := 0
	for _, line := range strings.Split(strings.TrimSpace(string(log)), "\n") {
		f := strings.Fields(line) // combined: ... "GET /path HTTP/1.1" status ...
		if len(f) < 9 || f[8] != "200" && !(f[6] == "/" && f[8] == "403") {
			t.Errorf("nginx answered %q", line)
		}
		if len(f) > 6 && strings.HasPrefix(f[6], "/sha256/") {
			archives++
		}
	}
	if archives != 5 { // hello and libgreet for the install, and fortunes too for the sync
		t.Errorf("%d archives served by the mirror, want 5:\n%s", archives, log)
	}
}

// TestMirrorDirFull mirrors into a directory on a full filesystem, given absolute and
// relative, and on a read-only one: the hint is about the mirror's directory, named as
// given, not the root or the cache.
func TestMirrorDirFull(t *testing.T) {
	r := newSignedRepo(t)
	upstream := httptest.NewServer(http.FileServer(http.Dir(r.dir)))
	defer upstream.Close()
	user := newEnv(t, t.TempDir(), "demo="+upstream.URL+"/")
	full := testfs.Tmpfs(t, 1<<20)
	if err := os.WriteFile(filepath.Join(full, "filler"), make([]byte, 2<<20), 0o644); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling %s: %v, want ENOSPC", full, err)
	}
	readOnly := testfs.Tmpfs(t, 1<<20, "ro")
	t.Chdir(full)
	for _, tt := range []struct{ dir, want string }{
		{filepath.Join(full, "mirror"), "pkg: hint: the filesystem holding the mirror directory " + filepath.Join(full, "mirror") + " is full"},
		{"mirror/", "pkg: hint: the filesystem holding the mirror directory mirror/ is full"}, // as given
		{filepath.Join(readOnly, "mirror"), "pkg: hint: the mirror directory " + filepath.Join(readOnly, "mirror") + " is on a read-only filesystem"},
	} {
		_, stderr, code := user.pkg("--trusted-key", r.pub, "mirror", "hello", tt.dir)
		if code != 1 || !strings.Contains(stderr, tt.want) || strings.Contains(stderr, "--root") {
			t.Errorf("mirror into %s: exit %d, %q; want %q", tt.dir, code, stderr, tt.want)
		}
	}
}

// TestMirrorDenied mirrors from a repository that answers 401: the hint names the
// repository and its location and says where a credential for it goes as
// docs/config.md#credentials does: the variables of its name, its entry in the user's
// configuration file, the netrc file. Given one so, the mirror is written.
func TestMirrorDenied(t *testing.T) {
	netrc, xdg := filepath.Join(t.TempDir(), "netrc"), t.TempDir()
	t.Setenv("NETRC", netrc)
	t.Setenv("XDG_CONFIG_HOME", xdg)
	r := newAuthRepo(t, "Bearer s3cret")
	e := newEnv(t, t.TempDir(), "team="+r.url)
	mirror := filepath.Join(t.TempDir(), "mirror")
	_, stderr, code := e.pkg("mirror", "hello", mirror)
	want := "pkg: hint: if the repository team (" + r.url + ") needs credentials, set PKG_REPO_TEAM_TOKEN (or PKG_REPO_TEAM_USERNAME and PKG_REPO_TEAM_PASSWORD), " +
		"give [repo.team] with urls = [\"" + r.url + "\"] in " + filepath.Join(xdg, "pkg", "config.toml") + " a token-file (or a username and a password-file), " +
		"or give its host a machine entry in " + netrc + " (docs/config.md#credentials)"
	if code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("mirror from a repository that wants a credential: exit %d\n%s\nwant the hint %q", code, stderr, want)
	}
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	userConfig(t, "[repo.team]\nurls = [\""+r.url+"\"]\ntoken-file = \""+token+"\"\n")
	e.ok("mirror", "hello", mirror)
}

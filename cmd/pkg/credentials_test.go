package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"pkg/pkgtest/testregistry"
)

// authRepo serves a copy of the demo repository only to requests whose Authorization
// header is want, answering others 401, and counts the requests with and without it.
type authRepo struct {
	url  string
	mu   sync.Mutex
	good int
	bad  int
}

func newAuthRepo(t *testing.T, want string) *authRepo {
	dir := filepath.Join(t.TempDir(), "demo")
	if err := os.CopyFS(dir, os.DirFS(demoRepo)); err != nil {
		t.Fatal(err)
	}
	r := &authRepo{}
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		ok := req.Header.Get("Authorization") == want
		if ok {
			r.good++
		} else {
			r.bad++
		}
		r.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="demo"`)
			http.Error(w, "credentials, please", http.StatusUnauthorized)
			return
		}
		files.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/"
	return r
}

// noSecret fails if any file beneath each of dirs, or any of outputs, holds one of secrets.
func noSecret(t *testing.T, secrets []string, dirs []string, outputs ...string) {
	t.Helper()
	check := func(where string, data []byte) {
		for _, s := range secrets {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s holds the credential %q", where, s)
			}
		}
	}
	files := 0
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(path string, e fs.DirEntry, err error) error {
			if err != nil || !e.Type().IsRegular() {
				return err
			}
			data, err := os.ReadFile(path)
			files++
			check(path, data)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, o := range outputs {
		check(fmt.Sprintf("output %d", i), []byte(o))
	}
	if files < 5 {
		t.Fatalf("only %d files pkg wrote to search", files)
	}
}

// TestCredentialsOutsideURL installs, locks and syncs from a repository that requires
// credentials, given by a token variable, a netrc file and a token-file of the
// configuration, and finds none of them in the root, the cache, the lockfile or what pkg
// printed. Without them, pkg exits 1 with the hint that says where they go.
func TestCredentialsOutsideURL(t *testing.T) {
	const token, user, pass = "tok-3f9a2c41e7", "deploy", "pw-8d1b0c55aa"
	basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	secrets := []string{token, pass, basic}
	for _, tc := range []struct {
		name, want string
		setup      func(t *testing.T, url string)
	}{
		{"token variable", "Bearer " + token, func(t *testing.T, _ string) {
			t.Setenv("PKG_REPO_TEAM_TOKEN", token)
		}},
		{"netrc", "Basic " + basic, func(t *testing.T, _ string) {
			netrc := filepath.Join(t.TempDir(), "netrc")
			os.WriteFile(netrc, []byte("machine 127.0.0.1 login "+user+" password "+pass+"\n"), 0o600)
			t.Setenv("NETRC", netrc)
		}},
		{"token-file", "Bearer " + token, func(t *testing.T, url string) {
			dir := t.TempDir()
			tokenFile := filepath.Join(dir, "token")
			os.WriteFile(tokenFile, []byte(token+"\n"), 0o600)
			os.MkdirAll(filepath.Join(dir, "pkg"), 0o755)
			cfg := "[repo.team]\nurls = [\"" + url + "\"]\ntoken-file = \"" + tokenFile + "\"\n"
			os.WriteFile(filepath.Join(dir, "pkg", "config.toml"), []byte(cfg), 0o644)
			t.Setenv("XDG_CONFIG_HOME", dir)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NETRC", filepath.Join(t.TempDir(), "none"))
			t.Setenv("XDG_CONFIG_HOME", t.TempDir())
			r := newAuthRepo(t, tc.want)
			base := t.TempDir()
			e := newEnv(t, base, "team="+r.url)

			_, stderr, code := e.pkg("install", "hello")
			if code != 1 || !strings.Contains(stderr, "set PKG_REPO_TEAM_TOKEN (or PKG_REPO_TEAM_USERNAME and PKG_REPO_TEAM_PASSWORD)") || !strings.Contains(stderr, "401") {
				t.Fatalf("without credentials: exit %d\n%s", code, stderr)
			}
			t.Setenv("PKG_REPO_TEAM_TOKEN", "stale-token")
			_, stderr, code = e.pkg("install", "hello")
			if code != 1 || !strings.Contains(stderr, "hint: the repository team ("+r.url+") refused the credential of PKG_REPO_TEAM_TOKEN") || strings.Contains(stderr, "stale-token") {
				t.Fatalf("with a token it refuses: exit %d\n%s", code, stderr)
			}
			os.Unsetenv("PKG_REPO_TEAM_TOKEN")

			tc.setup(t, r.url)
			var outs []string
			o1, e1 := e.ok("install", "hello")
			lock := filepath.Join(base, "pkg.lock")
			o2, e2 := e.ok("lock", "-o", lock, "hello")
			fresh := newEnv(t, t.TempDir(), "team="+r.url)
			o3, e3 := fresh.ok("sync", "-f", lock)
			outs = append(outs, stderr, o1, e1, o2, e2, o3, e3)
			if got := fresh.installed(); !strings.Contains(got, "hello 1.2.0") {
				t.Errorf("synced root holds %q", got)
			}
			if r.good == 0 {
				t.Error("no request sent the credential")
			}
			noSecret(t, secrets, []string{e.root, e.cache, fresh.root, fresh.cache, lock}, outs...)
		})
	}
}

// TestURLCredentialRefused installs from a repository whose URL holds a user and a password
// it refuses: the hint says the URL's credential was refused, not that none was given, and
// nothing pkg prints holds the user information, the user's name included.
func TestURLCredentialRefused(t *testing.T) {
	t.Setenv("NETRC", filepath.Join(t.TempDir(), "none"))
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	r := newAuthRepo(t, "Basic "+base64.StdEncoding.EncodeToString([]byte("alice:s3cretPW")))
	withUser := strings.Replace(r.url, "://", "://alice:wrongPW2@", 1)
	e := newEnv(t, t.TempDir(), withUser)
	_, stderr, code := e.pkg("install", "hello")
	if code != 1 || !strings.Contains(stderr, "pkg: hint: the repository 127.0.0.1 ("+r.url+") refused the credential in the URL") || !strings.Contains(stderr, r.url+"index.json: 401") ||
		strings.Contains(stderr, "alice") || strings.Contains(stderr, "wrongPW2") {
		t.Errorf("install with a wrong password in the URL: exit %d\n%s", code, stderr)
	}
}

// TestPushCredentialRefused pushes to a registry that refuses the credentials given, or
// wants some: the hint names the variables of the repository the target's path names
// (PKG_REPO_MAIN_* for oci://HOST/pkg/main), says whose credential was refused where one
// was given, and prints no credential.
func TestPushCredentialRefused(t *testing.T) {
	t.Setenv("NETRC", filepath.Join(t.TempDir(), "none"))
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	e, dir := toolRepo(t)
	reg := testregistry.New(t)
	reg.Users = map[string]string{"bob": "s3cret"}
	netrc := filepath.Join(t.TempDir(), "netrc")
	host, _, _ := strings.Cut(strings.TrimPrefix(reg.URL(), "oci://"), ":")
	if err := os.WriteFile(netrc, []byte("machine "+host+" login bob password WrongPass\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, target, user, netrc, want string
	}{
		{"none", reg.URL(), "", "", "pkg: hint: if the repository main (" + reg.URL() + ") needs credentials, set PKG_REPO_MAIN_TOKEN (or PKG_REPO_MAIN_USERNAME and PKG_REPO_MAIN_PASSWORD)"},
		{"variables", reg.URL(), "bob", "", "pkg: hint: the repository main (" + reg.URL() + ") refused the credential of PKG_REPO_MAIN_USERNAME and PKG_REPO_MAIN_PASSWORD"},
		{"URL", strings.Replace(reg.URL(), "://", "://bob:WrongPass@", 1), "", "", "pkg: hint: the repository main (" + reg.URL() + ") refused the credential in the URL"},
		{"netrc", reg.URL(), "", netrc, "pkg: hint: the repository main (" + reg.URL() + ") refused the credential of machine " + host + " in " + netrc + ": check that it is current"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.user != "" {
				t.Setenv("PKG_REPO_MAIN_USERNAME", tc.user)
				t.Setenv("PKG_REPO_MAIN_PASSWORD", "WrongPass")
			}
			if tc.netrc != "" {
				t.Setenv("NETRC", tc.netrc)
			}
			_, stderr, code := e.pkg("repo", "push", dir, tc.target)
			if code != 1 || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "WrongPass") || strings.Contains(stderr, "bob") {
				t.Errorf("push: exit %d\n%s\nwant the hint %q and no credential", code, stderr, tc.want)
			}
		})
	}
	if reg.Manifest("latest") != nil {
		t.Error("a manifest was tagged")
	}
}

// TestPushConfiguredCredential pushes to a registry that wants a user, configured for
// the repository at its reference without a tag: the push sends that credential to the
// reference written so, and with the default tag written, which is the same location.
func TestPushConfiguredCredential(t *testing.T) {
	t.Setenv("NETRC", filepath.Join(t.TempDir(), "none"))
	e, dir := toolRepo(t)
	reg := testregistry.New(t)
	reg.Users = map[string]string{"bob": "s3cret"}
	pw := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(pw, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	userConfig(t, "[repo.tools]\nurls = [\""+reg.URL()+"\"]\nusername = \"bob\"\npassword-file = \""+pw+"\"\n")
	for _, target := range []string{reg.URL(), reg.URL() + ":latest"} {
		if _, stderr, code := e.pkg("repo", "push", dir, target); code != 0 {
			t.Errorf("push to %s, configured as %s with a user: exit %d\n%s", target, reg.URL(), code, stderr)
		}
	}
}

// TestRepoAddURLCredentials adds an archive by a URL whose user information the server
// wants: the download uses it, and neither what repo add prints nor the repository holds
// it; an install then reads the archive with the netrc entry of its host. A wrong password
// in the URL gets the hint that the server refused it, and is not printed.
func TestRepoAddURLCredentials(t *testing.T) {
	t.Setenv("NETRC", filepath.Join(t.TempDir(), "none"))
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	base := t.TempDir()
	upstream := filepath.Join(base, "upstream")
	if err := os.MkdirAll(upstream, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(upstream, "tool-1.0.tar"), packageTar(t, "tool", "1.0", 'u'), 0o644); err != nil {
		t.Fatal(err)
	}
	files := http.FileServer(http.Dir(upstream))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, pass, ok := r.BasicAuth(); !ok || user != "alice" || pass != "s3cretPW" {
			w.Header().Set("WWW-Authenticate", `Basic realm="upstream"`)
			http.Error(w, "credentials, please", http.StatusUnauthorized)
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	plain := srv.URL + "/tool-1.0.tar"
	dir := filepath.Join(base, "repo")
	e := newEnv(t, base, dir)

	_, stderr, code := e.pkg("repo", "add", dir, strings.Replace(plain, "://", "://alice:wrongPW2@", 1), "--name", "tool", "--version", "1.0")
	if code != 1 || !strings.Contains(stderr, "pkg: hint: the server refused the credential in the URL") || !strings.Contains(stderr, plain) || strings.Contains(stderr, "alice") {
		t.Errorf("repo add with a wrong password in the URL: exit %d\n%s", code, stderr)
	}
	out, stderr := e.ok("repo", "add", dir, strings.Replace(plain, "://", "://alice:s3cretPW@", 1), "--name", "tool", "--version", "1.0", "--bin", "bin/tool")
	if !strings.Contains(out, "added tool 1.0 to "+dir+": "+plain+",") {
		t.Errorf("repo add: %q, want the URL without its user information", out)
	}
	netrc := filepath.Join(t.TempDir(), "netrc")
	if err := os.WriteFile(netrc, []byte("machine 127.0.0.1 login alice password s3cretPW\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NETRC", netrc)
	o2, e2 := e.ok("install", "tool")
	e.checkInstalled("install of the archive by its URL", "tool 1.0")
	noSecret(t, []string{"alice", "s3cretPW", "wrongPW2"}, []string{dir, e.cache}, out, stderr, o2, e2)
}

// TestLockConfiguredRepo locks from a configured repository that requires credentials,
// given by its variables, then syncs a new root after the configuration moved it to
// another server: the lockfile names the repository, so the sync takes the configured
// one, its location and its credential, not the location the lockfile recorded.
func TestLockConfiguredRepo(t *testing.T) {
	t.Setenv("NETRC", filepath.Join(t.TempDir(), "none"))
	const token = "tok-3f9a2c41e7"
	was, now := newAuthRepo(t, "Bearer "+token), newAuthRepo(t, "Bearer "+token)
	userConfig(t, "[repo.private]\nurls = [\""+was.url+"\"]\n")
	t.Setenv("PKG_REPO_PRIVATE_TOKEN", token)
	base := t.TempDir()
	lock := filepath.Join(base, "pkg.lock")
	pkg := func(dir string, args ...string) {
		t.Helper()
		var out, stderr bytes.Buffer
		full := append([]string{"pkg", "--root", filepath.Join(base, dir, "root"), "--cache", filepath.Join(base, dir, "cache")}, args...)
		if code := run(full, &out, &stderr); code != 0 {
			t.Fatalf("pkg %v: exit %d\n%s%s", args, code, out.String(), stderr.String())
		}
	}
	pkg("a", "lock", "-o", lock, "hello")
	if data, err := os.ReadFile(lock); err != nil || !strings.Contains(string(data), "\"name\": \"private\",\n") {
		t.Fatalf("lockfile names no repository private: %v\n%s", err, data)
	}

	userConfig(t, "[repo.private]\nurls = [\""+now.url+"\"]\n")
	pkg("b", "sync", "-f", lock)
	if was.bad != 0 || now.good == 0 || now.bad != 0 {
		t.Errorf("requests with and without the credential: %d and %d to the old location, %d and %d to the configured one",
			was.good, was.bad, now.good, now.bad)
	}
	if _, err := os.Stat(filepath.Join(base, "b", "root", "bin", "hello")); err != nil {
		t.Error(err)
	}
}

// TestInstallRegistryDenied installs from a registry that wants credentials and is given
// none: the error names the repository as written (oci://HOST/pkg/main:latest), not only
// the registry's API URL of its manifest.
func TestInstallRegistryDenied(t *testing.T) {
	t.Setenv("NETRC", filepath.Join(t.TempDir(), "none"))
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	e, dir := toolRepo(t)
	reg := testregistry.New(t)
	if _, stderr, code := e.pkg("repo", "push", dir, reg.URL()); code != 0 {
		t.Fatalf("push: exit %d\n%s", code, stderr)
	}
	reg.Users = map[string]string{"bob": "s3cret"}
	want := "pkg: repository " + reg.URL() + ":latest: "
	if _, stderr, code := e.pkg("--repo", reg.URL()+":latest", "install", "tool"); code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("install from a registry wanting credentials: exit %d\n%s\nwant the error %q...", code, stderr, want)
	}
}

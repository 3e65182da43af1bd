package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pkg/repo"
)

// multiRepo is a repository directory served over loopback HTTP.
type multiRepo struct{ dir, url string }

// newMultiRepo makes a repository of packages "name version [depends...]", each with a
// command bin/NAME saying its name, version and repository, served over HTTP.
func newMultiRepo(t *testing.T, label string, pkgs ...string) multiRepo {
	t.Helper()
	r := multiRepo{dir: filepath.Join(t.TempDir(), label)}
	for _, line := range pkgs {
		r.publish(t, label, line)
	}
	r.url = serve(t, r.dir) + "/"
	return r
}

// published counts publish calls, each moving an index's mtime a second further on.
var published int

// publish adds the package "name version [depends...]" to r, named label.
func (r multiRepo) publish(t *testing.T, label, line string) {
	t.Helper()
	f := strings.Fields(line)
	archive := filepath.Join(t.TempDir(), f[0]+".tar")
	script := "#!/bin/sh\necho " + f[0] + " " + f[1] + " from " + label + "\n"
	if err := os.WriteFile(archive, pax(t, moded(tf("bin/"+f[0], script), 0o755)), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"repo", "add", r.dir, archive, "--name", f[0], "--version", f[1], "--bin", "bin/" + f[0]}
	for _, d := range f[2:] {
		args = append(args, "--depends", d)
	}
	newEnv(t, t.TempDir(), r.dir).ok(args...)
	// The server says Last-Modified in whole seconds: a publish within the second of the
	// last read would look unchanged.
	published++
	later := time.Now().Add(time.Duration(published) * time.Second)
	os.Chtimes(filepath.Join(r.dir, "index.json"), later, later)
}

// TestSeveralRepos uses three repositories over HTTP: team (signed, its key in the
// user's configuration, priority 20), stable (unsigned, priority 10) and extra (unsigned,
// given by --repo, so first). A name resolves from the first that has it, REPO/NAME pins
// one, dependencies cross them, each keeps its own trust, and a lockfile across them
// records each package's repository, which sync takes it from.
func TestSeveralRepos(t *testing.T) {
	team := newMultiRepo(t, "team", "app 1.0 lib>=1", "tool 1.0")
	stable := newMultiRepo(t, "stable", "lib 1.0", "tool 2.0", "app 9.0")
	extra := newMultiRepo(t, "extra", "more 1.0 tool")
	keyFile := filepath.Join(t.TempDir(), "key")
	out, _ := newEnv(t, t.TempDir(), team.dir).ok("repo", "keygen", "-o", keyFile)
	pub := strings.TrimSpace(out)
	newEnv(t, t.TempDir(), team.dir).ok("repo", "sign", team.dir, "--key", keyFile)

	conf := "[repo.team]\nurls = [\"" + team.url + "\"]\nkeys = [\"" + pub + "\"]\npriority = 20\n\n[repo.stable]\nurls = [\"" + stable.url + "\"]\npriority = 10\n"
	cfg := userConfig(t, conf)
	e := newEnv(t, t.TempDir(), "extra="+extra.url)

	// repo list: the flag's first, then by priority, each saying where it came from.
	stdout, _ := e.ok("repo", "list", "--json")
	var list struct {
		Schema string
		Repos  []struct {
			Name, From string
			URLs, Keys []string
			Priority   int
		}
	}
	if err := json.Unmarshal([]byte(stdout), &list); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range list.Repos {
		got = append(got, r.Name+" "+r.From+" "+strings.Join(r.URLs, ",")+" "+strings.Join(r.Keys, ","))
	}
	want := []string{"extra --repo " + extra.url + " ", "team " + cfg + " " + team.url + " " + pub, "stable " + cfg + " " + stable.url + " "}
	if list.Schema != "pkg.repos/1" || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("repo list --json:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if stdout, _ := e.ok("repo", "list"); !strings.Contains(stdout, "team (priority 20, from "+cfg+")") || !strings.Contains(stdout, "extra (from --repo)") {
		t.Errorf("repo list:\n%s", stdout)
	}

	// Priority and a dependency across repositories: app from team, lib from stable, and
	// team's tool 1.0 over stable's 2.0; unsigned stable and extra are warned about, team not.
	_, stderr := e.ok("install", "app", "more")
	for _, w := range []string{"repository " + stable.url + " is not signed", "repository " + extra.url + " is not signed"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("install: stderr lacks %q:\n%s", w, stderr)
		}
	}
	if strings.Contains(stderr, team.url+" is not signed") {
		t.Errorf("install warns about signed team:\n%s", stderr)
	}
	checkRun(t, e, "app", "app 1.0 from team")
	checkRun(t, e, "lib", "lib 1.0 from stable")
	checkRun(t, e, "tool", "tool 1.0 from team")
	checkRun(t, e, "more", "more 1.0 from extra")

	// A pin takes the name from that repository alone.
	e.ok("install", "stable/tool")
	checkRun(t, e, "tool", "tool 2.0 from stable")
	// The pin outlives the install: an upgrade takes stable's next tool, not team's newer one.
	os.Remove(filepath.Join(team.dir, "index.json.sig"))
	team.publish(t, "team", "tool 3.0")
	newEnv(t, t.TempDir(), team.dir).ok("repo", "sign", team.dir, "--key", keyFile)
	e.ok("upgrade")
	checkRun(t, e, "tool", "tool 2.0 from stable")
	stable.publish(t, "stable", "tool 2.1")
	e.ok("upgrade", "tool")
	checkRun(t, e, "tool", "tool 2.1 from stable")
	if _, stderr, code := e.pkg("install", "stabel/tool"); code != 1 || !strings.Contains(stderr, `no repository stabel in use (extra, team and stable); did you mean "stable"?`) {
		t.Errorf("install stabel/tool: exit %d, %s", code, stderr)
	}

	// Each repository keeps its trust: --require-signed refuses the unsigned ones by URL,
	// and team's index, once accepted signed, is refused unsigned, while stable's changes
	// pass as before.
	if _, stderr, code := e.pkg("--require-signed", "install", "app"); code != 1 || !strings.Contains(stderr, extra.url) {
		t.Errorf("--require-signed install: exit %d, %s", code, stderr)
	}
	os.Remove(filepath.Join(team.dir, "index.json.sig"))
	if _, stderr, code := e.pkg("search", "app"); code != 1 || !strings.Contains(stderr, "repository "+team.url) {
		t.Errorf("search with team's signature gone: exit %d, %s; want a refusal naming %s", code, stderr, team.url)
	}
	newEnv(t, t.TempDir(), team.dir).ok("repo", "sign", team.dir, "--key", keyFile)

	// repo forget takes a repository by name; team's pin goes, stable's index copy too.
	if out, _ := e.ok("repo", "forget", "team"); !strings.Contains(out, "of repository team") || !strings.Contains(out, "forgot the index of "+team.url) {
		t.Errorf("repo forget team: %q", out)
	}
	if out, _ := e.ok("repo", "forget", "stable"); !strings.Contains(out, "forgot the index of "+stable.url) {
		t.Errorf("repo forget stable: %q", out)
	}
	if _, stderr, code := e.pkg("repo", "forget", "nope"); code != 2 || !strings.Contains(stderr, "no repository nope in use (extra, team, stable)") {
		t.Errorf("repo forget nope: exit %d, %s", code, stderr)
	}

	// A lockfile across them: each repository and each package's; sync into a
	// new root takes each from its repository.
	lock := filepath.Join(t.TempDir(), "pkg.lock")
	e.ok("lock", "-o", lock, "app", "stable/tool", "more")
	l, err := repo.ReadLock(lock)
	if err != nil {
		t.Fatal(err)
	}
	var names, from []string
	for _, r := range l.Repos {
		names = append(names, r.Name)
	}
	for _, p := range l.Packages {
		from = append(from, p.Name+"@"+p.Version+" "+p.Repo)
	}
	if strings.Join(names, ",") != "extra,team,stable" || strings.Join(from, ", ") != "app@1.0 team, lib@1.0 stable, more@1.0 extra, tool@2.1 stable" {
		t.Errorf("lockfile: repos %v, packages %v", names, from)
	}
	if x := l.Repos[1].Index; x == nil || l.Repos[0].Index != nil || l.Repos[2].Index != nil {
		t.Errorf("lockfile records the index of team only (verified): %+v", l.Repos)
	}
	fresh := newEnv(t, t.TempDir(), "")
	fresh.ok("sync", "-f", lock, "--root", fresh.root)
	checkRun(t, fresh, "tool", "tool 2.1 from stable")
	checkRun(t, fresh, "app", "app 1.0 from team")
	checkRun(t, fresh, "more", "more 1.0 from extra")
}

// checkRun runs the installed command name in e's root and checks what it says.
func checkRun(t *testing.T, e *env, name, want string) {
	t.Helper()
	out, err := exec.Command(filepath.Join(e.root, "bin", name)).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != want {
		t.Errorf("%s: %q, %v; want %q", name, out, err, want)
	}
}

// TestConfigMirrors installs from a configured repository with three URLs: the first
// refuses connections, the second answers 503, the third serves. One note names both
// that failed and the one used, and repo list shows all three.
func TestConfigMirrors(t *testing.T) {
	good := newMultiRepo(t, "good", "hello 1.0")
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(busy.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String() + "/"
	l.Close()

	urls := []string{refused, busy.URL + "/", good.url}
	conf := "[repo.main]\nurls = [\"" + strings.Join(urls, "\", \"") + "\"]\n"
	userConfig(t, conf)
	e := newEnv(t, t.TempDir(), "")

	_, stderr := e.ok("install", "hello")
	if out, err := exec.Command(filepath.Join(e.root, "bin", "hello")).Output(); err != nil || string(out) != "hello 1.0 from good\n" {
		t.Errorf("hello says %q, %v", out, err)
	}
	var notes []string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "pkg: note: ") && !strings.Contains(line, "is not on PATH") {
			notes = append(notes, line)
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], refused) || !strings.Contains(notes[0], busy.URL) || !strings.HasSuffix(notes[0], "; using "+good.url) {
		t.Errorf("install notes %q; want one naming %s and %s, then using %s", notes, refused, busy.URL, good.url)
	}

	stdout, _ := e.ok("repo", "list")
	for _, u := range urls {
		if !strings.Contains(stdout, u) {
			t.Errorf("repo list:\n%s\nwant %s in it", stdout, u)
		}
	}
}

// userConfig writes conf as the user's config.toml, in an XDG_CONFIG_HOME of the test's,
// and returns its path.
func userConfig(t *testing.T, conf string) string {
	t.Helper()
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	cfg := filepath.Join(xdg, "pkg", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestConfigOneLocation gives one repository location two names: in one file, which is
// refused at the later one's urls; in the user's file and the root's, where the root's
// takes its place; and on the command line beside the configuration, where a name that
// is not the configured repository's at that location is refused, naming both, while a
// configured name at a location of its own stands in for the configured one.
func TestConfigOneLocation(t *testing.T) {
	base := t.TempDir()
	team, stable, other := filepath.Join(base, "team"), filepath.Join(base, "stable"), filepath.Join(base, "other")
	addPackage(t, team, "tool", "1.0")
	addPackage(t, stable, "tool", "2.0")
	addPackage(t, other, "tool", "3.0")
	e := newEnv(t, base, "")

	cfg := userConfig(t, "[repo.team]\nurls = [\""+team+"\"]\n\n[repo.aaa]\nurls = [\""+team+"\"]\n")
	want := "pkg: config " + cfg + ":5:1: repo.aaa.urls: \"" + team + "\" is the location of repo.team (line 2) too: one location is one repository, known by one name\n" +
		"pkg: hint: keep [repo.team] alone for " + team + ", with the keys and mirrors of both\n"
	if _, stderr, code := e.pkg("repo", "list"); code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("repo list, two names for one location in one file: exit %d, %s\nwant %s", code, stderr, want)
	}

	cfg = userConfig(t, "[repo.sys]\nurls = [\""+team+"\"]\n\n[repo.stable]\nurls = [\""+stable+"\"]\npriority = 10\n")
	rootCfg := filepath.Join(e.root, ".pkg", "config.toml")
	if err := os.MkdirAll(filepath.Dir(rootCfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rootCfg, []byte("[repo.team]\nurls = [\""+team+"\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _ := e.ok("repo", "list"); strings.Contains(out, "sys") || !strings.Contains(out, "team (priority 0, from "+rootCfg+")") || !strings.Contains(out, "stable (priority 10, from "+cfg+")") {
		t.Errorf("repo list, the root's team at the location of the user's sys:\n%s", out)
	}
	if out, _ := e.ok("install", "-n", "team/tool"); !strings.Contains(out, "tool 1.0") {
		t.Errorf("install -n team/tool:\n%s", out)
	}

	for _, tc := range []struct{ flag, want string }{
		{"team=" + stable, "pkg: repository team (" + stable + ", from --repo): that location is repository stable, configured in " + cfg},
		{"x=" + team, "pkg: repository x (" + team + ", from --repo): that location is repository team, configured in " + rootCfg},
	} {
		_, stderr, code := e.pkg("--repo", tc.flag, "install", "-n", "tool")
		if code != 1 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "pkg: hint: ") {
			t.Errorf("--repo %s: exit %d, %s\nwant %s, with a hint", tc.flag, code, stderr, tc.want)
		}
	}
	if out, _ := e.ok("--repo", "team="+team, "install", "-n", "team/tool"); !strings.Contains(out, "tool 1.0") {
		t.Errorf("--repo team=%s, the configured team's location: %s", team, out)
	}
	if out, _ := e.ok("--repo", "team="+other, "install", "-n", "team/tool"); !strings.Contains(out, "tool 3.0") {
		t.Errorf("--repo team=%s, in place of the configured team: %s", other, out)
	}
}

// TestConfigCredentialEntry: an entry that gives a configured repository's location again
// with a credential in its URL is that repository: in the same file it is refused, saying
// why and where the credential goes, its password never shown; in a file read later (the
// root's after the user's, as the user's after the system's), it takes the place of the
// earlier one but keeps its keys, so the index must still verify with them: unsigned, it
// is refused.
func TestConfigCredentialEntry(t *testing.T) {
	r := newSignedRepo(t)
	withUser := strings.Replace(r.url, "http://", "http://ci:s3cret@", 1) + "/"
	e := newEnv(t, t.TempDir(), "")

	cfg := userConfig(t, "[repo.demo]\nurls = [\""+r.url+"/\"]\nkeys = [\""+r.pub+"\"]\n\n[repo.ci]\nurls = [\""+withUser+"\"]\n")
	want := "pkg: config " + cfg + ":6:1: repo.ci.urls: \"" + r.url + "/\" is the location of repo.demo (line 2) too, user information apart: one location is one repository, whatever credential its URL holds; a credential belongs in the repository's token, username and password settings or the netrc file (docs/config.md#credentials)\n" +
		"pkg: hint: keep [repo.demo] alone for " + r.url + "/, with the keys of both and no user information in its urls, and give it the credential as token-file, or username with password-file, or a machine 127.0.0.1 entry in ~/.netrc\n"
	if _, stderr, code := e.pkg("repo", "list"); code != 1 || stderr != want {
		t.Errorf("repo list, a repository and its location with a credential in one file: exit %d, %s\nwant %s", code, stderr, want)
	}

	cfg = userConfig(t, "[repo.demo]\nurls = [\""+r.url+"/\"]\nkeys = [\""+r.pub+"\"]\n")
	rootCfg := filepath.Join(e.root, ".pkg", "config.toml")
	if err := os.MkdirAll(filepath.Dir(rootCfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rootCfg, []byte("[repo.demo]\nurls = [\""+withUser+"\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _ := e.ok("repo", "list")
	if !strings.Contains(out, "demo (priority 0, from "+rootCfg+")") || !strings.Contains(out, r.pub+" (from "+cfg+")") || strings.Contains(out, "s3cret") {
		t.Errorf("repo list, the root's demo with a credential at the user's demo with its key:\n%s", out)
	}
	if out, _ := e.ok("install", "-n", "hello"); !strings.Contains(out, "hello 1.2.0") {
		t.Errorf("install -n hello from the signed repository: %s", out)
	}
	index, _ := r.files()
	r.put(index, nil)
	if _, stderr, code := e.pkg("install", "-n", "hello"); code != 1 || !strings.Contains(stderr, "index is not signed") {
		t.Errorf("install -n hello, the index unsigned, with the key of the user's file: exit %d, %s; want it refused", code, stderr)
	}
}

// TestConfigNoRepository: a configured repository whose location serves no index (a path
// or tag mistyped in the configuration) is named with the file that configures it, and
// the hint points there, not at --repo, which was not given.
func TestConfigNoRepository(t *testing.T) {
	base := t.TempDir()
	e := newEnv(t, base, "")
	missing := filepath.Join(base, "nothing")
	cfg := userConfig(t, "[repo.team]\nurls = [\""+missing+"\"]\n")
	_, stderr, code := e.pkg("install", "tool")
	want := "pkg: repository team (from " + cfg + "): no repository at " + missing
	hint := "pkg: hint: check the urls of [repo.team] in " + cfg
	if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, hint) || strings.Contains(stderr, "--repo") {
		t.Errorf("install from a configured location with no repository: exit %d, %s\nwant %s and %s", code, stderr, want, hint)
	}
}

// TestLockNoRepository: pkg lock of a lockfile whose recorded repository moved away names
// the lockfile, and the hint says to name where it is now with --repo NAME=LOCATION, not
// to check a configuration file's [repo.NAME] urls, which the lockfile has none of.
func TestLockNoRepository(t *testing.T) {
	base := t.TempDir()
	userConfig(t, "")
	dir := filepath.Join(base, "team")
	if err := os.CopyFS(dir, os.DirFS(demoRepo)); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(base, "pkg.lock")
	newEnv(t, base, "team="+dir).ok("lock", "-o", lock, "hello")
	if err := os.Rename(dir, dir+".moved"); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	code := run([]string{"pkg", "--root", filepath.Join(base, "root"), "--cache", filepath.Join(base, "cache"), "lock", "-o", lock}, io.Discard, &stderr)
	want := "pkg: repository team (from lockfile " + lock + "): no repository at " + dir
	hint := "pkg: hint: the repository is no longer where " + lock + " records it: name where it is now, or a copy of it, with 'pkg "
	if code != 1 || !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), hint) || !strings.Contains(stderr.String(), "--repo team=LOCATION lock -o "+lock) || strings.Contains(stderr.String(), "[repo.") {
		t.Errorf("lock of a lockfile whose repository moved: exit %d, %s\nwant %s and %s", code, stderr.String(), want, hint)
	}
}

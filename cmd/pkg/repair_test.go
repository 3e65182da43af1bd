package main

import (
	"bytes"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"pkg/repo"
	"pkg/report"
	"pkg/txn"
)

// TestRepairFailedKeepsDatabase: a repair that fails before its new database is whole
// (here its creation, refused by a directory in the way) leaves the root's database as
// it was, with the records of what the user asked for, not a root with none, where a start
// would create an empty one and the next repair find nothing to salvage.
func TestRepairFailedKeepsDatabase(t *testing.T) {
	d := newDamagedDB(t)
	d.damage(t, func(b []byte) []byte { b[newestMeta(b)*dbPage+metaChecksum] ^= 1; return b }) // stale: its records still read
	damaged, err := os.ReadFile(d.path)
	if err != nil {
		t.Fatal(err)
	}
	var ways []string
	for _, name := range []string{"db.new", "db.rebuilt.new"} { // what the creation of a database writes
		way := filepath.Join(d.e.root, ".pkg", name)
		if err := os.MkdirAll(filepath.Join(way, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
		ways = append(ways, way)
	}
	if _, stderr, code := d.e.pkg("verify", "--repair"); code != 1 {
		t.Fatalf("verify --repair with its database's creation refused: exit %d\n%s", code, stderr)
	}
	for _, way := range ways {
		if err := os.RemoveAll(way); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := os.ReadFile(d.path); err != nil || !bytes.Equal(got, damaged) {
		t.Errorf("the database after the failed repair: %v; want it as it was", err)
	}
	if kept, _ := filepath.Glob(d.path + ".damaged-*"); len(kept) != 0 {
		t.Errorf("the failed repair kept %v", kept)
	}
	d.e.ok("verify", "--repair")
	if got := d.e.list(); !slices.Equal(got, d.listed) {
		t.Errorf("list after the repair: %v, want %v", got, d.listed)
	}
}

// staleAfter runs pkg args, which must succeed, with the root's database as it was put back
// after: older than its last commit (a copy put back, or a newest meta page lost, leaves it
// so), which every command refuses and a repair replaces, its records still read.
func (e *env) staleAfter(args ...string) {
	e.t.Helper()
	path := filepath.Join(e.root, ".pkg", "db")
	old, err := os.ReadFile(path)
	if err != nil {
		e.t.Fatal(err)
	}
	e.ok(args...)
	if err := os.WriteFile(path, old, 0o644); err != nil {
		e.t.Fatal(err)
	}
	if _, stderr, code := e.pkg("list"); code != 1 || !strings.Contains(stderr, path+" is damaged") {
		e.t.Fatalf("list with the database put back: exit %d\n%s", code, stderr)
	}
}

// without returns l without the package name.
func without(l report.List, name string) report.List {
	l.Packages = slices.DeleteFunc(slices.Clone(l.Packages), func(p report.Installed) bool { return p.Name == name })
	return l
}

// TestRepairKeepsLocalArchive: a package installed from a local archive file, which no
// repository's index describes, keeps after a repair what its record said where the old
// database can be read that far: the file it came from, its commands (its link in bin/),
// its dependencies and its install time.
func TestRepairKeepsLocalArchive(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "lib", "1.0")
	addPackage(t, dir, "other", "1.0")
	e := newEnv(t, base, dir)
	files := t.TempDir()
	t.Chdir(files)
	writeFile(t, files, "tool-1.0.tar.gz", gzipped(t, packageTar(t, "tool", "1.0", 'l')))
	e.ok("install", "./tool-1.0.tar.gz", "--depends", "lib")
	e.ok("install", "other")
	before := without(decode[report.List](t, "list --json", mustOut(e.ok("list", "--json")), "pkg.list/1"), "other")
	info, _ := e.ok("info", "tool")
	e.staleAfter("remove", "other")
	e.ok("verify", "--repair")
	after := decode[report.List](t, "list --json", mustOut(e.ok("list", "--json")), "pkg.list/1")
	if !reflect.DeepEqual(after, before) {
		t.Errorf("list --json after the repair: %+v, was %+v", after, before)
	}
	if got, _ := e.ok("info", "tool"); lines(got, "bin:", "depends:", "from:") != lines(info, "bin:", "depends:", "from:") {
		t.Errorf("info tool after the repair:\n%s\nwas\n%s", got, info)
	}
	if _, err := os.Lstat(filepath.Join(e.root, "bin", "tool")); err != nil {
		t.Errorf("bin/tool after the repair: %v", err)
	}
	e.ok("verify")
}

// TestRepairNPMWithoutRepo: a repair given no repository records npm instances too, each
// by its tree pkgs/NAME@VERSION: from the old database's records where it can be read (then
// as they were), else as the cache's entries alone say; never fewer than the trees.
func TestRepairNPMWithoutRepo(t *testing.T) {
	base := t.TempDir()
	addNPM(t, base, "dep", "1.0.0")
	addNPM(t, base, "app", "1.0.0", "dep@npm:^1.0.0")
	addNPM(t, base, "other", "1.0.0")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "app")
	e.ok("install", "other")
	before := without(decode[report.List](t, "list --json", mustOut(e.ok("list", "--json")), "pkg.list/1"), "other")
	e.staleAfter("remove", "other")
	repair := func() (string, string, int) {
		var out, stderr bytes.Buffer
		code := run([]string{"pkg", "--root", e.root, "--cache", e.cache, "verify", "--repair"}, &out, &stderr)
		return out.String(), stderr.String(), code
	}
	if out, stderr, code := repair(); code != 0 || !strings.HasPrefix(out, "recorded 2 packages again from their trees: app 1.0.0, dep 1.0.0\n") || strings.Contains(stderr, "recorded without their commands") {
		t.Fatalf("verify --repair without a repository, its records readable: exit %d\n%s%s", code, out, stderr)
	}
	after := decode[report.List](t, "list --json", mustOut(e.ok("list", "--json")), "pkg.list/1")
	if !reflect.DeepEqual(after, before) {
		t.Errorf("list --json after the repair: %+v, was %+v", after, before)
	}
	e.ok("verify")

	if err := os.WriteFile(filepath.Join(e.root, ".pkg", "db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := repair(); code != 1 || !strings.HasPrefix(out, "recorded 2 packages again from their trees: app 1.0.0, dep 1.0.0\n") ||
		!strings.Contains(out, "app 1.0.0: incomplete") ||
		!strings.Contains(stderr, "no index or record to describe app 1.0.0 and dep 1.0.0 (no repository is given)") ||
		!strings.Contains(stderr, "'pkg --root "+e.root+" --cache "+e.cache+" --repo URL install --reinstall app@1.0.0 dep@1.0.0'") {
		t.Fatalf("verify --repair of a damaged database without a repository: exit %d\n%s%s", code, out, stderr)
	}
	if got := e.installed(); got != "app 1.0.0, dep 1.0.0" {
		t.Errorf("installed after the repair: %q", got)
	}
	e.ok("install", "--reinstall", "app@1.0.0", "dep@1.0.0")
	e.ok("verify")
}

// TestRepairWithoutRepoIncomplete: a repair with no repository in effect and no record to
// read records each package without its dependencies and commands, and says so until a
// sync of its lockfile (offline, from the cache) records them again: verify reported the
// root verified, list and info showed the packages as any other, and tool's command stayed
// gone.
func TestRepairWithoutRepoIncomplete(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "lib", "1.0")
	addPackage(t, dir, "tool", "1.0", "lib")
	e := newEnv(t, base, dir)
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "tool")
	e.ok("sync", "-f", lock)
	if err := os.Remove(filepath.Join(e.root, ".pkg", "db")); err != nil {
		t.Fatal(err)
	}
	norepo := func(args ...string) (string, string, int) {
		var out, stderr bytes.Buffer
		code := run(append([]string{"pkg", "--root", e.root, "--cache", e.cache}, args...), &out, &stderr)
		return out.String(), stderr.String(), code
	}
	out, stderr, code := norepo("verify", "--repair")
	if code != 1 || !strings.Contains(out, "tool 1.0: incomplete (") ||
		!strings.Contains(stderr, "pkg: hint: 'pkg --root "+e.root+" --cache "+e.cache+" sync -f LOCKFILE'") || !strings.Contains(stderr, "'pkg --root "+e.root+" --cache "+e.cache+" --repo URL install --reinstall lib tool'") {
		t.Fatalf("verify --repair without a repository or records: exit %d\n%s%s", code, out, stderr)
	}
	out, _, code = norepo("verify", "--json")
	v := decode[report.Verify](t, "verify --json", out, "pkg.verify/1")
	var kinds []string
	for _, p := range v.Problems {
		kinds = append(kinds, p.Package+" "+p.Kind)
	}
	if code != 1 || !slices.Equal(kinds, []string{"lib incomplete", "tool incomplete"}) {
		t.Errorf("verify --json after the repair: exit %d, problems %v", code, kinds)
	}
	for _, p := range decode[report.List](t, "list --json", mustOut(e.ok("list", "--json")), "pkg.list/1").Packages {
		if !p.Incomplete {
			t.Errorf("list --json after the repair: %s not incomplete", p.Name)
		}
	}
	if info, _ := e.ok("info", "tool"); !strings.Contains(info, "record:") {
		t.Errorf("info tool after the repair says nothing of its record:\n%s", info)
	}

	e.ok("--offline", "sync", "-f", lock)
	e.ok("verify")
	if info, _ := e.ok("info", "tool"); lines(info, "record:", "depends:", "bin:") != "depends:   lib\nbin:       bin/tool\n" {
		t.Errorf("info tool after the sync:\n%s", info)
	}
	if _, err := os.Lstat(filepath.Join(e.root, "bin", "tool")); err != nil {
		t.Errorf("bin/tool after the sync: %v", err)
	}
}

// TestRepairNPMRequests: a repair of a database whose requests are lost takes as asked for
// each npm instance that lib/node_modules/NAME leads to, as only a request makes that link:
// dep, asked for though app needs it, was counted a dependency, and its link stayed in
// lib/node_modules, owned by nothing, after every package was removed.
func TestRepairNPMRequests(t *testing.T) {
	base := t.TempDir()
	addNPM(t, base, "dep", "1.0.0")
	addNPM(t, base, "@s/dep", "1.0.0")
	addNPM(t, base, "app", "1.0.0", "dep@npm:^1.0.0", "@s/dep@npm:^1.0.0")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "app", "dep", "@s/dep")
	if err := os.WriteFile(filepath.Join(e.root, ".pkg", "db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok("verify", "--repair")
	if got, want := e.requested(), "@s/dep 1.0.0, app 1.0.0, dep 1.0.0"; got != want {
		t.Errorf("asked for after the repair: %q, want %q", got, want)
	}
	e.ok("remove", "app", "dep", "@s/dep")
	if ents, err := os.ReadDir(filepath.Join(e.root, "lib", "node_modules")); len(ents) != 0 {
		t.Errorf("lib/node_modules once every package is removed: %v, %v; want it empty or gone", ents, err)
	}
}

// TestRepairNPMCycle: a repair of a database whose requests are lost takes as asked for,
// of npm instances that need each other, the ones lib/node_modules/NAME leads to: plug,
// which needs cli as cli needs it, was counted asked for too, got a link in
// lib/node_modules the user never had, and remove cli failed as plug depended on it.
func TestRepairNPMCycle(t *testing.T) {
	base := t.TempDir()
	addNPM(t, base, "cli", "1.0.0", "plug@npm:^1.0.0")
	addNPM(t, base, "plug", "1.0.0", "cli@npm:^1.0.0")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "cli")
	if err := os.WriteFile(filepath.Join(e.root, ".pkg", "db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok("verify", "--repair")
	if got, want := e.requested(), "cli 1.0.0"; got != want {
		t.Errorf("asked for after the repair: %q, want %q", got, want)
	}
	if _, err := os.Lstat(filepath.Join(e.root, "lib", "node_modules", "plug")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("lib/node_modules/plug after the repair: %v; want none", err)
	}
	e.ok("remove", "cli")
	if got := e.installed(); got != "" {
		t.Errorf("installed once cli is removed: %q, want nothing", got)
	}
}

// lines returns the lines of text that begin with one of prefixes.
func lines(text string, prefixes ...string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(text, "\n") {
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				b.WriteString(l)
			}
		}
	}
	return b.String()
}

// TestRepairSoundDatabase: verify --repair of a database that is not damaged says so and
// keeps it, with every record as it was: install times, what was asked for, holds; it
// puts no .pkg/db.damaged-N beside it.
func TestRepairSoundDatabase(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "lib", "1.0")
	addPackage(t, dir, "app", "1.0", "lib")
	e := newEnv(t, base, dir)
	e.ok("install", "app=1.0")
	before := decode[report.List](t, "list --json", mustOut(e.ok("list", "--json")), "pkg.list/1")
	infos := []string{mustOut(e.ok("info", "app")), mustOut(e.ok("info", "lib"))}
	out, stderr := e.ok("verify", "--repair")
	if !strings.HasPrefix(out, "the database is not damaged: kept it") || strings.Contains(stderr, "kept as") {
		t.Errorf("verify --repair of a sound database:\n%s%s", out, stderr)
	}
	if kept, _ := filepath.Glob(filepath.Join(e.root, ".pkg", "db.damaged-*")); len(kept) != 0 {
		t.Errorf("the repair of a sound database kept %v", kept)
	}
	after := decode[report.List](t, "list --json", mustOut(e.ok("list", "--json")), "pkg.list/1")
	if !reflect.DeepEqual(after, before) {
		t.Errorf("list --json after the repair: %+v, was %+v", after, before)
	}
	if got := []string{mustOut(e.ok("info", "app")), mustOut(e.ok("info", "lib"))}; !slices.Equal(got, infos) {
		t.Errorf("info after the repair:\n%s\nwas\n%s", got, infos)
	}
}

// TestRepairStaleLaterRequests: a repair of a database older than its last commit takes
// what it records as asked for, and counts as asked for, as where nothing can be read, each
// package it has no record of that no other needs: tool, installed after the copy put back,
// and dep 1.1.0, an npm instance upgraded since, were counted dependencies, and autoremove
// took both.
func TestRepairStaleLaterRequests(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "lib", "1.0")
	addPackage(t, dir, "other", "1.0")
	addPackage(t, dir, "tool", "1.0", "lib")
	addNPM(t, base, "dep", "1.0.0")
	e := newEnv(t, base, dir)
	e.ok("install", "other", "dep")
	path := filepath.Join(e.root, ".pkg", "db")
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	addNPM(t, base, "dep", "1.1.0")
	e.ok("install", "tool")
	e.ok("upgrade")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok("verify", "--repair")
	if got, want := e.requested(), "dep 1.1.0, other 1.0, tool 1.0"; got != want {
		t.Errorf("asked for after the repair: %q, want %q", got, want)
	}
	e.ok("autoremove")
	if got, want := e.installed(), "dep 1.1.0, lib 1.0, other 1.0, tool 1.0"; got != want {
		t.Errorf("installed after autoremove: %q, want %q", got, want)
	}
}

// TestRepairAfterCacheClean: a repair whose trees the cache no longer has an entry of (the
// cache cleaned since the install) fetches the versions the repository offers of their
// names and records each tree as the one it matches: it refused, and advised moving every
// tree out of pkgs/ and installing each package again.
func TestRepairAfterCacheClean(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "lib", "1.0")
	addPackage(t, dir, "tool", "1.0", "lib")
	addNPM(t, base, "dep", "1.0.0")
	e := newEnv(t, base, dir)
	e.ok("install", "tool", "dep")
	before := decode[report.List](t, "list --json", mustOut(e.ok("list", "--json")), "pkg.list/1")
	addPackage(t, dir, "lib", "2.0")
	addNPM(t, base, "dep", "1.1.0")
	e.ok("cache", "clean")
	if err := os.WriteFile(filepath.Join(e.root, ".pkg", "db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok("verify", "--repair")
	if got, want := e.installed(), "dep 1.0.0, lib 1.0, tool 1.0"; got != want {
		t.Errorf("installed after the repair: %q, want %q", got, want)
	}
	if got, want := e.requested(), "dep 1.0.0, tool 1.0"; got != want {
		t.Errorf("asked for after the repair: %q, want %q", got, want)
	}
	after := decode[report.List](t, "list --json", mustOut(e.ok("list", "--json")), "pkg.list/1")
	for i := range after.Packages {
		after.Packages[i].InstalledAt = before.Packages[i].InstalledAt // no record gives it
	}
	if !reflect.DeepEqual(after, before) {
		t.Errorf("list --json after the repair: %+v, was %+v", after, before)
	}
	e.ok("verify")
}

// TestRepairOtherPlatform: a repair offered a package built for this machine and for
// another fetches and records this machine's build only.
func TestRepairOtherPlatform(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	other := otherPlatform()
	pub := newEnv(t, base, dir)
	addBothHellos(t, pub, dir)
	var mu sync.Mutex
	var asked []string
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	e := newEnv(t, base, srv.URL)
	e.ok("install", "hello")
	e.ok("cache", "clean")
	if err := os.WriteFile(filepath.Join(e.root, ".pkg", "db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	asked = nil
	mu.Unlock()
	e.ok("verify", "--repair")
	mu.Lock()
	defer mu.Unlock()
	if slices.Contains(asked, "/hello-1.0-"+other+".tar") || !slices.Contains(asked, "/hello-1.0-"+repo.Host+".tar") {
		t.Errorf("the repair asked for %v; want the %s build of hello, not the %s one", asked, repo.Host, other)
	}
	if got, want := e.installed(), "hello 1.0"; got != want {
		t.Errorf("installed after the repair: %q, want %q", got, want)
	}
	out, err := exec.Command(filepath.Join(e.root, "bin", "hello")).Output()
	if want := "hello for " + repo.Host + "\n"; err != nil || string(out) != want {
		t.Errorf("repaired hello says %q, %v; want %q", out, err, want)
	}
	e.ok("verify")
}

// TestRepairMetaLost: a root whose .pkg/ was deleted whole is repaired as one whose
// database is gone: verify --repair said no root was there, nothing ever installed.
func TestRepairMetaLost(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "lib", "1.0")
	addPackage(t, dir, "tool", "1.0", "lib")
	e := newEnv(t, base, dir)
	e.ok("install", "tool")
	if err := os.RemoveAll(filepath.Join(e.root, ".pkg")); err != nil {
		t.Fatal(err)
	}
	e.ok("verify", "--repair")
	if got, want := e.requested(), "tool 1.0"; got != want {
		t.Errorf("asked for after the repair: %q, want %q", got, want)
	}
	if got, want := e.installed(), "lib 1.0, tool 1.0"; got != want {
		t.Errorf("installed after the repair: %q, want %q", got, want)
	}
	e.ok("verify")
}

// TestRepairGoneDependency: the tree of lib, a library with a command that app depends on
// (libjq1 and jq), deleted by hand. The repair of the sound database refuses, naming both, and changes
// nothing: it recorded a roll-forward of links from the tree that is not there, which
// every command then refused to go past, the reinstall it advised included. The repair of
// a database older than its last commit does not record lib again and says so, naming
// app; verify then names app's dependency, with the reinstall of app that installs it as
// app's dependency, in one change that a dry run shows, moving app to no newer version the
// repository has and recording no request (an upgrade of app moved it to 1.1). What lib
// left in the prefix, its command in bin/ among it, the repair keeps in .pkg/saved and
// says so: the reinstall refused bin/lib, a link into the deleted tree, as not pkg's.
func TestRepairGoneDependency(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	lib := filepath.Join(base, "lib-1.0.tar")
	writeFile(t, base, "lib-1.0.tar", pax(t, tf("lib/liblib.so.1", "ELF"), tf("share/doc/lib/copyright", "MIT\n"), moded(tf("bin/lib", "#!/bin/sh\n"), 0o755)))
	if _, err := repo.Add(t.Context(), dir, lib, repo.Package{Name: "lib", Version: "1.0", Bin: []repo.Command{{Name: "lib", Path: "bin/lib"}}, InstalledSize: 17}, false, nil); err != nil {
		t.Fatal(err)
	}
	addPackage(t, dir, "app", "1.0", "lib>=1") // its entry says no size
	e := newEnv(t, base, dir)
	e.ok("install", "app")
	tree := filepath.Join(e.root, "pkgs", "lib")
	if err := os.RemoveAll(tree); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := e.pkg("verify", "--repair")
	want := "pkg: repair: lib 1.0 is recorded, but its tree " + tree + " is gone (app 1.0 depends on it): nothing was changed\n" +
		"pkg: hint: the database is not damaged: '" + e.cmd("install --reinstall lib") + "' puts back what is gone"
	if code != 1 || !strings.Contains(stderr, want) {
		t.Fatalf("verify --repair with lib's tree gone: exit %d\n%s\nwant %q", code, stderr, want)
	}
	// --json printed nothing on stdout: the refusal is its document.
	out, _, code := e.pkg("verify", "--repair", "--json")
	v := decode[report.Verify](t, "verify --repair --json", out, "pkg.verify/1")
	if wantGone := []report.GoneTree{{Package: "lib", Version: "1.0", Tree: tree, By: []string{"app 1.0"}}}; code != 1 || v.Refused == nil ||
		!strings.Contains(v.Refused.Error, "its tree "+tree+" is gone") || !reflect.DeepEqual(v.Refused.Gone, wantGone) {
		t.Errorf("verify --repair --json with lib's tree gone: exit %d, %+v", code, v.Refused)
	}
	e.ok("install", "--reinstall", "lib")
	e.ok("verify")

	e.staleAfter("install", "--reinstall", "lib")
	if err := os.RemoveAll(tree); err != nil {
		t.Fatal(err)
	}
	addPackage(t, dir, "app", "1.1", "lib>=1")
	out, stderr, code = e.pkg("verify", "--repair")
	if code != 1 || !strings.Contains(stderr, "pkg: warning: lib 1.0 is not recorded again: its tree "+tree+" is gone, and app 1.0 depends on it\n") ||
		!strings.Contains(stderr, "pkg: warning: lib 1.0, whose tree is gone, left 3 paths in the root that pkg cannot tell from yours: kept in "+filepath.Join(e.root, ".pkg", "saved", "lib-1.0-root.")) ||
		!strings.Contains(stderr, ": bin/lib, lib/liblib.so.1 and share/doc/lib/copyright\n") ||
		out != "recorded 1 package again from their trees: app 1.0\napp 1.0: missing lib>=1 (dependency)\n" ||
		!strings.Contains(stderr, "pkg: verify: 1 problem found; '"+e.cmd("install --reinstall app")+"' restores what was installed (keeping what you changed in .pkg/saved), installing the dependencies app lacks\n") {
		t.Fatalf("verify --repair of a stale database with lib's tree gone: exit %d\n%s%s", code, out, stderr)
	}
	out, _, code = e.pkg("verify", "--json")
	problems := []report.Problem{{Package: "app", Version: "1.0", Requirement: "lib>=1", Kind: "missing", What: "dependency"}}
	if v := decode[report.Verify](t, "verify --json", out, report.VerifySchema); code != 1 || !reflect.DeepEqual(v.Problems, problems) {
		t.Errorf("verify --json with lib gone: exit %d\n%s\nwant the problems %#v", code, out, problems)
	}
	plan := decode[txn.Plan](t, "install --reinstall --dry-run --json app", mustOut(e.ok("install", "--reinstall", "--dry-run", "--json", "app")), txn.Schema)
	if got := strings.Join(changes(plan), ", "); got != "install lib 1.0 (dependency of app), reinstall app 1.0 (requested)" || plan.Disk != 17 {
		t.Errorf("the reinstall's plan: %s, %d bytes more disk space; want lib installed and app reinstalled, lib's 17 bytes more", got, plan.Disk)
	}
	out, _ = e.ok("install", "--reinstall", "app")
	if !strings.Contains(out, "installed lib 1.0: ") || !strings.Contains(out, "reinstalled app 1.0: ") {
		t.Errorf("install --reinstall app said:\n%s", out)
	}
	e.ok("verify")
	if got, asked, reqs := e.installed(), e.requested(), e.requests(); got != "app 1.0, lib 1.0" || asked != "app 1.0" || reqs != "app:app" {
		t.Errorf("after the reinstall: installed %q, asked for %q, requests %q; want app and lib, app asked for as app", got, asked, reqs)
	}
}

// TestRepairGoneNPMDependency: the tree of ms@2.0.0, which debug 2.6.9 depends on exactly,
// deleted and not recorded again by a repair. Verify names debug's dependency with the
// reinstall of its instance, debug@2.6.9, which installs ms 2.0.0 as its dependency (not
// the newer 2.1.3 the repository has) and records no request: the upgrade it advised
// recorded debug@2.6.9 as debug's request, which held debug there from then on.
func TestRepairGoneNPMDependency(t *testing.T) {
	base := t.TempDir()
	addNPM(t, base, "ms", "2.0.0")
	addNPM(t, base, "ms", "2.1.3")
	addNPM(t, base, "debug", "2.6.9", "ms@npm:2.0.0")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "debug")
	e.staleAfter("install", "--reinstall", "ms")
	if err := os.RemoveAll(filepath.Join(e.root, "pkgs", "ms@2.0.0")); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := e.pkg("verify", "--repair")
	if code != 1 || out != "recorded 1 package again from their trees: debug 2.6.9\ndebug 2.6.9: missing ms@npm:2.0.0 (dependency)\n" ||
		!strings.Contains(stderr, "pkg: verify: 1 problem found; '"+e.cmd("install --reinstall debug@2.6.9")+"' restores what was installed (keeping what you changed in .pkg/saved), installing the dependencies debug@2.6.9 lacks\n") {
		t.Fatalf("verify --repair with ms's tree gone: exit %d\n%s%s", code, out, stderr)
	}
	e.ok("install", "--reinstall", "debug@2.6.9")
	e.ok("verify")
	if got, reqs := e.installed(), e.requests(); got != "debug 2.6.9, ms 2.0.0" || reqs != "debug@2.6.9:debug" {
		t.Errorf("after the reinstall: installed %q, requests %q; want debug and ms 2.0.0, debug asked for as debug", got, reqs)
	}
	if target, err := os.Readlink(filepath.Join(e.root, "lib", "node_modules", ".pnpm", "debug@2.6.9", "node_modules", "ms")); err != nil || target != "../../ms@2.0.0/node_modules/ms" {
		t.Errorf("debug's link to ms: %q, %v", target, err)
	}
}

// TestRepairGoneRequested: the tree of lib, asked for as lib>=1 and needed by nothing,
// deleted, and the database put back older than its last commit. The repair cannot record
// lib again, nor its request, and verify then has nothing to say of it: the repair says
// how to ask for it again, by the requirement it was asked for by, which puts it back with
// its hold; lib's command, left in bin/, the repair keeps in .pkg/saved, where that install
// refused it as not pkg's. It warned alone, and the request was gone without a word of what to do. With
// --json, what the repair did is a note: stdout holds the JSON alone.
func TestRepairGoneRequested(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	writeFile(t, base, "lib-1.0.tar", pax(t, tf("lib/liblib.so.1", "ELF"), moded(tf("bin/lib", "#!/bin/sh\n"), 0o755)))
	if _, err := repo.Add(t.Context(), dir, filepath.Join(base, "lib-1.0.tar"), repo.Package{Name: "lib", Version: "1.0", Bin: []repo.Command{{Name: "lib", Path: "bin/lib"}}}, false, nil); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, base, dir)
	e.ok("install", "lib>=1")
	e.staleAfter("install", "--reinstall", "lib")
	tree := filepath.Join(e.root, "pkgs", "lib")
	if err := os.RemoveAll(tree); err != nil {
		t.Fatal(err)
	}
	out, stderr := e.ok("verify", "--repair", "--json")
	want := "pkg: note: recorded no package again: pkgs/ holds no tree\n" +
		"pkg: warning: lib 1.0 is not recorded again: its tree " + tree + " is gone\n" +
		"pkg: warning: lib 1.0, whose tree is gone, left 2 paths in the root that pkg cannot tell from yours: kept in " + filepath.Join(e.root, ".pkg", "saved", "lib-1.0-root.")
	hint := "pkg: hint: you asked for lib 1.0: '" + e.cmd("install 'lib>=1'") + "' installs it again, as asked for\n"
	if v := decode[report.Verify](t, "verify --repair --json", out, report.VerifySchema); !strings.Contains(stderr, want) || !strings.Contains(stderr, ": bin/lib and lib/liblib.so.1\n"+hint) || v.Packages != 0 {
		t.Fatalf("verify --repair --json with lib's tree gone:\n%s%s\nwant %q and %q on stderr, and the JSON alone on stdout", out, stderr, want, hint)
	}
	if _, err := os.Lstat(filepath.Join(e.root, "bin", "lib")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("bin/lib after the repair: %v, want it kept in .pkg/saved", err)
	}
	e.ok("install", "lib>=1")
	e.ok("verify")
	if got := e.requests(); got != "lib:lib>=1" {
		t.Errorf("requests after the install the repair advised: %q", got)
	}
}

// TestRepairGoneWithoutRepo: the repair of a sound database whose lib tree was deleted,
// where no repository is in effect, advises the reinstall from the cache, --offline, and
// that advice, followed as given, puts the tree back; the one without --offline stopped at
// "no repository".
func TestRepairGoneWithoutRepo(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("PKG_REPO", "")
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "lib", "1.0")
	addPackage(t, dir, "app", "1.0", "lib>=1")
	e := newEnv(t, base, dir)
	e.ok("install", "app")
	if err := os.RemoveAll(filepath.Join(e.root, "pkgs", "lib")); err != nil {
		t.Fatal(err)
	}
	repoless := func(args ...string) (string, int) {
		var out, stderr bytes.Buffer
		code := run(append([]string{"pkg", "--root", e.root, "--cache", e.cache}, args...), &out, &stderr)
		return stderr.String(), code
	}
	stderr, code := repoless("verify", "--repair")
	advice := "pkg: hint: the database is not damaged: 'pkg --root " + e.root + " --cache " + e.cache + " --offline install --reinstall lib' puts back what is gone"
	if code != 1 || !strings.Contains(stderr, advice) {
		t.Fatalf("verify --repair with no repository: exit %d\n%s\nwant %q", code, stderr, advice)
	}
	if stderr, code := repoless("--offline", "install", "--reinstall", "lib"); code != 0 {
		t.Fatalf("the advice followed: exit %d, %s", code, stderr)
	}
	if stderr, code := repoless("verify"); code != 0 {
		t.Errorf("verify after the advice: exit %d, %s", code, stderr)
	}
}

// TestRepairWithoutRepoUpgrade: an upgrade from a repository records again each package a
// repair recorded incomplete, as a reinstall does: stub, with no dependencies or commands,
// was kept as recorded, its entry no different from the record, and stayed incomplete.
// outdated lists it before the upgrade, as what the upgrade changes, and not after.
func TestRepairWithoutRepoUpgrade(t *testing.T) {
	for _, names := range [][]string{nil, {"stub"}} {
		base := t.TempDir()
		dir := filepath.Join(base, "repo")
		archive := filepath.Join(base, "stub-1.0.tar")
		if err := os.WriteFile(archive, packageTar(t, "stub", "1.0", 'v'), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := repo.Add(t.Context(), dir, archive, repo.Package{Name: "stub", Version: "1.0"}, false, nil); err != nil {
			t.Fatal(err)
		}
		e := newEnv(t, base, dir)
		e.ok("install", "stub")
		if err := os.Remove(filepath.Join(e.root, ".pkg", "db")); err != nil {
			t.Fatal(err)
		}
		var out, stderr bytes.Buffer
		if code := run([]string{"pkg", "--root", e.root, "--cache", e.cache, "verify", "--repair"}, &out, &stderr); code != 1 {
			t.Fatalf("verify --repair without a repository: exit %d\n%s%s", code, out.String(), stderr.String())
		}
		if out, _ := e.ok("outdated"); !strings.Contains(out, "stub 1.0 was recorded by a repair without its dependencies, commands and libraries: upgrade records it again with the repository's entry\n") {
			t.Errorf("outdated with stub recorded incomplete:\n%s", out)
		}
		js, _ := e.ok("outdated", "--json")
		got := decode[report.Outdated](t, "outdated --json", js, report.OutdatedSchema)
		want := []report.OutdatedEntry{{Name: "stub", Installed: "1.0", Allowed: "1.0", Newest: "1.0", Bare: true}}
		if !slices.Equal(got.Packages, want) {
			t.Errorf("outdated --json with stub recorded incomplete = %+v, want %+v", got.Packages, want)
		}
		e.ok(append([]string{"upgrade"}, names...)...)
		if out, stderr, code := e.pkg("verify"); code != 0 {
			t.Errorf("verify after pkg upgrade %v of stub recorded incomplete: exit %d\n%s%s", names, code, out, stderr)
		}
		js, _ = e.ok("outdated", "--json")
		if got := decode[report.Outdated](t, "outdated --json", js, report.OutdatedSchema); len(got.Packages) != 0 {
			t.Errorf("outdated --json after pkg upgrade %v of stub recorded incomplete = %+v, want none", names, got.Packages)
		}
	}
}

// TestRepairBareRemove: tool, recorded by a repair without its dependencies (no
// repository in effect, no record of it: installed again after the database put back),
// may need lib, which it was installed with and which was no request's: remove lib
// refused, naming tool and advising its reinstall; autoremove kept lib, saying for which
// package. With the repository in effect, its entry says what tool needs: remove refuses
// as for any dependent, autoremove finds nothing to take, and the removal of tool says lib
// is no longer needed. remove lib went through, and autoremove took lib, leaving tool
// without it; tool's removal said nothing of lib.
func TestRepairBareRemove(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "lib", "1.0")
	addPackage(t, dir, "other", "1.0")
	addPackage(t, dir, "tool", "1.0", "lib")
	e := newEnv(t, base, dir)
	e.ok("install", "tool", "other")
	e.ok("remove", "tool") // lib stays, as no request's
	e.staleAfter("install", "tool")
	norepo := func(args ...string) (string, string, int) {
		var out, stderr bytes.Buffer
		code := run(append([]string{"pkg", "--root", e.root, "--cache", e.cache}, args...), &out, &stderr)
		return out.String(), stderr.String(), code
	}
	if _, stderr, code := norepo("verify", "--repair"); code != 1 || !strings.Contains(stderr, "no index or record to describe tool 1.0") {
		t.Fatalf("verify --repair without a repository: exit %d\n%s", code, stderr)
	}
	for _, args := range [][]string{{"remove", "lib"}, {"remove", "other"}} {
		_, stderr, code := norepo(args...)
		if code != 1 || !strings.Contains(stderr, "pkg: "+strings.Join(args, " ")+": the dependencies of tool 1.0 are unknown") ||
			!strings.Contains(stderr, "pkg: hint: 'pkg --root "+e.root+" --cache "+e.cache+" install --reinstall tool' records the dependencies") {
			t.Errorf("pkg %v beside tool recorded incomplete: exit %d\n%s", args, code, stderr)
		}
	}
	out, stderr, code := norepo("autoremove")
	if code != 0 || !strings.Contains(out, "keep lib 1.0: may be needed by tool 1.0, whose dependencies are unknown") ||
		!strings.Contains(stderr, "install --reinstall tool' records the dependencies") {
		t.Errorf("autoremove beside tool recorded incomplete: exit %d\n%s%s", code, out, stderr)
	}
	if got, want := e.installed(), "lib 1.0, other 1.0, tool 1.0"; got != want {
		t.Errorf("installed after remove and autoremove: %q, want %q", got, want)
	}
	// The way out where no repository has tool's archive: the hint's removal of it along.
	_, stderr, _ = norepo("remove", "other")
	along := "'pkg --root " + e.root + " --cache " + e.cache + " remove other tool' takes it along"
	if !strings.Contains(stderr, along) {
		t.Errorf("remove other beside tool recorded incomplete: want the hint %s\n%s", along, stderr)
	}
	if _, stderr, code := norepo("remove", "--dry-run", "other", "tool"); code != 0 {
		t.Errorf("remove --dry-run other tool, as the hint says: exit %d\n%s", code, stderr)
	}

	if _, stderr, code := e.pkg("remove", "lib"); code != 1 || !strings.Contains(stderr, "pkg: remove lib: tool 1.0 depends on it") {
		t.Errorf("remove lib, tool recorded incomplete and its repository in effect: exit %d\n%s", code, stderr)
	}
	if out, _ := e.ok("autoremove"); !strings.Contains(out, "nothing to remove") {
		t.Errorf("autoremove, tool recorded incomplete and its repository in effect:\n%s", out)
	}
	e.ok("remove", "other")
	if out, _ := e.ok("remove", "tool"); !strings.Contains(out, "lib 1.0 is no longer needed by another package") {
		t.Errorf("remove tool, recorded incomplete and its repository in effect, says nothing of lib:\n%s", out)
	}
	if got, want := e.installed(), "lib 1.0"; got != want {
		t.Errorf("installed after removing tool: %q, want %q", got, want)
	}
}

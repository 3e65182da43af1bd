package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/pkgtest/testrepo"
	"pkg/repo"
	"pkg/report"
)

// addNPM publishes to base/repo the npm package name at version, with depends
// (NAME@npm:RANGE), whose tarball's top directory is NAME-VERSION (an npm tarball's may
// be called anything), holding package.json and index.js, which says "name version".
func addNPM(t *testing.T, base, name, version string, depends ...string) {
	t.Helper()
	addNPMAt(t, base, repo.FileName(name)+"-"+version+"/", name, version, depends...)
}

// addNPMPacked is addNPM of a tarball as npm pack makes it, its top directory package/.
func addNPMPacked(t *testing.T, base, name, version string, depends ...string) {
	t.Helper()
	addNPMAt(t, base, "package/", name, version, depends...)
}

// addNPMAt is addNPM of a tarball whose top directory is top.
func addNPMAt(t *testing.T, base, top, name, version string, depends ...string) {
	t.Helper()
	archive := pax(t, td(top), tf(top+"package.json", `{"name":"`+name+`","version":"`+version+`"}`),
		tf(top+"index.js", "module.exports = '"+name+" "+version+"'\n"))
	src := filepath.Join(base, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(src, repo.FileName(name)+"-"+version+".tar")
	if err := os.WriteFile(file, archive, 0o644); err != nil {
		t.Fatal(err)
	}
	p := repo.Package{Name: name, Version: version, Kind: repo.KindNPM, Depends: testrepo.Requires(depends...)}
	if _, err := repo.Add(t.Context(), filepath.Join(base, "repo"), file, p, false, nil); err != nil {
		t.Fatal(err)
	}
}

// requested lists the packages the root records as asked for, "name version, ...".
func (e *env) requested() string {
	e.t.Helper()
	out, _ := e.ok("list", "--json")
	var l struct {
		Packages []struct {
			Name, Version string
			Requested     bool
		}
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		e.t.Fatal(err)
	}
	var s []string
	for _, p := range l.Packages {
		if p.Requested {
			s = append(s, p.Name+" "+p.Version)
		}
	}
	return strings.Join(s, ", ")
}

// treeIno is the inode of the tree of the installed package key, 0 if there is none.
func (e *env) treeIno(key string) uint64 {
	var st unix.Stat_t
	if unix.Lstat(filepath.Join(e.root, "pkgs", repo.FileName(key)), &st) != nil {
		return 0
	}
	return st.Ino
}

// addTwoDeps publishes, in base's repository, dep 1.0.0 and 2.0.0, a 1.0.0 that depends on
// dep ^1.0.0 and b 1.0.0 on dep ^2.0.0: a tree of two instances of one name.
func addTwoDeps(t *testing.T, base string) {
	t.Helper()
	for _, v := range []string{"1.0.0", "2.0.0"} {
		addNPM(t, base, "dep", v)
	}
	addNPM(t, base, "a", "1.0.0", "dep@npm:^1.0.0")
	addNPM(t, base, "b", "1.0.0", "dep@npm:^2.0.0")
}

// TestNPMInstances: two versions of one npm name installed together are two instances,
// each recorded, verified, upgraded and removed on its own, and list, why, outdated and
// a dry run's plan say which is which (#33).
func TestNPMInstances(t *testing.T) {
	base := t.TempDir()
	addTwoDeps(t, base)
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "a", "b")
	if got, want := e.installed(), "a 1.0.0, b 1.0.0, dep 1.0.0, dep 2.0.0"; got != want {
		t.Fatalf("installed %q, want %q", got, want)
	}
	index := func(root, v string) string { // in the instance's own directory, folded into the prefix
		return filepath.Join(root, "lib/node_modules/.pnpm/dep@"+v+"/node_modules/dep/index.js")
	}
	for _, v := range []string{"1.0.0", "2.0.0"} {
		data, err := os.ReadFile(index(e.root, v))
		if err != nil || !strings.Contains(string(data), "dep "+v) {
			t.Errorf("dep %s: %q, %v", v, data, err)
		}
	}
	if out, _ := e.ok("verify"); out != "verified 4 packages, 8 files\n" {
		t.Errorf("verify: %q", out)
	}
	out, _ := e.ok("info", "--json", "dep@2.0.0") // an instance says what kind it is, as in list --json
	if i := decode[report.Info](t, "info --json", out, report.InfoSchema); i.Kind != repo.KindNPM || i.Version != "2.0.0" {
		t.Errorf("info --json dep@2.0.0: kind %q, version %q; want npm and 2.0.0", i.Kind, i.Version)
	}

	// A lockfile holds both versions, and a sync installs both.
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "a", "b")
	synced := newEnv(t, t.TempDir(), e.repo)
	synced.ok("sync", "-f", lock)
	if got, want := synced.installed(), e.installed(); got != want {
		t.Errorf("synced from the lockfile: %q, want %q", got, want)
	}
	if out, _ := synced.ok("install", "dep"); out != "dep 2.0.0 is already installed, as a dependency until now: recorded as asked for, so autoremove keeps it\n" {
		t.Errorf("install dep: %q, want the newest version said installed", out)
	}

	// Verify names the instance changed, its file where the root has it, and needs
	// NAME@VERSION to pick one.
	if err := os.WriteFile(index(e.root, "2.0.0"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _, code := e.pkg("verify"); code != 1 || !strings.Contains(out, "dep 2.0.0: modified lib/node_modules/.pnpm/dep@2.0.0/node_modules/dep/index.js (size)") || strings.Contains(out, "dep 1.0.0") {
		t.Errorf("verify after a change to dep 2.0.0: exit %d, %q", code, out)
	}
	if _, stderr, code := e.pkg("verify", "dep"); code == 0 || !strings.Contains(stderr, "dep@1.0.0, dep@2.0.0") {
		t.Errorf("verify dep: exit %d, %q; want a refusal naming both versions", code, stderr)
	}
	if out, _ := e.ok("verify", "dep@1.0.0"); out != "verified 1 package, 2 files\n" {
		t.Errorf("verify dep@1.0.0: %q", out)
	}
	e.ok("install", "--reinstall", "dep@2.0.0")
	e.ok("verify")

	if out, _ := e.ok("why", "dep@2.0.0"); !strings.Contains(out, "b@1.0.0") || strings.Contains(out, "a@1.0.0") {
		t.Errorf("why dep@2.0.0: %q", out)
	}

	// Newer versions: each instance is outdated within the ranges that lead to it.
	for _, v := range []string{"1.1.0", "2.0.1", "3.0.0"} {
		addNPM(t, base, "dep", v)
	}
	out, _ = e.ok("outdated")
	for _, want := range []string{"dep   1.0.0      1.1.0    3.0.0", "dep   2.0.0      2.0.1    3.0.0"} {
		if !strings.Contains(out, want) {
			t.Errorf("outdated: %q, want a line %q", out, want)
		}
	}

	// Upgrading b moves dep 2 alone: dep 1's tree is not touched.
	one := e.treeIno("dep@1.0.0")
	out, _ = e.ok("upgrade", "b", "--dry-run", "--json")
	var plan struct {
		Changes []struct{ Action, Name, Version, From string }
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil || len(plan.Changes) != 1 || plan.Changes[0].Action != "upgrade" ||
		plan.Changes[0].Name != "dep" || plan.Changes[0].From != "2.0.0" || plan.Changes[0].Version != "2.0.1" {
		t.Errorf("upgrade b --dry-run: %v %q", err, out)
	}
	if out, _ := e.ok("upgrade", "b"); !strings.Contains(out, "upgraded dep 2.0.0 to 2.0.1") || strings.Contains(out, "removed") {
		t.Errorf("upgrade b: %q", out)
	}
	if got, want := e.installed(), "a 1.0.0, b 1.0.0, dep 1.0.0, dep 2.0.1"; got != want {
		t.Errorf("after upgrade b: %q, want %q", got, want)
	}
	if e.treeIno("dep@1.0.0") != one || e.treeIno("dep@2.0.0") != 0 || e.treeIno("dep@2.0.1") == 0 {
		t.Errorf("after upgrade b: trees dep@1.0.0 %d (was %d), dep@2.0.0 %d, dep@2.0.1 %d", e.treeIno("dep@1.0.0"), one, e.treeIno("dep@2.0.0"), e.treeIno("dep@2.0.1"))
	}
	e.ok("upgrade", "dep")
	if got, want := e.installed(), "a 1.0.0, b 1.0.0, dep 1.1.0, dep 2.0.1"; got != want {
		t.Errorf("after upgrade dep: %q, want %q", got, want)
	}
	// The version asked for is asked for still once upgraded: it is another instance.
	synced.ok("upgrade", "dep")
	if got := synced.requested(); got != "a 1.0.0, b 1.0.0, dep 2.0.1" {
		t.Errorf("asked for after upgrade dep: %q, want dep 2.0.1's request kept", got)
	}

	// Removed one by one: the name alone is refused, a needed instance is refused.
	if out, _ := e.ok("remove", "b"); !strings.Contains(out, "dep 2.0.1 is no longer needed") {
		t.Errorf("remove b: %q", out)
	}
	out, _ = e.ok("autoremove", "--dry-run", "--json")
	if err := json.Unmarshal([]byte(out), &plan); err != nil || len(plan.Changes) != 1 || plan.Changes[0].Action != "remove" ||
		plan.Changes[0].Name != "dep" || plan.Changes[0].Version != "2.0.1" {
		t.Errorf("autoremove --dry-run: %v %q", err, out)
	}
	if _, stderr, code := e.pkg("remove", "dep"); code != 1 || !strings.Contains(stderr, "dep@1.1.0, dep@2.0.1") ||
		!strings.Contains(stderr, "pkg: hint: name one as NAME@VERSION: '"+e.cmd("remove dep@2.0.1")+"'") {
		t.Errorf("remove dep: exit %d, %q; want a refusal naming both versions", code, stderr)
	}
	if _, stderr, code := e.pkg("remove", "dep@1.1.0"); code == 0 || !strings.Contains(stderr, "a 1.0.0 depends on it") {
		t.Errorf("remove dep@1.1.0: exit %d, %q; want a refusal naming a", code, stderr)
	}
	e.ok("remove", "dep@2.0.1")
	if got, want := e.installed(), "a 1.0.0, dep 1.1.0"; got != want {
		t.Errorf("after the removals: %q, want %q", got, want)
	}
	e.ok("verify")
	e.ok("remove", "a", "dep")
	checkDBEmpty(t, e.root)
}

// TestNPMSalvageNamesInstance: what a remove keeps of an npm instance, of its directory
// and of the prefix, is said of the instance once, as NAME@VERSION, whose key holds the
// version already.
func TestNPMSalvageNamesInstance(t *testing.T) {
	base := t.TempDir()
	addNPM(t, base, "dep", "1.0.0")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "dep")
	link := filepath.Join(e.root, "lib/node_modules/dep")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(link, []byte("the user's"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(e.root, "lib/node_modules/.pnpm/dep@1.0.0/node_modules/dep")
	if err := os.WriteFile(filepath.Join(dir, "notes"), []byte("the user's"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr := e.ok("remove", "dep")
	for _, want := range []string{
		"pkg: warning: the root held 1 path not pkg's where files of dep@1.0.0 go or were: kept in ",
		"pkg: warning: the directory of dep@1.0.0 held 1 path that it did not install or that changed since: kept in ",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("remove dep: %q, want %q", stderr, want)
		}
	}
}

// TestNPMSyncConverges: a second sync of a lockfile of npm instances has nothing to do, and
// one of a lockfile where one instance changed replaces that instance alone, moving the
// links of those that depend on it; the other trees, and a file added in one, stay.
func TestNPMSyncConverges(t *testing.T) {
	base := t.TempDir()
	addTwoDeps(t, base)
	e := newEnv(t, base, filepath.Join(base, "repo"))
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "a", "b")
	e.ok("sync", "-f", lock)
	added := filepath.Join(e.root, "lib/node_modules/.pnpm/a@1.0.0/node_modules/a/notes.txt")
	if err := os.WriteFile(added, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	trees := map[string]uint64{}
	for _, key := range []string{"a@1.0.0", "b@1.0.0", "dep@1.0.0", "dep@2.0.0"} {
		trees[key] = e.treeIno(key)
	}
	if out, _ := e.ok("sync", "-f", lock); out != "nothing to do: root matches "+lock+"\n" {
		t.Errorf("second sync: %q", out)
	}
	if out, _ := e.ok("sync", "-n", "-f", lock); strings.Contains(out, "replace") || strings.Contains(out, "reinstall") {
		t.Errorf("sync -n of the synced lock: %q", out)
	}

	addNPM(t, base, "dep", "2.0.1")
	e.ok("lock", "-o", lock, "a", "b")
	out, _ := e.ok("sync", "-f", lock)
	if !strings.Contains(out, "upgraded dep 2.0.0 to 2.0.1") || strings.Contains(out, "a 1.0.0") ||
		strings.Contains(out, "b 1.0.0") || strings.Contains(out, "dep 1.0.0") {
		t.Errorf("sync of a lock where dep 2 changed: %q", out)
	}
	for _, key := range []string{"a@1.0.0", "b@1.0.0", "dep@1.0.0"} {
		if got := e.treeIno(key); got != trees[key] {
			t.Errorf("tree %s: inode %d, was %d", key, got, trees[key])
		}
	}
	if data, err := os.ReadFile(added); err != nil || string(data) != "mine\n" {
		t.Errorf("a file added in a's directory: %q, %v", data, err)
	}
	link := filepath.Join(e.root, "lib/node_modules/.pnpm/b@1.0.0/node_modules/dep")
	if got, err := os.Readlink(link); err != nil || got != "../../dep@2.0.1/node_modules/dep" {
		t.Errorf("b's link to dep: %q, %v", got, err)
	}
	if out, _ := e.ok("sync", "-f", lock); out != "nothing to do: root matches "+lock+"\n" {
		t.Errorf("sync after the change: %q", out)
	}
}

// TestNPMSyncRecordsRequests: a sync of a lockfile that asks for a package the root holds
// as another's dependency, and nothing else new, records it as asked for, as an install
// does: it gets its link in lib/node_modules, where Node finds it, and autoremove keeps it.
// A second sync then has nothing to do.
func TestNPMSyncRecordsRequests(t *testing.T) {
	base := t.TempDir()
	addNPM(t, base, "dep", "1.0.0")
	addNPM(t, base, "a", "1.0.0", "dep@npm:^1.0.0")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	first, second := filepath.Join(base, "a.lock"), filepath.Join(base, "both.lock")
	e.ok("lock", "-o", first, "a")
	e.ok("lock", "-o", second, "a", "dep")
	e.ok("sync", "-f", first)
	if out, _ := e.ok("sync", "-n", "-f", second); !strings.Contains(out, "dep 1.0.0 is already installed, as a dependency: the sync would record it as asked for") {
		t.Errorf("sync -n of a lock asking for dep: %q, want dep said recorded as asked for", out)
	}
	if out, _ := e.ok("sync", "-f", second); !strings.Contains(out, "dep 1.0.0 is already installed, as a dependency until now: recorded as asked for") {
		t.Errorf("sync of a lock asking for dep: %q, want dep said recorded as asked for", out)
	}
	if got, want := e.requested(), "a 1.0.0, dep 1.0.0"; got != want {
		t.Errorf("requested after the sync: %q, want %q", got, want)
	}
	link := filepath.Join(e.root, "lib/node_modules/dep")
	if got, err := os.Readlink(link); err != nil || got != ".pnpm/dep@1.0.0/node_modules/dep" {
		t.Errorf("the link of dep, asked for: %q, %v", got, err)
	}
	if out, _ := e.ok("sync", "-f", second); out != "nothing to do: root matches "+second+"\n" {
		t.Errorf("second sync: %q", out)
	}
	e.ok("verify")
}

// TestNPMSyncLinksCommands: a sync of a lockfile that asks for an npm package the root
// holds as another's dependency links its commands in bin/, as an install of it does; so
// does one that installs it.
func TestNPMSyncLinksCommands(t *testing.T) {
	base := t.TempDir()
	archive := pax(t, td("package/"), tf("package/package.json", `{"name":"dep","version":"1.0.0"}`), tf("package/cli.js", "#!/usr/bin/env node\n"))
	file := writeFile(t, base, "dep-1.0.0.tar", archive)
	p := repo.Package{Name: "dep", Version: "1.0.0", Kind: repo.KindNPM, Bin: testrepo.Commands("dep=package/cli.js")}
	if _, err := repo.Add(t.Context(), filepath.Join(base, "repo"), file, p, false, nil); err != nil {
		t.Fatal(err)
	}
	addNPM(t, base, "a", "1.0.0", "dep@npm:^1.0.0")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	first, second := filepath.Join(base, "a.lock"), filepath.Join(base, "both.lock")
	e.ok("lock", "-o", first, "a")
	e.ok("lock", "-o", second, "a", "dep")
	e.ok("sync", "-f", first)
	bin := filepath.Join(e.root, "bin", "dep")
	if _, err := os.Lstat(bin); !os.IsNotExist(err) {
		t.Fatalf("bin/dep of dep, a dependency: %v; want none", err)
	}
	e.ok("sync", "-f", second)
	if _, err := os.Stat(bin); err != nil {
		t.Errorf("bin/dep after a sync asking for dep: %v", err)
	}
	e.ok("verify")
	fresh := newEnv(t, t.TempDir(), e.repo)
	fresh.ok("sync", "-f", second)
	if _, err := os.Stat(filepath.Join(fresh.root, "bin", "dep")); err != nil {
		t.Errorf("bin/dep after a sync installing dep, asked for: %v", err)
	}
	fresh.ok("verify")
}

// TestNPMSyncUnrequests: a sync of a lockfile that lists a package the root holds as
// asked for, and asks for none of it (only another's dependency now), records it as a
// dependency, as a sync into a fresh root does: its link in lib/node_modules and its
// commands go, and autoremove takes it once nothing needs it; a dry run says so first,
// and a second sync has nothing to do. With --keep-extra, the request stays.
func TestNPMSyncUnrequests(t *testing.T) {
	base := t.TempDir()
	archive := pax(t, td("package/"), tf("package/package.json", `{"name":"dep","version":"1.0.0"}`), tf("package/cli.js", "#!/usr/bin/env node\n"))
	file := writeFile(t, base, "dep-1.0.0.tar", archive)
	p := repo.Package{Name: "dep", Version: "1.0.0", Kind: repo.KindNPM, Bin: testrepo.Commands("dep=package/cli.js")}
	if _, err := repo.Add(t.Context(), filepath.Join(base, "repo"), file, p, false, nil); err != nil {
		t.Fatal(err)
	}
	addNPM(t, base, "a", "1.0.0", "dep@npm:^1.0.0")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	both, first := filepath.Join(base, "both.lock"), filepath.Join(base, "a.lock")
	e.ok("lock", "-o", both, "a", "dep")
	e.ok("lock", "-o", first, "a")
	e.ok("sync", "-f", both)
	bin, link := filepath.Join(e.root, "bin", "dep"), filepath.Join(e.root, "lib/node_modules/dep")
	if out, _ := e.ok("sync", "-n", "--keep-extra", "-f", first); out != "dry run: 0 changes, 0 B to download, 0 B more disk space; nothing was changed\n" {
		t.Errorf("sync -n --keep-extra of a lock asking for a alone: %q", out)
	}
	if out, _ := e.ok("sync", "-n", "-f", first); !strings.Contains(out, "dep 1.0.0 is already installed, as asked for: the sync would record it as a dependency") {
		t.Errorf("sync -n of a lock asking for a alone: %q, want dep said to be recorded as a dependency", out)
	}
	if out, _ := e.ok("sync", "-f", first); !strings.Contains(out, "dep 1.0.0 was asked for until now: recorded as a dependency") {
		t.Errorf("sync of a lock asking for a alone: %q", out)
	}
	if got, want := e.requested(), "a 1.0.0"; got != want {
		t.Errorf("requested after the sync: %q, want %q", got, want)
	}
	for _, f := range []string{bin, link} {
		if _, err := os.Lstat(f); !os.IsNotExist(err) {
			t.Errorf("%s of dep, a dependency now: %v; want none", f, err)
		}
	}
	if out, _ := e.ok("sync", "-f", first); out != "nothing to do: root matches "+first+"\n" {
		t.Errorf("second sync: %q", out)
	}
	e.ok("verify")
	fresh := newEnv(t, t.TempDir(), e.repo)
	fresh.ok("sync", "-f", first)
	if got, want := fresh.requests(), e.requests(); got != want {
		t.Errorf("requests: %q after syncing two lockfiles, %q after syncing the second alone", want, got)
	}
	e.ok("remove", "a")
	if out, _ := e.ok("autoremove"); out != "removed dep 1.0.0\n" {
		t.Errorf("autoremove once a is gone: %q", out)
	}

	keep := newEnv(t, t.TempDir(), e.repo)
	keep.ok("sync", "-f", both)
	keep.ok("sync", "--keep-extra", "-f", first)
	if got, want := keep.requested(), "a 1.0.0, dep 1.0.0"; got != want {
		t.Errorf("requested after a sync --keep-extra: %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(keep.root, "bin", "dep")); err != nil {
		t.Errorf("bin/dep after a sync --keep-extra: %v", err)
	}
}

// TestSyncUnrequestsUpgraded: a sync that upgrades a package asked for to the version
// its lockfile has as another's dependency alone records it as a dependency, a plain
// package and an npm one, whose request is not carried to its new version, and says
// which version was asked for.
func TestSyncUnrequestsUpgraded(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addNPM(t, base, "ms", "1.0.0")
	addNPM(t, base, "a", "1.0.0", "ms@npm:^1.0.0")
	addPackage(t, dir, "lib", "1.0")
	addPackage(t, dir, "app", "1.0", "lib>=1")
	e := newEnv(t, base, dir)
	all, top := filepath.Join(base, "all.lock"), filepath.Join(base, "top.lock")
	e.ok("lock", "-o", all, "a", "ms", "app", "lib")
	addNPM(t, base, "ms", "1.1.0")
	addPackage(t, dir, "lib", "1.1")
	e.ok("lock", "-o", top, "a", "app")
	e.ok("sync", "-f", all)
	out, _ := e.ok("sync", "-n", "-f", top)
	for _, want := range []string{"upgrade lib 1.0 to 1.1 (in the lockfile; asked for until now, recorded as a dependency", "upgrade ms 1.0.0 to 1.1.0 (in the lockfile; asked for until now"} {
		if !strings.Contains(out, want) {
			t.Errorf("sync -n: %q, want %q", out, want)
		}
	}
	out, _ = e.ok("sync", "-f", top)
	for _, want := range []string{"lib 1.0 was asked for until now: lib 1.1 is recorded as a dependency", "ms 1.0.0 was asked for until now: ms 1.1.0 is recorded as a dependency"} {
		if !strings.Contains(out, want) {
			t.Errorf("sync: %q, want %q", out, want)
		}
	}
	if got, want := e.requested(), "a 1.0.0, app 1.0"; got != want {
		t.Errorf("requested after the sync: %q, want %q", got, want)
	}
	if _, err := os.Lstat(filepath.Join(e.root, "lib/node_modules/ms")); !os.IsNotExist(err) {
		t.Errorf("lib/node_modules/ms of ms, a dependency now: %v; want none", err)
	}
	e.ok("verify")
}

// TestNPMReinstallLinks: a dependency link of one of two versions of a name, deleted, is
// found by verify, whose advice names that version, and the reinstall it advises puts the
// link back.
func TestNPMReinstallLinks(t *testing.T) {
	base := t.TempDir()
	addNPM(t, base, "ms", "1.0.0")
	for _, v := range []string{"1.0.0", "2.0.0"} {
		addNPM(t, base, "dep", v, "ms@npm:^1.0.0")
	}
	addNPM(t, base, "a", "1.0.0", "dep@npm:^1.0.0")
	addNPM(t, base, "b", "1.0.0", "dep@npm:^2.0.0")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "a", "b")
	link := filepath.Join(e.root, "lib/node_modules/.pnpm/dep@2.0.0/node_modules/ms")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := e.pkg("verify")
	if code != 1 || !strings.Contains(stdout, "dep 2.0.0: missing "+link) || !strings.Contains(stderr, "'"+e.cmd("install --reinstall dep@2.0.0")+"' restores") {
		t.Fatalf("verify without dep 2's link to ms: exit %d, %q, %q; want the link found and dep@2.0.0 named", code, stdout, stderr)
	}
	e.ok("install", "--reinstall", "dep@2.0.0")
	if got, err := os.Readlink(link); err != nil || got != "../../ms@1.0.0/node_modules/ms" {
		t.Errorf("dep 2's link to ms after its reinstall: %q, %v", got, err)
	}
	e.ok("verify")
}

// TestNPMUpgradeHeld: an npm package asked for at a version is held there, as a .deb is:
// outdated says so, an upgrade of everything keeps it saying why, and one naming it is
// refused with exit 1, changing nothing.
func TestNPMUpgradeHeld(t *testing.T) {
	base := t.TempDir()
	for _, v := range []string{"7.5.4", "7.6.3"} {
		addNPM(t, base, "semver", v)
	}
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "semver@7.5.4")
	if out, _ := e.ok("outdated"); !strings.Contains(out, "semver is held by its request semver@7.5.4") {
		t.Errorf("outdated: %q, want semver said held", out)
	}
	const held = "semver 7.5.4 is held by its request semver@7.5.4 (newest 7.6.3)"
	for _, args := range [][]string{{"upgrade", "semver"}, {"upgrade", "-n", "semver"}} {
		if out, stderr, code := e.pkg(args...); code != 1 || !strings.Contains(stderr, "upgrade semver: "+held) || out != "" ||
			!strings.Contains(stderr, "'"+e.cmd("install semver")+"' takes the newest in its place") {
			t.Errorf("%v: exit %d, %q, %q; want a refusal saying semver is held", args, code, out, stderr)
		}
	}
	if out, _ := e.ok("upgrade"); !strings.Contains(out, "kept semver at 7.5.4: held by its request semver@7.5.4 (newest 7.6.3)") {
		t.Errorf("upgrade: %q, want semver said kept by its hold", out)
	}
	if out, _ := e.ok("why", "semver"); !strings.Contains(out, "was asked for, as semver@7.5.4") || e.installed() != "semver 7.5.4" {
		t.Errorf("after the upgrades: installed %q, why: %q; want semver 7.5.4 held still", e.installed(), out)
	}
}

// TestNPMInstallHeld: installing a held npm name without a version takes the newest and
// holds it no more, as for a .deb: the held version's instance is upgraded where nothing
// else needs it; where another package does, the newest is added beside it, and it stays
// as it was asked for.
func TestNPMInstallHeld(t *testing.T) {
	base := t.TempDir()
	for _, v := range []string{"4.3.4", "4.3.7"} {
		addNPM(t, base, "debug", v)
	}
	addNPM(t, base, "app", "1.0.0", "debug@npm:4.3.4")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "debug@4.3.4")
	if out, _ := e.ok("install", "debug"); !strings.Contains(out, "upgraded debug 4.3.4 to 4.3.7") {
		t.Errorf("install debug over debug@4.3.4: %q, want it upgraded", out)
	}
	if out, _ := e.ok("why", "debug"); e.installed() != "debug 4.3.7" || !strings.Contains(out, "debug 4.3.7 was asked for, as debug\n") {
		t.Errorf("after install debug: installed %q, why %q; want debug 4.3.7 asked for as debug", e.installed(), out)
	}
	if out, _ := e.ok("outdated"); strings.Contains(out, "debug") {
		t.Errorf("outdated after install debug: %q", out)
	}

	e.ok("remove", "debug")
	e.ok("install", "app", "debug@4.3.4")
	if out, _ := e.ok("install", "debug"); !strings.Contains(out, "installed debug 4.3.7") || strings.Contains(out, "4.3.4") {
		t.Errorf("install debug over debug@4.3.4, which app needs: %q, want debug 4.3.7 added", out)
	}
	if got, want := e.installed(), "app 1.0.0, debug 4.3.4, debug 4.3.7"; got != want {
		t.Errorf("installed %q, want %q", got, want)
	}
	if out, _ := e.ok("why", "debug@4.3.7"); !strings.Contains(out, "debug 4.3.7 was asked for, as debug\n") {
		t.Errorf("why debug@4.3.7: %q", out)
	}
	if out, _ := e.ok("why", "debug@4.3.4"); !strings.Contains(out, "was asked for, as debug@4.3.4\n") || !strings.Contains(out, "needed by app@1.0.0") {
		t.Errorf("why debug@4.3.4: %q, want it asked for as debug@4.3.4 and needed by app", out)
	}
}

// TestNPMInstallHeldRange: installing a held npm name that another package needs by a range
// newer versions also satisfy adds the newest beside the held version and moves neither.
func TestNPMInstallHeldRange(t *testing.T) {
	base := t.TempDir()
	addNPM(t, base, "x", "1.2.0")
	addNPM(t, base, "d", "1.0.0", "x@npm:~1.2.0")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "d")
	e.ok("install", "x@1.2.0")
	addNPM(t, base, "x", "1.2.5")
	addNPM(t, base, "x", "1.9.0")
	if out, _ := e.ok("install", "x"); !strings.Contains(out, "installed x 1.9.0") || strings.Contains(out, "1.2.") {
		t.Errorf("install x over x@1.2.0, which d needs: %q, want x 1.9.0 added and nothing moved", out)
	}
	if got, want := e.installed(), "d 1.0.0, x 1.2.0, x 1.9.0"; got != want {
		t.Errorf("installed %q, want %q", got, want)
	}
	if out, _ := e.ok("why", "x@1.2.0"); !strings.Contains(out, "was asked for, as x@1.2.0\n") || !strings.Contains(out, "needed by d@1.0.0") {
		t.Errorf("why x@1.2.0: %q, want it asked for as x@1.2.0 and needed by d", out)
	}
}

// TestNPMUpgradeTwoRequested: an upgrade of a name two versions of which were asked for
// moves each within its own request: the newest, asked for as the name, stays newest, and
// the one asked for at its version stays held, so nothing is removed and no request is lost.
func TestNPMUpgradeTwoRequested(t *testing.T) {
	base := t.TempDir()
	for _, v := range []string{"4.3.4", "4.3.7"} {
		addNPM(t, base, "debug", v)
	}
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "debug")
	e.ok("install", "debug@4.3.4")
	check := func(what string) {
		t.Helper()
		if got, want := e.installed(), "debug 4.3.4, debug 4.3.7"; got != want {
			t.Errorf("%s: installed %q, want %q", what, got, want)
		}
		for key, as := range map[string]string{"debug@4.3.7": "debug", "debug@4.3.4": "debug@4.3.4"} {
			if out, _ := e.ok("why", key); !strings.Contains(out, "was asked for, as "+as+"\n") {
				t.Errorf("%s: why %s: %q, want it asked for as %s", what, key, out, as)
			}
		}
		for key, held := range map[string]bool{"debug@4.3.7": false, "debug@4.3.4": true} {
			if out, _ := e.ok("info", key); strings.Contains(out, "(held:") != held {
				t.Errorf("%s: info %s: %q, want held %v", what, key, out, held)
			}
		}
	}
	check("installed")
	for _, args := range [][]string{{"upgrade", "-n", "debug"}, {"upgrade", "debug"}} {
		if out, stderr, code := e.pkg(args...); code != 1 || strings.Contains(out, "remove") ||
			!strings.Contains(stderr, "upgrade debug: debug 4.3.4 is held by its request debug@4.3.4 (newest 4.3.7)") ||
			!strings.Contains(stderr, "'"+e.cmd("remove debug@4.3.4")+"' lets it go") {
			t.Errorf("%v: exit %d, %q, %q; want a refusal saying debug 4.3.4 is held", args, code, out, stderr)
		}
	}
	check("after upgrade debug")
	if out, _ := e.ok("upgrade"); strings.Contains(out, "removed") || !strings.Contains(out, "kept debug at 4.3.4: held by its request debug@4.3.4 (newest 4.3.7)") {
		t.Errorf("upgrade: %q, want nothing removed and debug 4.3.4 said held", out)
	}
	check("after upgrade")
}

// TestNPMUpgradeNamedVersion: an upgrade naming an npm version holds the instances of the
// name whose versions it allows, and moves no unheld one below its installed version: the
// newest, asked for as the name, moves up as the name's upgrade moves it, and what it needs
// (asked for too) stays; a version that would only move one down is refused, changing
// nothing.
func TestNPMUpgradeNamedVersion(t *testing.T) {
	base := t.TempDir()
	for _, v := range []string{"2.0.0", "2.1.2"} {
		addNPM(t, base, "ms", v)
	}
	addNPM(t, base, "debug", "2.6.9", "ms@npm:2.0.0")
	addNPM(t, base, "debug", "4.3.4", "ms@npm:2.1.2")
	addNPM(t, base, "fh", "1.0.0", "debug@npm:2.6.9")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "debug", "ms")
	if out, stderr, code := e.pkg("upgrade", "debug@2.6.9"); code != 1 || !strings.Contains(stderr, "debug@2.6.9") || out != "" {
		t.Errorf("upgrade debug@2.6.9 without it: exit %d, %q, %q; want a refusal", code, out, stderr)
	}
	if got, want := e.installed(), "debug 4.3.4, ms 2.1.2"; got != want {
		t.Errorf("after the refusal: installed %q, want %q", got, want)
	}
	e.ok("install", "fh")
	addNPM(t, base, "debug", "4.4.0", "ms@npm:2.1.2")
	if out, _ := e.ok("upgrade", "debug@2.6.9"); strings.Contains(out, "removed") || !strings.Contains(out, "upgraded debug 4.3.4 to 4.4.0") || strings.Contains(out, "debug 2.6.9 to") {
		t.Errorf("upgrade debug@2.6.9: %q, want debug 4.3.4 upgraded and nothing removed", out)
	}
	if got, want := e.installed(), "debug 2.6.9, debug 4.4.0, fh 1.0.0, ms 2.0.0, ms 2.1.2"; got != want {
		t.Errorf("after upgrade debug@2.6.9: installed %q, want %q", got, want)
	}
	if out, _ := e.ok("info", "ms@2.1.2"); strings.Contains(out, "as a dependency") {
		t.Errorf("info ms@2.1.2: %q, want it asked for still", out)
	}
	if out, _ := e.ok("why", "debug@4.4.0"); !strings.Contains(out, "was asked for, as debug\n") {
		t.Errorf("why debug@4.4.0: %q, want it asked for as debug", out)
	}
	if out, _ := e.ok("info", "debug@2.6.9"); !strings.Contains(out, "(held:") {
		t.Errorf("info debug@2.6.9: %q, want it held", out)
	}
}

// TestNPMUpgradeAbove: an upgrade naming an npm package with a constraint above its one
// version installed, asked for as the name, moves it up to the newest version that allows
// and holds it there, recorded as the install of the requirement would record it; one
// below it is refused, with the install that puts that version beside it.
func TestNPMUpgradeAbove(t *testing.T) {
	for _, tt := range []struct{ given, want string }{
		{"tool>=5", "6.0.0"},
		{"tool@5", "5.1.0"},
		{"tool=5.1.0", "5.1.0"},
		{"tool@npm:^5", "5.1.0"},
	} {
		base := t.TempDir()
		addNPM(t, base, "tool", "3.0.0")
		addNPM(t, base, "tool", "4.0.0")
		e := newEnv(t, base, filepath.Join(base, "repo"))
		e.ok("install", "tool")
		for _, v := range []string{"5.0.0", "5.1.0", "6.0.0"} {
			addNPM(t, base, "tool", v)
		}
		if _, stderr, code := e.pkg("upgrade", "tool@npm:<4"); code != 1 || !strings.Contains(stderr, "pkg: hint: '"+e.cmd("install 'tool@npm:<4'")+"' installs that version beside") {
			t.Errorf("upgrade tool@npm:<4 of tool 4.0.0: exit %d, %q; want a refusal and its hint", code, stderr)
		}
		if out, stderr, code := e.pkg("upgrade", tt.given); code != 0 || !strings.Contains(out, "upgraded tool 4.0.0 to "+tt.want) {
			t.Errorf("upgrade %s of tool 4.0.0: exit %d, %q, %q; want it upgraded to %s", tt.given, code, out, stderr, tt.want)
			continue
		}
		if got := e.installed(); got != "tool "+tt.want {
			t.Errorf("after upgrade %s: installed %q, want tool %s", tt.given, got, tt.want)
		}
		if out, _ := e.ok("info", "tool"); !strings.Contains(out, "requested: yes, as "+tt.given+" (held") {
			t.Errorf("info tool after upgrade %s: %q, want it asked for and held as %s", tt.given, out, tt.given)
		}
	}
}

// TestNPMUpgradeAboveAsked: an upgrade to a constraint moves up the instance asked for,
// not a newer one installed as a dependency, which autoremove then still takes.
func TestNPMUpgradeAboveAsked(t *testing.T) {
	base := t.TempDir()
	addNPM(t, base, "tool", "2.0.0")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "tool")
	addNPM(t, base, "tool", "4.0.0")
	addNPM(t, base, "app", "1.0.0", "tool@npm:^4")
	e.ok("install", "app")
	addNPM(t, base, "tool", "5.0.0")
	if out, _ := e.ok("upgrade", "tool>=5"); !strings.Contains(out, "upgraded tool 2.0.0 to 5.0.0") {
		t.Errorf("upgrade tool>=5 of tool 2.0.0 asked for and 4.0.0 app's: %q, want 2.0.0 upgraded", out)
	}
	if out, _ := e.ok("info", "tool@4.0.0"); !strings.Contains(out, "requested: no") {
		t.Errorf("info tool@4.0.0 after the upgrade: %q, want it a dependency still", out)
	}
	e.ok("remove", "app")
	e.ok("autoremove")
	if got := e.installed(); got != "tool 5.0.0" {
		t.Errorf("after remove app and autoremove: installed %q, want tool 5.0.0", got)
	}
}

// linked is what lib/node_modules/name leads to, index.js's "name version", or "" if nothing.
func (e *env) linked(name string) string {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.root, "lib/node_modules", name, "index.js"))
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(string(data), "module.exports = '"), "'\n")
}

// TestNPMUpgradeHeldDependency: an upgrade keeps a held npm instance at its hold where
// another's range leads to it and wants newer: the range takes a newer instance beside it,
// and the held one stays asked for, its link in lib/node_modules with it.
func TestNPMUpgradeHeldDependency(t *testing.T) {
	base := t.TempDir()
	for _, v := range []string{"2.1.2", "2.1.3"} {
		addNPM(t, base, "ms", v)
	}
	addNPM(t, base, "debug", "4.1.1", "ms@npm:^2.1.1")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "ms@npm:2.1.2")
	e.ok("install", "debug@npm:4.1.1")
	for _, args := range [][]string{{"upgrade", "debug"}, {"upgrade"}} { // the second finds nothing to do
		if out, _ := e.ok(args...); strings.Contains(out, "upgraded ms") || strings.Contains(out, "removed") || strings.Contains(out, "no longer needed") ||
			!strings.Contains(out, "kept ms at 2.1.2: held by its request ms@npm:2.1.2 (newest 2.1.3)") {
			t.Errorf("%v: %q, want ms said kept at its hold", args, out)
		}
		if got, want := e.installed(), "debug 4.1.1, ms 2.1.2, ms 2.1.3"; got != want {
			t.Errorf("after upgrade: installed %q, want %q", got, want)
		}
		if got, want := e.requested(), "debug 4.1.1, ms 2.1.2"; got != want {
			t.Errorf("after upgrade: asked for %q, want %q", got, want)
		}
		if got := e.linked("ms"); got != "ms 2.1.2" {
			t.Errorf("after upgrade: lib/node_modules/ms is %q, want ms 2.1.2", got)
		}
		if out, _ := e.ok("why", "ms@2.1.3"); !strings.Contains(out, "needed by debug@4.1.1") {
			t.Errorf("why ms@2.1.3: %q, want it needed by debug", out)
		}
	}
	e.ok("verify")
}

// heldDebug returns a root holding app (which needs debug@^4.3.0, so 4.3.4) and tool
// (debug@^2.6.0, so 2.6.9), with debug 2.6.9 held by its request debug@npm:^2.6.0, and a
// repository that now offers debug 4.4.0 too.
func heldDebug(t *testing.T) *env {
	t.Helper()
	base := t.TempDir()
	for _, v := range []string{"2.6.9", "4.3.4"} {
		addNPM(t, base, "debug", v)
	}
	addNPM(t, base, "app", "1.0.0", "debug@npm:^4.3.0")
	addNPM(t, base, "tool", "1.0.0", "debug@npm:^2.6.0")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "app", "tool", "debug@npm:^2.6.0")
	addNPM(t, base, "debug", "4.4.0")
	return e
}

// TestNPMUpgradeNameOneHeld: an upgrade naming an npm name one instance of which is held
// and another of which can move moves that one and says the held one is kept, instead of
// refusing the name for the held one.
func TestNPMUpgradeNameOneHeld(t *testing.T) {
	e := heldDebug(t)
	const kept = " debug at 2.6.9: held by its request debug@npm:^2.6.0 (newest 4.4.0)"
	if out, _ := e.ok("upgrade", "-n", "debug"); !strings.Contains(out, "upgrade debug 4.3.4 to 4.4.0") || !strings.Contains(out, "keep"+kept) {
		t.Errorf("upgrade -n debug: %q, want debug 4.3.4 to be upgraded and 2.6.9 said kept", out)
	}
	if got, want := e.installed(), "app 1.0.0, debug 2.6.9, debug 4.3.4, tool 1.0.0"; got != want {
		t.Errorf("after upgrade -n debug: installed %q, want %q", got, want)
	}
	if out, _ := e.ok("upgrade", "debug"); !strings.Contains(out, "upgraded debug 4.3.4 to 4.4.0") || !strings.Contains(out, "kept"+kept) {
		t.Errorf("upgrade debug: %q, want debug 4.3.4 upgraded and 2.6.9 said kept", out)
	}
	if got, want := e.installed(), "app 1.0.0, debug 2.6.9, debug 4.4.0, tool 1.0.0"; got != want {
		t.Errorf("after upgrade debug: installed %q, want %q", got, want)
	}
	if out, _ := e.ok("info", "debug@2.6.9"); !strings.Contains(out, "(held:") {
		t.Errorf("info debug@2.6.9: %q, want it held still", out)
	}
}

// TestNPMUpgradeNamedVersionHolds: an upgrade naming an npm version reports each instance
// it keeps with its own hold: the one another request holds stays at its version, held by
// that request, not by the version named.
func TestNPMUpgradeNamedVersionHolds(t *testing.T) {
	e := heldDebug(t)
	out, _ := e.ok("upgrade", "-n", "debug@4.3.4", "--json")
	var plan struct {
		Held []struct {
			From, Version, Newest string
			HeldBy                string `json:"held_by"`
		}
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range plan.Held {
		got = append(got, h.From+" "+h.Version+" "+h.Newest+" "+h.HeldBy)
	}
	if want := []string{"2.6.9 2.6.9 4.4.0 debug@npm:^2.6.0", "4.3.4 4.3.4 4.4.0 debug@4.3.4"}; !slices.Equal(got, want) {
		t.Errorf("upgrade -n debug@4.3.4: held %q, want %q", got, want)
	}
	out, _ = e.ok("upgrade", "debug@4.3.4")
	for _, want := range []string{"kept debug at 2.6.9: held by its request debug@npm:^2.6.0 (newest 4.4.0)", "kept debug at 4.3.4: held by its request debug@4.3.4 (newest 4.4.0)"} {
		if !strings.Contains(out, want) {
			t.Errorf("upgrade debug@4.3.4: %q, want %q", out, want)
		}
	}
	if out, _ := e.ok("info", "debug@2.6.9"); !strings.Contains(out, "as debug@npm:^2.6.0 (held:") {
		t.Errorf("info debug@2.6.9: %q, want it held by debug@npm:^2.6.0 still", out)
	}
}

// TestNPMInstallTwoRanges: two versions of one npm name asked for in one command are each
// asked for by its own requirement, as two commands record them: neither is autoremoved,
// and lib/node_modules links the newest.
func TestNPMInstallTwoRanges(t *testing.T) {
	base := t.TempDir()
	addTwoDeps(t, base)
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "dep@npm:^1.0.0", "dep@npm:^2.0.0")
	if got, want := e.requested(), "dep 1.0.0, dep 2.0.0"; got != want {
		t.Errorf("asked for %q, want %q", got, want)
	}
	for key, as := range map[string]string{"dep@1.0.0": "dep@npm:^1.0.0", "dep@2.0.0": "dep@npm:^2.0.0"} {
		if out, _ := e.ok("why", key); !strings.Contains(out, "was asked for, as "+as+"\n") {
			t.Errorf("why %s: %q, want it asked for as %s", key, out, as)
		}
	}
	if got := e.linked("dep"); got != "dep 2.0.0" {
		t.Errorf("lib/node_modules/dep is %q, want dep 2.0.0", got)
	}
	if out, _ := e.ok("autoremove", "-n"); !strings.Contains(out, "0 changes") {
		t.Errorf("autoremove -n: %q, want nothing removed", out)
	}
	e.ok("verify")
}

// requests returns the requests the root's database records, "KEY:REQUIREMENT" each,
// sorted, read after pkg has exited.
func (e *env) requests() string {
	e.t.Helper()
	d, err := db.Open(filepath.Join(e.root, ".pkg", "db"), db.Options{NoCreate: true})
	if err != nil {
		e.t.Fatal(err)
	}
	reqs, err := d.Requested()
	if err != nil {
		e.t.Fatal(err)
	}
	var s []string
	for k, q := range reqs {
		s = append(s, k+":"+q.String())
	}
	slices.Sort(s)
	return strings.Join(s, ", ")
}

// TestNPMSyncRecordsLockInstance: with --keep-extra, the package a sync records as asked
// for is the lockfile's instance, not a newer one of its name kept beside it, whose own
// request stays as it was; a second sync has nothing to do.
func TestNPMSyncRecordsLockInstance(t *testing.T) {
	base := t.TempDir()
	addNPM(t, base, "dep", "1.0.0")
	addNPM(t, base, "a", "1.0.0", "dep@npm:^1.0.0")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	first, both := filepath.Join(base, "a.lock"), filepath.Join(base, "both.lock")
	e.ok("lock", "-o", first, "a")
	e.ok("lock", "-o", both, "a", "dep")
	addNPM(t, base, "dep", "1.5.0")
	e.ok("sync", "-f", first)
	e.ok("install", "dep@1.5.0")
	if got, want := e.requests(), "a@1.0.0:a, dep@1.5.0:dep@1.5.0"; got != want {
		t.Fatalf("requests before the sync: %q, want %q", got, want)
	}
	if out, _ := e.ok("sync", "--keep-extra", "-f", both); !strings.Contains(out, "dep 1.0.0 is already installed, as a dependency until now: recorded as asked for") {
		t.Errorf("sync of a lock asking for dep 1.0.0: %q", out)
	}
	if got, want := e.requests(), "a@1.0.0:a, dep@1.0.0:dep, dep@1.5.0:dep@1.5.0"; got != want {
		t.Errorf("requests after the sync: %q, want %q", got, want)
	}
	if out, _ := e.ok("sync", "--keep-extra", "-f", both); out != "nothing to do: root matches "+both+"\n" {
		t.Errorf("second sync: %q", out)
	}
	e.ok("verify")
}

// TestSyncRecordsKeepHolds: a sync that records a dependency as asked for, and one that
// installs a package, leave the hold of a package installed as the lockfile has it as it
// was, as a sync with nothing to do does.
func TestSyncRecordsKeepHolds(t *testing.T) {
	base := t.TempDir()
	addNPM(t, base, "dep", "1.0.0")
	addNPM(t, base, "a", "1.0.0", "dep@npm:^1.0.0")
	addNPM(t, base, "b", "1.0.0")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	both, all := filepath.Join(base, "both.lock"), filepath.Join(base, "all.lock")
	e.ok("lock", "-o", both, "a", "dep")
	e.ok("lock", "-o", all, "a", "b", "dep")
	e.ok("install", "a@1.0.0")
	e.ok("sync", "-f", both)
	if got, want := e.requests(), "a@1.0.0:a@1.0.0, dep@1.0.0:dep"; got != want {
		t.Errorf("requests after the sync that records dep: %q, want %q", got, want)
	}
	e.ok("sync", "-f", all)
	if got, want := e.requests(), "a@1.0.0:a@1.0.0, b@1.0.0:b, dep@1.0.0:dep"; got != want {
		t.Errorf("requests after the sync that installs b: %q, want %q", got, want)
	}
}

// TestNPMReinstallGoneTree: a synced npm tree, one of whose trees in pkgs/ the user
// deleted: verify finds it; an offline reinstall makes the tree a fresh sync made (the
// placeholder of its folded directory too), says nothing of a command cut short then or
// at the next command, and verify and a repair of a lost database both pass. A tree
// missing only its placeholder is found by verify too.
func TestNPMReinstallGoneTree(t *testing.T) {
	base := t.TempDir()
	addNPMPacked(t, base, "ms", "2.1.2")
	addNPMPacked(t, base, "debug", "4.3.4", "ms@npm:2.1.2")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "debug")
	e.ok("sync", "-f", lock)
	tree, holder := filepath.Join(e.root, "pkgs", "ms@2.1.2"), filepath.Join(e.root, "pkgs", "ms@2.1.2", "package")
	if es, err := os.ReadDir(holder); err != nil || len(es) != 0 {
		t.Fatalf("a fresh sync's %s: %d entries, %v; want an empty placeholder", holder, len(es), err)
	}
	if err := os.RemoveAll(tree); err != nil {
		t.Fatal(err)
	}
	if out, _, code := e.pkg("verify"); code != 1 || !strings.Contains(out, "ms 2.1.2: missing "+tree) {
		t.Errorf("verify without ms's tree: exit %d, %q", code, out)
	}
	for range 2 {
		if _, stderr := e.ok("--offline", "install", "--reinstall", "ms@2.1.2"); strings.Contains(stderr, "cut short") {
			t.Errorf("reinstall of ms: %q", stderr)
		}
		if es, err := os.ReadDir(holder); err != nil || len(es) != 0 {
			t.Errorf("%s after the reinstall: %d entries, %v; want an empty placeholder", holder, len(es), err)
		}
		if out, stderr := e.ok("verify"); out != "verified 2 packages, 4 files\n" || strings.Contains(stderr, "cut short") {
			t.Errorf("verify after the reinstall: %q, %q", out, stderr)
		}
	}
	if data, err := os.ReadFile(filepath.Join(e.root, "lib/node_modules/.pnpm/ms@2.1.2/node_modules/ms/index.js")); err != nil || string(data) != "module.exports = 'ms 2.1.2'\n" {
		t.Errorf("ms's index.js in the prefix: %q, %v", data, err)
	}
	if err := os.Remove(holder); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := e.pkg("verify"); code != 1 || out != "ms 2.1.2: missing "+holder+" (placeholder of a folded directory)\n" || !strings.Contains(stderr, "'"+e.cmd("install --reinstall ms@2.1.2")+"' restores") {
		t.Errorf("verify without ms's placeholder: exit %d, %q, %q", code, out, stderr)
	}
	e.ok("--offline", "install", "--reinstall", "ms@2.1.2")
	for _, f := range []string{"db", "db.sum"} {
		if err := os.Remove(filepath.Join(e.root, ".pkg", f)); err != nil {
			t.Fatal(err)
		}
	}
	if out, _ := e.ok("verify", "--repair"); !strings.Contains(out, "debug 4.3.4, ms 2.1.2") {
		t.Errorf("verify --repair of a lost database: %q", out)
	}
	e.ok("verify")
}

// TestRemoveLeftNamesInstance: what the user put in an npm instance's placeholder in pkgs/
// is kept in .pkg/saved at the prefix path the placeholder came back to, and said so, where
// it was left in the prefix; what the user put in a directory of the instance in the prefix
// is left, and the warning names the instance once, by its key, not its key and version again.
func TestRemoveLeftNamesInstance(t *testing.T) {
	base := t.TempDir()
	addNPMPacked(t, base, "ms", "2.1.3")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "ms")
	const dir = "lib/node_modules/.pnpm/ms@2.1.3"
	for _, p := range []string{"pkgs/ms@2.1.3/package/mine.txt", dir + "/node_modules/notes.txt"} {
		if err := os.WriteFile(filepath.Join(e.root, p), []byte("mine\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, stderr := e.ok("remove", "ms")
	if !strings.Contains(stderr, " of ms@2.1.3 left in ") || strings.Contains(stderr, "ms@2.1.3 2.1.3") {
		t.Errorf("remove ms: stderr %q, want the directories left named as of ms@2.1.3", stderr)
	}
	saved, _ := filepath.Glob(filepath.Join(e.root, ".pkg", "saved", "ms-2.1.3-root.*", dir, "node_modules", "ms", "mine.txt"))
	if len(saved) != 1 || !strings.Contains(stderr, "kept in "+strings.TrimSuffix(saved[0], "/"+dir+"/node_modules/ms/mine.txt")+": "+dir+"/node_modules/ms/mine.txt") {
		t.Errorf("remove ms: the placeholder's mine.txt kept at %v; stderr %q", saved, stderr)
	}
	if _, err := os.Lstat(filepath.Join(e.root, dir, "node_modules", "ms")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("remove ms: %s/node_modules/ms left: %v", dir, err)
	}
}

// TestUpgradeSaysLedBy: an upgrade of an npm package that a dependent's exact version
// keeps where it is says so, naming the dependent and its range, where it said everything
// was up to date while outdated listed the package.
func TestUpgradeSaysLedBy(t *testing.T) {
	base := t.TempDir()
	addNPMPacked(t, base, "ms", "2.1.2")
	addNPMPacked(t, base, "debug", "4.3.4", "ms@npm:2.1.2")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "debug", "ms")
	addNPMPacked(t, base, "ms", "2.1.3")
	const kept = "kept ms at 2.1.2: debug 4.3.4 depends on ms@npm:2.1.2 (newest 2.1.3)\n"
	for _, args := range [][]string{{"upgrade", "ms"}, {"upgrade"}} {
		if out, _ := e.ok(args...); out != kept+"nothing to upgrade\n" {
			t.Errorf("%s: %q, want %q", strings.Join(args, " "), out, kept)
		}
	}
	if got := e.installed(); got != "debug 4.3.4, ms 2.1.2" {
		t.Errorf("after the upgrades: %s", got)
	}
}

// TestFilesInRoot: pkg files lists an npm package's paths where the root has them, under
// lib/node_modules/.pnpm, not as its tree's members, whose directory in pkgs/ is an empty
// placeholder; --json gives both.
func TestFilesInRoot(t *testing.T) {
	base := t.TempDir()
	addNPMPacked(t, base, "ms", "2.1.3")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "ms")
	out, _ := e.ok("files", "ms")
	const dir = "lib/node_modules/.pnpm/ms@2.1.3/node_modules/ms"
	if want := dir + "\n" + dir + "/index.js\n" + dir + "/package.json\n"; out != want {
		t.Errorf("files ms: %q, want %q", out, want)
	}
	for _, p := range strings.Fields(out) {
		if _, err := os.Lstat(filepath.Join(e.root, p)); err != nil {
			t.Errorf("files ms lists %s: %v", p, err)
		}
	}
	out, _ = e.ok("files", "--json", "ms")
	var f report.Files
	if err := json.Unmarshal([]byte(out), &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Files) != 3 || f.Files[1].Path != "package/index.js" || f.Files[1].InRoot != dir+"/index.js" {
		t.Errorf("files --json ms: %+v, want package/index.js in the root at %s/index.js", f.Files, dir)
	}
}

// TestInfoDirectoryInRoot checks that info names the directory an npm package's files are
// in (its into), not the placeholder in pkgs/, and a package without into its pkgs/ tree.
func TestInfoDirectoryInRoot(t *testing.T) {
	base := t.TempDir()
	addNPMPacked(t, base, "ms", "2.1.3")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "ms")
	want := filepath.Join(e.root, "lib/node_modules/.pnpm/ms@2.1.3/node_modules/ms")
	if out, _ := e.ok("info", "ms"); !strings.Contains(out, "directory: "+want+"\n") {
		t.Errorf("info ms:\n%s\nwant directory: %s", out, want)
	}
	out, _ := e.ok("info", "--json", "ms")
	var info report.Info
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatal(err)
	}
	if info.Directory != want {
		t.Errorf("info --json ms: directory %q, want %q", info.Directory, want)
	}
	if _, err := os.Stat(filepath.Join(info.Directory, "index.js")); err != nil {
		t.Errorf("info ms's directory lacks its index.js: %v", err)
	}
}

// besideNote begins the note on npm packages that stay beside newer ones of their names,
// and besideAll ends it.
const (
	besideNote = "pkg: note: 1 npm package stays at the version its dependents' ranges allow, a newer version of its name installed beside it for other packages ("
	besideAll  = "outdated --all' lists them)\n"
)

// TestOutdatedBesideQuiet: an npm instance not asked for that its dependents' ranges keep
// where it is, a newer one of its name installed beside it for others, is nothing to act
// on: outdated counts such instances in a note, and lists them with --all; an instance
// kept with no newer one of its name installed is listed.
func TestOutdatedBesideQuiet(t *testing.T) {
	base := t.TempDir()
	addTwoDeps(t, base)
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "a", "b")
	if out, stderr := e.ok("outdated"); out != "" || !strings.HasPrefix(stderr, besideNote) || !strings.HasSuffix(stderr, besideAll) {
		t.Errorf("outdated: %q, %q; want no table and the note", out, stderr)
	}
	if out, _ := e.ok("outdated", "--all"); !strings.Contains(out, "dep   1.0.0      1.0.0    2.0.0") {
		t.Errorf("outdated --all: %q, want dep 1.0.0 listed", out)
	}
	out, _ := e.ok("outdated", "--json")
	if o := decode[report.Outdated](t, "outdated --json", out, report.OutdatedSchema); len(o.Packages) != 0 || o.Omitted != 1 {
		t.Errorf("outdated --json: %+v, want none listed, 1 omitted", o)
	}
	out, _ = e.ok("outdated", "--all", "--json")
	if o := decode[report.Outdated](t, "outdated --all --json", out, report.OutdatedSchema); len(o.Packages) != 1 || o.Packages[0].Beside != "2.0.0" || o.Omitted != 0 {
		t.Errorf("outdated --all --json: %+v, want dep 1.0.0 beside 2.0.0", o)
	}
	addNPM(t, base, "dep", "3.0.0")
	if out, _ := e.ok("outdated"); !strings.Contains(out, "dep   2.0.0      2.0.0    3.0.0") || strings.Contains(out, "1.0.0") {
		t.Errorf("outdated with dep 3.0.0 offered: %q, want dep 2.0.0 alone", out)
	}
}

// TestUpgradeBesideQuiet: upgrade counts in one note the npm instances not asked for that
// their dependents' ranges keep beside a newer one of their names (a dry run in one line),
// and says an instance kept with no newer one of its name installed.
func TestUpgradeBesideQuiet(t *testing.T) {
	base := t.TempDir()
	addTwoDeps(t, base)
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.ok("install", "a", "b")
	out, stderr := e.ok("upgrade")
	if out != "nothing to upgrade\n" || !strings.HasPrefix(stderr, besideNote) || !strings.HasSuffix(stderr, besideAll) {
		t.Errorf("upgrade: %q, %q; want nothing to upgrade and one note", out, stderr)
	}
	if out, _ := e.ok("upgrade", "--dry-run"); !strings.HasPrefix(out, "1 npm package stays at") || strings.Contains(out, "keep dep") {
		t.Errorf("upgrade --dry-run: %q", out)
	}
	// With dep 3.0.0 offered, nothing installed is newer than dep 2.0.0, which b's range
	// keeps: that is said.
	addNPM(t, base, "dep", "3.0.0")
	out, stderr = e.ok("upgrade")
	if want := "kept dep at 2.0.0: b 1.0.0 depends on dep@npm:^2.0.0 (newest 3.0.0)\nnothing to upgrade\n"; out != want || !strings.HasPrefix(stderr, besideNote) {
		t.Errorf("upgrade with dep 3.0.0 offered: %q, %q; want %q and the note", out, stderr, want)
	}
}

package install

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"pkg/db"
	"pkg/repo"
)

// npmPkg is an npm package name@version depending on deps, any version of each, with the
// command NAME-cli (its cli.js; a scoped name's NAME).
func npmPkg(name, version string, deps ...string) repo.Package {
	p := repo.Package{Name: name, Version: version, SHA256: strings.Repeat("a", 64), Kind: repo.KindNPM,
		Bin: []repo.Command{{Name: path.Base(name) + "-cli", Path: "package/cli.js"}}}
	for _, d := range deps {
		p.Depends = append(p.Depends, repo.Requirement{Name: d})
	}
	return p
}

// npmTree is the tarball of an npm package whose index.js prints its name and version,
// then requires each of deps: what Node does with the layout shows in its output.
func npmTree(name, version string, deps ...string) []entry {
	js := fmt.Sprintf("console.log(%q);\n", name+"@"+version)
	for _, d := range deps {
		js += fmt.Sprintf("require(%q);\n", d)
	}
	return tree("package/package.json="+fmt.Sprintf(`{"name":%q,"version":%q}`, name, version), "package/index.js="+js,
		"package/cli.js=#!/usr/bin/env node\nrequire('./index.js');\n")
}

// stageNPM stages the npm package name@version, depending on deps (names, any version).
func stageNPM(t *testing.T, r *Root, base, name, version string, deps ...string) *Staged {
	t.Helper()
	return stageIn(t, r, base, npmPkg(name, version, deps...), npmTree(name, version, deps...))
}

// links returns every symlink under dir, by path relative to it, as "TARGET inode".
func links(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return err
		}
		target, err := os.Readlink(p)
		rel, _ := filepath.Rel(dir, p)
		got[rel] = fmt.Sprintf("%s %d", target, inodeOf(p))
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return got
}

// TestNodeModules installs a small npm tree, app requested, app depending on lib and the
// scoped @sc/util, lib on @sc/util too: each instance's files are at
// .pnpm/NAME@VERSION/node_modules/NAME, each dependency a relative link beside them, the
// requested app at lib/node_modules/app and its command in bin/ (not lib's), and Node runs
// app finding each; asking for lib later links it too; removing the tree leaves nothing.
func TestNodeModules(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	staged := []*Staged{stageNPM(t, r, base, "app", "1.0.0", "lib", "@sc/util"), stageNPM(t, r, base, "lib", "2.1.0", "@sc/util"),
		stageNPM(t, r, base, "@sc/util", "0.3.0")}
	r.Request([]repo.Requirement{{Name: "app"}})
	if _, err := r.Apply(context.Background(), staged, nil); err != nil {
		t.Fatal(err)
	}
	checkPrefix(t, r)
	nm := r.path(nodeModules)
	want := map[string]string{
		"app":                                   ".pnpm/app@1.0.0/node_modules/app",
		".pnpm/app@1.0.0/node_modules/lib":      "../../lib@2.1.0/node_modules/lib",
		".pnpm/app@1.0.0/node_modules/@sc/util": "../../../@sc+util@0.3.0/node_modules/@sc/util",
		".pnpm/lib@2.1.0/node_modules/@sc/util": "../../../@sc+util@0.3.0/node_modules/@sc/util",
		".pnpm/node_modules/app":                "../app@1.0.0/node_modules/app",
		".pnpm/node_modules/lib":                "../lib@2.1.0/node_modules/lib",
		".pnpm/node_modules/@sc/util":           "../../@sc+util@0.3.0/node_modules/@sc/util",
	}
	got := links(t, nm)
	for p, target := range want {
		if !strings.HasPrefix(got[p], target+" ") {
			t.Errorf("%s: %q, want a link to %s", p, got[p], target)
		}
	}
	if len(got) != len(want) {
		t.Errorf("links %v, want %v", got, want)
	}
	if info, err := os.Lstat(filepath.Join(nm, ".pnpm/@sc+util@0.3.0/node_modules/@sc/util/index.js")); err != nil || info.Mode().Type() != 0 {
		t.Errorf("@sc/util's file: %v, %v", info, err)
	}
	if _, err := exec.LookPath("node"); err == nil {
		out, err := exec.Command("node", filepath.Join(nm, "app")).CombinedOutput()
		if want := "app@1.0.0\nlib@2.1.0\n@sc/util@0.3.0\n"; err != nil || string(out) != want {
			t.Errorf("node app: %v\n%s\nwant\n%s", err, out, want)
		}
	} else if os.Getenv("CI") == "true" {
		t.Error("node not installed (CI=true: this test must run it)")
	}
	if _, err := os.Lstat(r.path("bin", "lib-cli")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("bin/lib-cli of lib, not asked for: %v", err)
	}
	if target, err := os.Readlink(r.path("bin", "app-cli")); err != nil || target != "../"+nodeModules+"/.pnpm/app@1.0.0/node_modules/app/cli.js" {
		t.Errorf("bin/app-cli: %q, %v", target, err)
	} else if out, err := exec.Command(r.path("bin", "app-cli")).CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "app@1.0.0\nlib@2.1.0\n") {
		t.Errorf("bin/app-cli: %v\n%s", err, out)
	}
	r.Request([]repo.Requirement{{Name: "lib"}}) // installed as app's dependency, now asked for
	if _, err := r.Apply(context.Background(), nil, nil); err != nil {
		t.Fatal(err)
	}
	checkPrefix(t, r)
	if target, err := os.Readlink(filepath.Join(nm, "lib")); err != nil || target != ".pnpm/lib@2.1.0/node_modules/lib" {
		t.Errorf("lib/node_modules/lib once asked for: %q, %v", target, err)
	}
	if _, err := os.Lstat(r.path("bin", "lib-cli")); err != nil {
		t.Errorf("bin/lib-cli once lib is asked for: %v", err)
	}
	must(t, r.uninstall("app@1.0.0", "lib@2.1.0", "@sc/util@0.3.0"))
	checkPrefix(t, r)
	if _, err := os.Lstat(r.path("lib")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("lib stays with no package: %v", err)
	}
}

// TestNodeModulesHoisted: a package that requires one it does not declare, which another
// package of the tree depends on, finds it in .pnpm/node_modules, as under pnpm
// (eslint-module-utils loading eslint-plugin-import's eslint-import-resolver-node); removing
// the tree leaves nothing.
func TestNodeModulesHoisted(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	staged := []*Staged{stageNPM(t, r, base, "app", "1.0.0", "plugin"), stageNPM(t, r, base, "plugin", "1.0.0", "utils", "resolver"),
		stageIn(t, r, base, npmPkg("utils", "1.0.0"), npmTree("utils", "1.0.0", "resolver")), stageNPM(t, r, base, "resolver", "0.3.0")}
	r.Request([]repo.Requirement{{Name: "app"}})
	if _, err := r.Apply(context.Background(), staged, nil); err != nil {
		t.Fatal(err)
	}
	checkPrefix(t, r)
	nm := r.path(nodeModules)
	if got := links(t, nm)[".pnpm/node_modules/resolver"]; !strings.HasPrefix(got, "../resolver@0.3.0/node_modules/resolver ") {
		t.Errorf(".pnpm/node_modules/resolver: %q, want a link to resolver 0.3.0", got)
	}
	if _, err := exec.LookPath("node"); err == nil {
		out, err := exec.Command("node", filepath.Join(nm, "app")).CombinedOutput()
		if want := "app@1.0.0\nplugin@1.0.0\nutils@1.0.0\nresolver@0.3.0\n"; err != nil || string(out) != want {
			t.Errorf("node app: %v\n%s\nwant\n%s", err, out, want)
		}
	} else if os.Getenv("CI") == "true" {
		t.Error("node not installed (CI=true: this test must run it)")
	}
	must(t, r.uninstall("app@1.0.0", "plugin@1.0.0", "utils@1.0.0", "resolver@0.3.0"))
	checkPrefix(t, r)
	if _, err := os.Lstat(r.path("lib")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("lib stays with no package: %v", err)
	}
}

// TestNodeModulesHoistLater: in a root installed without the hoisted links, verify does not
// ask for them, and the next change, of another package, makes every one of them.
func TestNodeModulesHoistLater(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	testHookUnhoisted = true
	_, err := r.Apply(context.Background(), []*Staged{stageNPM(t, r, base, "app", "1.0.0", "lib"), stageNPM(t, r, base, "lib", "1.0.0")}, nil)
	testHookUnhoisted = false
	if err != nil {
		t.Fatal(err)
	}
	nm := r.path(nodeModules)
	if got := links(t, nm); len(got) != 1 {
		t.Fatalf("links of a root without the hoisted ones: %v, want lib's alone", got)
	}
	if problems, err := r.Verify(); err != nil || len(problems) > 0 {
		t.Errorf("verify of a root without the hoisted links: %+v, %v", problems, err)
	}
	if _, err := r.Apply(context.Background(), []*Staged{stageNPM(t, r, base, "other", "1.0.0")}, nil); err != nil {
		t.Fatal(err)
	}
	checkPrefix(t, r)
	got := links(t, nm)
	for _, n := range []string{"app", "lib", "other"} {
		if !strings.HasPrefix(got[".pnpm/node_modules/"+n], "../"+n+"@1.0.0/node_modules/"+n+" ") {
			t.Errorf(".pnpm/node_modules/%s after the next change: %q", n, got[".pnpm/node_modules/"+n])
		}
	}
}

// TestNodeModulesMany commits more scoped instances than minMkdirs at once, each
// depending on the next: the roll-forward makes their directories (.pnpm/NAME@V,
// its node_modules and @scope) on several workers a level at a time, and each
// instance's files and links are then in place.
func TestNodeModulesMany(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	n := 2 * minMkdirs
	name := func(i int) string { return fmt.Sprintf("@s%d/p", i) }
	var staged []*Staged
	for i := range n {
		var deps []string
		if i+1 < n {
			deps = []string{name(i + 1)}
		}
		staged = append(staged, stageNPM(t, r, base, name(i), "1.0.0", deps...))
	}
	r.Request([]repo.Requirement{{Name: name(0)}})
	if _, err := r.Apply(context.Background(), staged, nil); err != nil {
		t.Fatal(err)
	}
	checkPrefix(t, r)
	got := links(t, r.path(nodeModules))
	for i := range n - 1 {
		link := fmt.Sprintf(".pnpm/@s%d+p@1.0.0/node_modules/@s%d/p", i, i+1)
		if want := fmt.Sprintf("../../../@s%d+p@1.0.0/node_modules/@s%d/p ", i+1, i+1); !strings.HasPrefix(got[link], want) {
			t.Errorf("%s: %q, want a link to %s", link, got[link], want)
		}
	}
	for i := range n {
		js := filepath.Join(r.path(nodeModules), fmt.Sprintf(".pnpm/@s%d+p@1.0.0/node_modules/@s%d/p/index.js", i, i))
		if info, err := os.Lstat(js); err != nil || !info.Mode().IsRegular() {
			t.Errorf("%s: %v, %v", js, info, err)
		}
	}
}

// TestNodeModulesUpgrade upgrades one package on which five others depend: exactly their
// five links to it move (a new link, by inode), and no other link of the tree is touched;
// a crash between the records and the links is finished by the next start.
func TestNodeModulesUpgrade(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	var staged []*Staged
	var names []string
	for i := range 5 {
		name := fmt.Sprintf("d%d", i)
		names = append(names, name)
		staged = append(staged, stageNPM(t, r, base, name, "1.0.0", "dep", "other"))
	}
	staged = append(staged, stageNPM(t, r, base, "dep", "1.0.0", "other"), stageNPM(t, r, base, "other", "1.0.0"),
		stageNPM(t, r, base, "top", "1.0.0", names...))
	r.Request([]repo.Requirement{{Name: "top"}})
	if _, err := r.Apply(context.Background(), staged, nil); err != nil {
		t.Fatal(err)
	}
	checkPrefix(t, r)
	nm := r.path(nodeModules)
	before := links(t, nm)
	testHookRecorded = func() bool { return true }
	_, err := r.Apply(context.Background(), []*Staged{stageNPM(t, r, base, "dep", "1.1.0", "other")}, []string{"dep@1.0.0"})
	testHookRecorded = nil
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	r = openRoot(t, dir)
	defer r.Close()
	checkPrefix(t, r)
	after := links(t, nm)
	var moved []string
	for p, l := range after {
		if before[p] != l {
			moved = append(moved, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			moved = append(moved, p)
		}
	}
	if len(moved) != 8 { // d0-d4's dep; dep's own other, gone with 1.0.0 and made for 1.1.0; the hoisted dep
		t.Errorf("moved %d links %v, want d0-d4's links to dep, dep's own and the hoisted one", len(moved), moved)
	}
	for _, n := range names {
		p := ".pnpm/" + n + "@1.0.0/node_modules/dep"
		if !strings.HasPrefix(after[p], "../../dep@1.1.0/node_modules/dep ") {
			t.Errorf("%s: %q after the upgrade", p, after[p])
		}
	}
}

// TestNodeModulesUpgradeRequested: an upgrade of a requested npm package, its request
// carried to the new version, links the new version's command in bin/ (and in a new Root,
// as the next command opens it): its old version's link went with it and none was made,
// so bin/tool vanished at every pkg upgrade of tool.
func TestNodeModulesUpgradeRequested(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	r.Request([]repo.Requirement{{Name: "top"}})
	if _, err := r.Apply(context.Background(), []*Staged{stageNPM(t, r, base, "top", "1.0.0")}, nil); err != nil {
		t.Fatal(err)
	}
	r.Close()
	r = openRoot(t, dir) // as pkg upgrade opens it: no request given
	defer r.Close()
	if _, err := r.Apply(context.Background(), []*Staged{stageNPM(t, r, base, "top", "1.1.0")}, []string{"top@1.0.0"}); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(r.path("bin/top-cli")); err != nil || !strings.Contains(target, "top@1.1.0") {
		t.Errorf("bin/top-cli after the upgrade: %q, %v; want a link to top 1.1.0's", target, err)
	}
	checkPrefix(t, r)
}

// TestNodeModulesConflict: a requested npm package's link where a package placed by into
// has its files is refused, naming both.
func TestNodeModulesConflict(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	old := prefixPkg("app-old", "1")
	old.Into = "lib/node_modules/app"
	if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, old, npmTree("app", "0.9.0"))}, nil); err != nil {
		t.Fatal(err)
	}
	r.Request([]repo.Requirement{{Name: "app"}})
	_, err := r.Apply(context.Background(), []*Staged{stageNPM(t, r, base, "app", "1.0.0")}, nil)
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Path != "lib/node_modules/app" || ce.Package != "app" || ce.Other != "app-old" {
		t.Fatalf("Apply = %v, want a ConflictError of app and app-old on lib/node_modules/app", err)
	}
	checkPrefix(t, r)
}

// TestNodeModulesVerify: a dependency's link made to lead elsewhere, or deleted, is found
// by Verify as the prefix's, naming the instance whose link it is.
func TestNodeModulesVerify(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	r.Request([]repo.Requirement{{Name: "app"}})
	if _, err := r.Apply(context.Background(), []*Staged{stageNPM(t, r, base, "app", "1.0.0", "lib"), stageNPM(t, r, base, "lib", "1.0.0")}, nil); err != nil {
		t.Fatal(err)
	}
	link := r.path(nodeModules, ".pnpm/app@1.0.0/node_modules/lib")
	must(t, os.Remove(link))
	must(t, os.Symlink("../../elsewhere", link))
	must(t, os.Remove(r.path(nodeModules, "app")))
	problems, err := r.Verify()
	if err != nil {
		t.Fatal(err)
	}
	var target, missing bool
	for _, p := range problems {
		target = target || p.Path == link && p.Package == "app" && p.Kind == repo.KindNPM && errors.Is(p, ErrLinkTarget) && errors.Is(p, ErrPrefix)
		missing = missing || p.Path == r.path(nodeModules, "app") && errors.Is(p, ErrMissing)
	}
	if !target || !missing || len(problems) != 2 {
		t.Errorf("Verify = %v, want app's link to lib leading elsewhere and lib/node_modules/app missing", problems)
	}
}

// TestGenerated: the links and directories the layout generates for a set of records, a
// scoped dependency one ../ deeper in an @SCOPE directory of its dependent's, a scoped
// requested package's link in lib/node_modules/@SCOPE, each dependency resolved to the
// highest version its range allows, peers linked, and optional ones only where installed;
// the highest version of every name hoisted into .pnpm/node_modules.
func TestGenerated(t *testing.T) {
	rec := func(name, version string, deps ...string) *db.Record {
		p := &db.Record{Name: name, Version: version, Kind: repo.KindNPM}
		for _, d := range deps {
			q, err := repo.ParseRequirement(d)
			if err != nil {
				t.Fatal(err)
			}
			p.Depends = append(p.Depends, q)
		}
		return p
	}
	app := rec("app", "1.0.0", "@sc/util@npm:^1.0.0", "keys@npm:^3.4.0")
	app.Peers = []repo.Requirement{{Name: "@sc/js"}}
	app.Optional = []repo.Requirement{{Name: "fsevents"}}
	recs := map[string]*db.Record{}
	for _, p := range []*db.Record{app, rec("@sc/util", "1.2.0", "keys@npm:^4"), rec("@sc/util", "2.0.0"), rec("@sc/js", "9.1.0", "@sc/util@npm:1.x"),
		rec("keys", "3.4.3"), rec("keys", "4.2.1")} {
		recs[p.Key()] = p
	}
	got := generated(recs, map[string]repo.Requirement{"app@1.0.0": {Name: "app"}, "@sc/js@9.1.0": {Name: "@sc/js"}})
	link := func(target string, owner string) db.Owners { return db.Owners{Link: target, Names: []string{owner}} }
	dir := func(owners ...string) db.Owners { return db.Owners{Dir: true, Names: owners} }
	pnpm := "lib/node_modules/.pnpm/"
	want := map[string]db.Owners{
		pnpm + "app@1.0.0/node_modules/@sc":         dir("app@1.0.0"),
		pnpm + "app@1.0.0/node_modules/@sc/util":    link("../../../@sc+util@1.2.0/node_modules/@sc/util", "app@1.0.0"),
		pnpm + "app@1.0.0/node_modules/@sc/js":      link("../../../@sc+js@9.1.0/node_modules/@sc/js", "app@1.0.0"),
		pnpm + "app@1.0.0/node_modules/keys":        link("../../keys@3.4.3/node_modules/keys", "app@1.0.0"),
		pnpm + "@sc+util@1.2.0/node_modules/keys":   link("../../keys@4.2.1/node_modules/keys", "@sc/util@1.2.0"),
		pnpm + "@sc+js@9.1.0/node_modules/@sc":      dir("@sc/js@9.1.0"),
		pnpm + "@sc+js@9.1.0/node_modules/@sc/util": link("../../../@sc+util@1.2.0/node_modules/@sc/util", "@sc/js@9.1.0"),
		"lib/node_modules/app":                      link(".pnpm/app@1.0.0/node_modules/app", "app@1.0.0"),
		"lib/node_modules/@sc":                      dir("@sc/js@9.1.0"),
		"lib/node_modules/@sc/js":                   link("../.pnpm/@sc+js@9.1.0/node_modules/@sc/js", "@sc/js@9.1.0"),
		pnpm + "node_modules":                       dir("@sc/js@9.1.0", "@sc/util@2.0.0", "app@1.0.0", "keys@4.2.1"),
		pnpm + "node_modules/app":                   link("../app@1.0.0/node_modules/app", "app@1.0.0"),
		pnpm + "node_modules/keys":                  link("../keys@4.2.1/node_modules/keys", "keys@4.2.1"),
		pnpm + "node_modules/@sc":                   dir("@sc/js@9.1.0", "@sc/util@2.0.0"),
		pnpm + "node_modules/@sc/js":                link("../../@sc+js@9.1.0/node_modules/@sc/js", "@sc/js@9.1.0"),
		pnpm + "node_modules/@sc/util":              link("../../@sc+util@2.0.0/node_modules/@sc/util", "@sc/util@2.0.0"),
	}
	for p, o := range want {
		if g, ok := got[p]; !ok || !sameOwners(g, o) {
			t.Errorf("%s: %+v, want %+v", p, g, o)
		}
	}
	for p, g := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %+v generated, want nothing", p, g)
		}
	}
}

// TestNodeModulesRepair: pkg verify --repair (Rebuild) records the generated paths again
// from the records and the requests, and its roll-forward puts back the links deleted.
func TestNodeModulesRepair(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	cands := map[string][]Candidate{}
	var staged []*Staged
	for _, p := range []struct {
		name, version string
		deps          []string
	}{{"app", "1.0.0", []string{"lib"}}, {"lib", "1.0.0", nil}} {
		pk := npmPkg(p.name, p.version, p.deps...)
		tarPath := alignedTar(t, base, npmTree(p.name, p.version, p.deps...))
		members, err := scanWithDigests(tarPath)
		if err != nil {
			t.Fatal(err)
		}
		s, err := r.Stage(context.Background(), tarPath, pk, members)
		if err != nil {
			t.Fatal(err)
		}
		staged = append(staged, s)
		cands[pk.Name] = []Candidate{{Package: pk, Members: members}}
		cands[pk.Key()] = cands[pk.Name]
	}
	r.Request([]repo.Requirement{{Name: "app"}})
	if _, err := r.Apply(context.Background(), staged, nil); err != nil {
		t.Fatal(err)
	}
	r.Close()
	nm := filepath.Join(dir, nodeModules)
	must(t, os.Remove(filepath.Join(nm, ".pnpm/app@1.0.0/node_modules/lib")))
	must(t, os.Remove(filepath.Join(nm, "app")))
	if _, err := Rebuild(context.Background(), dir, Options{}, func(name string) ([]Candidate, error) { return cands[name], nil }); err != nil {
		t.Fatal(err)
	}
	r = openRoot(t, dir)
	defer r.Close()
	checkPrefix(t, r)
	if target, err := os.Readlink(filepath.Join(nm, ".pnpm/app@1.0.0/node_modules/lib")); err != nil || target != "../../lib@1.0.0/node_modules/lib" {
		t.Errorf("app's link to lib after the repair: %q, %v", target, err)
	}
}

// TestNodeModulesReinstall: installing an instance again puts back its generated paths,
// as Verify wants them: its links deleted (a dependency's, a scoped one's with its @SCOPE
// directory, its lib/node_modules link) are made, one the user changed is kept in
// .pkg/saved and replaced; another instance's link, which the change does not touch, stays
// as the user left it.
func TestNodeModulesReinstall(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	r.Request([]repo.Requirement{{Name: "app"}})
	staged := []*Staged{stageNPM(t, r, base, "app", "1.0.0", "lib", "@sc/util", "keys"), stageNPM(t, r, base, "lib", "1.0.0", "keys"),
		stageNPM(t, r, base, "@sc/util", "1.0.0"), stageNPM(t, r, base, "keys", "1.0.0")}
	if _, err := r.Apply(context.Background(), staged, nil); err != nil {
		t.Fatal(err)
	}
	nm := r.path(nodeModules)
	must(t, os.Remove(filepath.Join(nm, ".pnpm/app@1.0.0/node_modules/lib")))
	must(t, os.RemoveAll(filepath.Join(nm, ".pnpm/app@1.0.0/node_modules/@sc")))
	must(t, os.Remove(filepath.Join(nm, "app")))
	for _, p := range []string{".pnpm/app@1.0.0/node_modules/keys", ".pnpm/lib@1.0.0/node_modules/keys"} {
		must(t, os.Remove(filepath.Join(nm, p)))
		must(t, os.Symlink("../../elsewhere", filepath.Join(nm, p)))
	}
	if _, err := r.Apply(context.Background(), []*Staged{stageNPM(t, r, base, "app", "1.0.0", "lib", "@sc/util", "keys")}, nil); err != nil {
		t.Fatal(err)
	}
	problems, err := r.Verify()
	if err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(nm, ".pnpm/lib@1.0.0/node_modules/keys")
	if len(problems) != 1 || problems[0].Path != lib || problems[0].Package != "lib" || !errors.Is(problems[0], ErrLinkTarget) {
		t.Errorf("Verify after app's reinstall = %v, want lib's link to keys alone, as the user left it", problems)
	}
	if saved, _ := filepath.Glob(r.path(".pkg", "saved", "*", nodeModules, ".pnpm/app@1.0.0/node_modules/keys")); len(saved) != 1 {
		t.Errorf("app's link to keys the user changed: saved as %v, want it in .pkg/saved", saved)
	}
}

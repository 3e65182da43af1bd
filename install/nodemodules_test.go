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
// requested app at lib/node_modules/app, and Node (where installed) runs app finding
// each; removing the tree leaves nothing.
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
	if len(moved) != 7 { // d0-d4's dep; dep's own other, gone with 1.0.0 and made for 1.1.0
		t.Errorf("moved %d links %v, want d0-d4's links to dep and dep's own", len(moved), moved)
	}
	for _, n := range names {
		p := ".pnpm/" + n + "@1.0.0/node_modules/dep"
		if !strings.HasPrefix(after[p], "../../dep@1.1.0/node_modules/dep ") {
			t.Errorf("%s: %q after the upgrade", p, after[p])
		}
	}
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
		target = target || p.Path == link && p.Package == "app" && errors.Is(p, ErrLinkTarget) && errors.Is(p, ErrPrefix)
		missing = missing || p.Path == r.path(nodeModules, "app") && errors.Is(p, ErrMissing)
	}
	if !target || !missing || len(problems) != 2 {
		t.Errorf("Verify = %v, want app's link to lib leading elsewhere and lib/node_modules/app missing", problems)
	}
}

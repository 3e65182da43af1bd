package realworld

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"pkg/internal/testfs"
)

// npmTarballOf returns the tarball of the npm package name@version, downloaded into dir's
// tgz/ where missing, from the URL and integrity npm view gives.
func npmTarballOf(t testing.TB, dir, name, version string) npmTarball {
	t.Helper()
	p := filepath.Join(dir, "tgz", strings.ReplaceAll(name, "/", "+")+"-"+version+".tgz")
	if _, err := os.Stat(p); err == nil {
		return npmTarball{Name: name, Version: version, Path: p}
	}
	testfs.NeedTools(t, "npm")
	out, err := exec.Command("npm", "view", name+"@"+version, "dist", "--json").Output()
	if err != nil {
		testfs.Unavailable(t, fmt.Sprintf("npm view %s@%s: %v", name, version, err))
	}
	var dist struct{ Tarball, Integrity string }
	if err := json.Unmarshal(out, &dist); err != nil {
		t.Fatalf("npm view %s@%s dist: %v: %s", name, version, err, out)
	}
	if err := fetchTarball(dist.Tarball, dist.Integrity, p); err != nil {
		testfs.Unavailable(t, err.Error())
	}
	return npmTarball{Name: name, Version: version, Path: p}
}

// newNPMWorld publishes tarballs, each with plain `pkg repo add` (no flags), into a
// repository on a fresh loop XFS, with a cache and a root beside it.
func newNPMWorld(t testing.TB, tarballs []npmTarball) *world {
	t.Helper()
	testfs.NeedTools(t, "node")
	mnt := testfs.Mount(t, "xfs")
	w := &world{t: t, bin: testfs.PkgBinary(t), repo: filepath.Join(mnt, "repo"), cache: filepath.Join(mnt, "cache"),
		root: filepath.Join(mnt, "root"), home: t.TempDir()}
	for _, tb := range tarballs {
		w.run("repo", "add", w.repo, tb.Path)
	}
	return w
}

// links returns every symlink under dir, by path relative to it, as "TARGET inode": a
// link made again has another inode.
func links(t testing.TB, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return err
		}
		target, err := os.Readlink(p)
		var st syscall.Stat_t
		if err == nil {
			err = syscall.Lstat(p, &st)
		}
		rel, _ := filepath.Rel(dir, p)
		got[rel] = fmt.Sprintf("%s %d", target, st.Ino)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// eslintLints runs the root's bin/eslint on a file with an unused variable, under a
// config that makes no-unused-vars an error: it must exit 1 naming the rule.
func (w *world) eslintLints() {
	w.t.Helper()
	project := w.t.TempDir()
	for name, text := range map[string]string{
		"eslint.config.js": "module.exports = [{ rules: { \"no-unused-vars\": \"error\" } }];\n",
		"bad.js":           "const unused = 1;\n",
	} {
		if err := os.WriteFile(filepath.Join(project, name), []byte(text), 0o644); err != nil {
			w.t.Fatal(err)
		}
	}
	cmd := exec.Command(filepath.Join(w.root, "bin", "eslint"), "bad.js")
	cmd.Dir, cmd.Env = project, w.env()
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "no-unused-vars") || !strings.Contains(string(out), "'unused'") {
		w.t.Errorf("bin/eslint bad.js: %v, want exit 1 naming no-unused-vars and 'unused':\n%s", err, out)
	}
}

// TestESLint publishes the 85 tarballs of eslint@9's tree with no per-package flag,
// installs eslint, lints a file with a rule error through <root>/bin/eslint, runs
// `pkg run eslint -- --version`, and verifies the root: both eslint-visitor-keys
// instances and the scoped packages installed, each file a clone of the cache (must-show
// 1 of issue #33).
func TestESLint(t *testing.T) {
	tree := eslintTree(t)
	w := newNPMWorld(t, tree.Tarballs)
	w.pkg("install", "eslint")
	w.eslintLints()
	if out := w.pkg("run", "eslint", "--", "--version"); strings.TrimSpace(out) != "v"+eslintVersion {
		t.Errorf("pkg run eslint -- --version: %q, want v%s", out, eslintVersion)
	}
	w.verify()
	var list struct {
		Packages []struct{ Name, Version string } `json:"packages"`
	}
	if err := json.Unmarshal([]byte(w.pkg("list", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, p := range list.Packages {
		got = append(got, p.Name+"@"+p.Version)
	}
	for _, tb := range tree.Tarballs {
		want = append(want, tb.Name+"@"+tb.Version)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("installed %v, want the lock's %v", got, want)
	}
	nm := filepath.Join(w.root, "lib", "node_modules")
	if target, err := os.Readlink(filepath.Join(nm, "eslint")); err != nil || target != ".pnpm/eslint@"+eslintVersion+"/node_modules/eslint" {
		t.Errorf("lib/node_modules/eslint: %q, %v", target, err)
	}
	// Each instance's own directory is folded: the prefix holds it, its tree a placeholder.
	for _, tb := range tree.Tarballs {
		own := filepath.Join(nm, ".pnpm", strings.Replace(tb.Name, "/", "+", 1)+"@"+tb.Version, "node_modules", tb.Name)
		tree := filepath.Join(w.root, "pkgs", strings.Replace(tb.Name, "/", "+", 1)+"@"+tb.Version)
		tops, err := os.ReadDir(tree) // the tarball's one top directory: package/, or another name
		var es []os.DirEntry
		if err == nil && len(tops) == 1 {
			es, err = os.ReadDir(filepath.Join(tree, tops[0].Name()))
		}
		if err != nil || len(tops) != 1 || len(es) > 0 {
			t.Errorf("%s@%s's directory is not folded: %s holds %d entries, its top directory %d (%v)", tb.Name, tb.Version, tree, len(tops), len(es), err)
		} else if _, err := os.Stat(filepath.Join(own, "package.json")); err != nil {
			t.Errorf("%s@%s's package.json is not in the prefix: %v", tb.Name, tb.Version, err)
		}
	}
	t.Logf("%d instances, %d links under lib/node_modules", len(got), len(links(t, nm)))
}

// TestESLintUpgrade installs the eslint@9 tree with debug 4.4.1 in place of the lock's
// 4.4.3, then upgrades debug alone: exactly the debug links of the three instances that
// depend on it and the hoisted one move (new inodes, new targets), and no other link of
// the tree changes; eslint still lints (must-show 4 of issue #33).
func TestESLintUpgrade(t *testing.T) {
	tree := eslintTree(t)
	older := npmTarballOf(t, tree.Dir, "debug", "4.4.1")
	var newer npmTarball
	tarballs := []npmTarball{older}
	for _, tb := range tree.Tarballs {
		if tb.Name == "debug" {
			newer = tb
			continue
		}
		tarballs = append(tarballs, tb)
	}
	if newer.Version != "4.4.3" {
		t.Fatalf("the lock's debug is %q, want 4.4.3", newer.Version)
	}
	w := newNPMWorld(t, tarballs)
	w.pkg("install", "eslint")
	nm := filepath.Join(w.root, "lib", "node_modules")
	before := links(t, nm)
	w.run("repo", "add", w.repo, newer.Path)
	w.pkg("upgrade", "debug")
	after := links(t, nm)
	var dependents []string
	for _, e := range lockEntries(t, tree.Dir) {
		if _, ok := e.Dependencies["debug"]; ok {
			dependents = append(dependents, ".pnpm/"+strings.ReplaceAll(e.name, "/", "+")+"@"+e.Version+"/node_modules/debug")
		}
	}
	wantMoved := map[string]bool{
		// debug's own link to ms, gone with 4.4.1 and made for 4.4.3
		".pnpm/debug@4.4.1/node_modules/ms": true, ".pnpm/debug@4.4.3/node_modules/ms": true,
		".pnpm/node_modules/debug": true, // the hoisted debug, at its highest version
	}
	for _, d := range dependents {
		wantMoved[d] = true
		if !strings.HasPrefix(after[d], "../../debug@4.4.3/node_modules/debug ") {
			t.Errorf("%s: %q after the upgrade", d, after[d])
		}
	}
	var moved []string
	for _, p := range slices.Sorted(maps.Keys(mergeLinks(before, after))) {
		if before[p] != after[p] {
			moved = append(moved, p)
			if !wantMoved[p] {
				t.Errorf("%s moved: %q, then %q", p, before[p], after[p])
			}
		}
	}
	if len(moved) != len(wantMoved) {
		t.Errorf("moved %d links %v, want %d: the dependents' debug links, debug's own and the hoisted one", len(moved), moved, len(wantMoved))
	}
	t.Logf("upgrade of debug 4.4.1 to 4.4.3: %d of %d links moved: %v", len(moved), len(after), moved)
	w.verify()
	w.eslintLints()
}

func mergeLinks(a, b map[string]string) map[string]string {
	m := maps.Clone(a)
	maps.Copy(m, b)
	return m
}

// TestESLintPluginImport publishes the tree of eslint-plugin-import 2.32.0 (eslint 9 with
// it, its peer), installs both and lints a module importing a file that does not exist
// with the plugin's recommended rules: import/no-unresolved names the import. Its default
// resolver is loaded by eslint-module-utils, which does not declare it: Node finds it in
// lib/node_modules/.pnpm/node_modules, else every import rule says "Resolve error: unable
// to load resolver".
func TestESLintPluginImport(t *testing.T) {
	tree := treeOf(t, "eslint-plugin-import", "2.32.0")
	w := newNPMWorld(t, tree.Tarballs)
	w.pkg("install", "eslint", "eslint-plugin-import")
	project := t.TempDir()
	for name, text := range map[string]string{
		"eslint.config.mjs": "import imp from \"eslint-plugin-import\";\n" +
			"export default [imp.flatConfigs.recommended, { languageOptions: { ecmaVersion: 2022, sourceType: \"module\" } }];\n",
		"a.js": "import x from \"./nothere.js\";\nexport default x;\n",
	} {
		if err := os.WriteFile(filepath.Join(project, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The config's import finds the plugin as docs/javascript.md says: a link to the root's
	// requested packages.
	if err := os.Symlink(filepath.Join(w.root, "lib", "node_modules"), filepath.Join(project, "node_modules")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(w.root, "bin", "eslint"), "a.js")
	cmd.Dir, cmd.Env = project, w.env()
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "'./nothere.js'") ||
		!strings.Contains(string(out), "import/no-unresolved") || strings.Contains(string(out), "Resolve error") {
		t.Errorf("bin/eslint a.js: %v, want exit 1 naming ./nothere.js unresolved, and no resolve error:\n%s", err, out)
	}
	w.verify()
}

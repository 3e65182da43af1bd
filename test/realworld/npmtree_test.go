package realworld

import (
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"pkg/internal/testfs"
)

// The eslint@9 tree of issue #33: the package-lock.json npm makes for eslint at an exact
// version, resolved against the registry as it was at npmBefore (npm's --before), so that
// every run gets the same tree, and the tarballs it names, kept between runs.
const (
	eslintVersion = "9.39.2"
	npmBefore     = "2025-12-31T00:00:00Z"
	// maxTarball bounds one tarball of the tree (eslint's own is 1 MiB).
	maxTarball = 64 << 20 // 64 MiB
)

// npmTarball is one package of a lock's tree, downloaded.
type npmTarball struct {
	Name, Version string
	Path          string // in the download cache
}

// npmTree is a project directory holding package.json and package-lock.json, and the
// tarballs of every package its lock names, sorted by name and version.
type npmTree struct {
	Dir      string
	Tarballs []npmTarball
}

// npmDir returns the directory npm trees are kept in between runs: $PKG_TEST_NPM, else
// /var/tmp/pkg-test-npm.
func npmDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("PKG_TEST_NPM")
	if dir == "" {
		dir = "/var/tmp/pkg-test-npm"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// eslintTree returns the eslint@9 tree: its lock made with npm (install --package-lock-only
// --ignore-scripts) where the cache has none, and each tarball downloaded from the lock's
// resolved URL where the cache lacks it, checked against the lock's sha512 integrity.
func eslintTree(t testing.TB) *npmTree { return treeOf(t, "eslint", eslintVersion) }

// treeOf returns the tree of the npm package name@version, as eslintTree the eslint one.
func treeOf(t testing.TB, name, version string) *npmTree {
	t.Helper()
	dir := filepath.Join(npmDir(t), name+"-"+version)
	if _, err := os.Stat(filepath.Join(dir, "package-lock.json")); err != nil {
		makeLock(t, dir, name+"@"+version)
	}
	entries := lockEntries(t, dir)
	tree := &npmTree{Dir: dir}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, 8)
	)
	for _, e := range entries {
		p := filepath.Join(dir, "tgz", strings.ReplaceAll(e.name, "/", "+")+"-"+e.Version+".tgz")
		tree.Tarballs = append(tree.Tarballs, npmTarball{Name: e.name, Version: e.Version, Path: p})
		if _, err := os.Stat(p); err == nil {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := fetchTarball(e.Resolved, e.Integrity, p); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		testfs.Unavailable(t, fmt.Sprintf("the %s@%s tree: %v", name, version, errs))
	}
	slices.SortFunc(tree.Tarballs, func(a, b npmTarball) int { return strings.Compare(a.Name+"@"+a.Version, b.Name+"@"+b.Version) })
	return tree
}

// makeLock writes dir/package.json and dir/package-lock.json for the npm package spec,
// made by npm in a directory of its own and renamed into place whole.
func makeLock(t testing.TB, dir, spec string) {
	t.Helper()
	testfs.NeedTools(t, "npm")
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".lock-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	// --omit-lockfile-registry-resolved=false: the lock names each tarball's URL, whatever
	// the host's .npmrc says; --before: the registry as it was then.
	cmd := exec.Command("npm", "install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund",
		"--omit-lockfile-registry-resolved=false", "--before="+npmBefore, spec)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		testfs.Unavailable(t, fmt.Sprintf("npm install --package-lock-only %s: %v: %s", spec, err, out))
	}
	if err := os.Mkdir(filepath.Join(tmp, "tgz"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(dir) // a lock the cache lacks: anything there is a run cut short
	if err := os.Rename(tmp, dir); err != nil {
		t.Fatal(err)
	}
}

// lockEntry is one package of a package-lock.json (lockfileVersion 2 or 3).
type lockEntry struct {
	name         string            // from its key: what follows the last node_modules/
	Version      string            `json:"version"`
	Resolved     string            `json:"resolved"`
	Integrity    string            `json:"integrity"`
	Dependencies map[string]string `json:"dependencies"`
	Peers        map[string]string `json:"peerDependencies"`
}

// lockEntries returns the packages dir/package-lock.json names, each once, by name and
// version.
func lockEntries(t testing.TB, dir string) []lockEntry {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	var lock struct {
		Packages map[string]lockEntry `json:"packages"`
	}
	if err := json.Unmarshal(data, &lock); err != nil {
		t.Fatalf("%s/package-lock.json: %v", dir, err)
	}
	seen := map[string]bool{}
	var es []lockEntry
	for _, key := range slices.Sorted(maps.Keys(lock.Packages)) {
		e := lock.Packages[key]
		i := strings.LastIndex(key, "node_modules/")
		if i < 0 { // the project itself
			continue
		}
		e.name = key[i+len("node_modules/"):]
		if e.Resolved == "" || e.Integrity == "" {
			t.Fatalf("%s/package-lock.json: %s has no resolved URL or integrity", dir, key)
		}
		if !seen[e.name+"@"+e.Version] {
			seen[e.name+"@"+e.Version] = true
			es = append(es, e)
		}
	}
	return es
}

// fetchTarball writes the tarball at url to path, through a temporary file renamed into place
// once its sha512 is integrity's.
func fetchTarball(url, integrity, path string) (err error) {
	want, ok := strings.CutPrefix(integrity, "sha512-")
	if !ok {
		return fmt.Errorf("download %s: integrity %q is not sha512", url, integrity)
	}
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("download %s: %s", url, resp.Status)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tgz-")
	if err != nil {
		return err
	}
	defer func() {
		f.Close()
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	h := sha512.New()
	if _, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(resp.Body, maxTarball)); err != nil {
		return fmt.Errorf("download %s: %w", url, err)
	}
	if got := base64.StdEncoding.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("download %s: sha512 %s, the lock says %s", url, got, want)
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// TestESLintTree checks the fixture: the lock names the tree issue #33 describes, both
// eslint-visitor-keys versions and the scoped packages among them, and every tarball is
// there.
func TestESLintTree(t *testing.T) {
	tree := eslintTree(t)
	var scoped, visitorKeys []string
	for _, tb := range tree.Tarballs {
		if strings.HasPrefix(tb.Name, "@") {
			scoped = append(scoped, tb.Name)
		}
		if tb.Name == "eslint-visitor-keys" {
			visitorKeys = append(visitorKeys, tb.Version)
		}
		if info, err := os.Stat(tb.Path); err != nil || info.Size() == 0 {
			t.Errorf("%s@%s: no tarball (%v)", tb.Name, tb.Version, err)
		}
	}
	t.Logf("the eslint@%s tree: %d tarballs, %d of them scoped", eslintVersion, len(tree.Tarballs), len(scoped))
	if len(visitorKeys) != 2 {
		t.Errorf("eslint-visitor-keys versions %v, want two", visitorKeys)
	}
	if len(scoped) < 10 {
		t.Errorf("scoped packages %v, want the tree's @eslint and @humanwhocodes ones", scoped)
	}
}

package realworld

import (
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"pkg/internal/testfs"
)

// npmCacheOf writes an npm cache directory at dir holding the tarballs, as npm's own
// content store (_cacache/content-v2/sha512/HH/HH/REST) holds them after an npm ci.
func npmCacheOf(t testing.TB, dir string, tarballs []npmTarball) {
	t.Helper()
	for _, tb := range tarballs {
		f, err := os.Open(tb.Path)
		if err != nil {
			t.Fatal(err)
		}
		h := sha512.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		sum := hex.EncodeToString(h.Sum(nil))
		p := filepath.Join(dir, "_cacache", "content-v2", "sha512", sum[:2], sum[2:4], sum[4:])
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		testfs.Run(t, "", "cp", "--reflink=auto", tb.Path, p)
	}
}

// TestESLintLock imports eslint@9's package-lock.json into a repository (repo add
// --from), its tarballs from an npm cache but for two downloaded from the registry, and
// syncs the lockfile that writes into a root, then into a fresh root from a copy of the
// cache, offline, the repository gone: bin/eslint lints, prints its version, and the root
// verifies (must-show 2 of issue #33).
func TestESLintLock(t *testing.T) {
	tree := eslintTree(t)
	testfs.NeedTools(t, "node", "cp")
	mnt := testfs.Mount(t, "xfs")
	w := &world{t: t, bin: testfs.PkgBinary(t), repo: filepath.Join(mnt, "repo"), cache: filepath.Join(mnt, "cache"),
		root: filepath.Join(mnt, "root"), home: t.TempDir()}
	project, npmCache := filepath.Join(mnt, "project"), filepath.Join(mnt, "npm")
	if err := os.Mkdir(project, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"package.json", "package-lock.json"} {
		testfs.Run(t, "", "cp", filepath.Join(tree.Dir, name), project)
	}
	npmCacheOf(t, npmCache, tree.Tarballs[2:]) // the first two are downloaded

	lock, pkgLock := filepath.Join(project, "package-lock.json"), filepath.Join(project, "pkg.lock")
	n := len(tree.Tarballs)
	out := w.run("repo", "add", w.repo, "--from", lock, "--npm-cache", npmCache)
	if want := fmt.Sprintf("%d packages, %d new, 2 downloaded", n, n); !strings.Contains(out, want) {
		t.Errorf("repo add --from: no %q in\n%s", want, out)
	}
	if want := "wrote " + pkgLock + ": " + fmt.Sprint(n) + " packages, requires eslint@npm:" + eslintVersion; !strings.Contains(out, want) {
		t.Errorf("repo add --from: no %q in\n%s", want, out)
	}
	// The two downloaded come from the repository now.
	if out := w.run("--offline", "repo", "add", w.repo, "--from", lock, "--npm-cache", npmCache); !strings.Contains(out, fmt.Sprintf("%d packages, 0 new, 0 downloaded", n)) {
		t.Errorf("a second import, offline:\n%s", out)
	}

	// A first sync fills pkg's cache, as a CI job's first run; a later run restores that
	// cache into a fresh machine, where the repository is not.
	w.run("--root", w.root, "--cache", w.cache, "sync", "-f", pkgLock)
	restored := filepath.Join(mnt, "restored-cache")
	testfs.Run(t, "", "cp", "-a", "--reflink=auto", w.cache, restored)
	if err := os.Rename(w.repo, w.repo+".gone"); err != nil {
		t.Fatal(err)
	}
	w.root, w.cache = filepath.Join(mnt, "fresh-root"), restored
	if out := w.run("--root", w.root, "--cache", w.cache, "--offline", "sync", "-f", pkgLock); strings.Contains(out, "fetched") {
		t.Errorf("the offline sync fetched:\n%s", out)
	}
	var list struct {
		Packages []struct{ Name, Version string } `json:"packages"`
	}
	if err := json.Unmarshal([]byte(w.run("--root", w.root, "list", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	var visitorKeys []string
	for _, p := range list.Packages {
		if p.Name == "eslint-visitor-keys" {
			visitorKeys = append(visitorKeys, p.Version)
		}
	}
	if len(list.Packages) != n || len(visitorKeys) != 2 {
		t.Errorf("the fresh root holds %d packages, eslint-visitor-keys %v; want %d, two of those", len(list.Packages), visitorKeys, n)
	}
	w.eslintLints()
	version := exec.Command(filepath.Join(w.root, "bin", "eslint"), "--version")
	version.Env = w.env()
	if out := output(t, version); strings.TrimSpace(out) != "v"+eslintVersion {
		t.Errorf("bin/eslint --version: %q, want v%s", out, eslintVersion)
	}
	w.run("--root", w.root, "--cache", w.cache, "--offline", "verify")
}

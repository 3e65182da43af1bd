package main

import (
	"bytes"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// npmTgz is an npm tarball of name at version: package/package.json with deps as its
// dependencies, and package/index.js.
func npmTgz(t *testing.T, name, version string, deps map[string]string) []byte {
	meta, err := json.Marshal(map[string]any{"name": name, "version": version, "dependencies": deps})
	if err != nil {
		t.Fatal(err)
	}
	return gzipped(t, pax(t, tf("package/package.json", string(meta)), tf("package/index.js", "module.exports = "+fmt.Sprintf("%q", name+" "+version)+"\n")))
}

// sriOf is the sha512 integrity npm writes for data.
func sriOf(data []byte) string {
	sum := sha512.Sum512(data)
	return "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

// npmProject is a project whose lock names a@1.0.0, which depends on @s/b@^2, and @s/b
// 2.1.0: both served at url, @s/b's in the npm cache dir cache too.
type npmProject struct {
	lock, cache, url string
	a, b             []byte
}

func newNPMProject(t *testing.T, base string) *npmProject {
	p := &npmProject{lock: filepath.Join(base, "proj", "package-lock.json"), cache: filepath.Join(base, "npm"),
		a: npmTgz(t, "a", "1.0.0", map[string]string{"@s/b": "^2.0.0"}), b: npmTgz(t, "@s/b", "2.1.0", nil)}
	served := filepath.Join(base, "served")
	os.MkdirAll(served, 0o755)
	for name, data := range map[string][]byte{"a-1.0.0.tgz": p.a, "b-2.1.0.tgz": p.b} {
		if err := os.WriteFile(filepath.Join(served, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p.url = serve(t, served)
	sum := sha512.Sum512(p.b)
	h := hex.EncodeToString(sum[:])
	cached := filepath.Join(p.cache, "_cacache", "content-v2", "sha512", h[:2], h[2:4], h[4:])
	os.MkdirAll(filepath.Dir(cached), 0o755)
	if err := os.WriteFile(cached, p.b, 0o444); err != nil {
		t.Fatal(err)
	}
	p.write(t, p.b)
	return p
}

// write writes the project's lock, its @s/b's integrity that of b.
func (p *npmProject) write(t *testing.T, b []byte) {
	lock := map[string]any{"name": "proj", "lockfileVersion": 3, "packages": map[string]any{
		"":                  map[string]any{"name": "proj", "dependencies": map[string]string{"a": "^1.0.0"}},
		"node_modules/a":    map[string]any{"version": "1.0.0", "resolved": p.url + "/a-1.0.0.tgz", "integrity": sriOf(p.a), "dependencies": map[string]string{"@s/b": "^2.0.0"}},
		"node_modules/@s/b": map[string]any{"version": "2.1.0", "resolved": p.url + "/b-2.1.0.tgz", "integrity": sriOf(b)},
	}}
	data, _ := json.Marshal(lock)
	os.MkdirAll(filepath.Dir(p.lock), 0o755)
	if err := os.WriteFile(p.lock, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRepoAddFromNPMLock imports a package-lock.json: a downloaded, @s/b from npm's cache,
// both into the repository in one index write and into a lockfile beside the lock, which
// sync installs; a second import, offline, adds nothing.
func TestRepoAddFromNPMLock(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	p := newNPMProject(t, base)
	e := newEnv(t, base, dir)
	out, _ := e.ok("repo", "add", dir, "--from", p.lock, "--npm-cache", p.cache)
	lockfile := filepath.Join(filepath.Dir(p.lock), "pkg.lock")
	for _, want := range []string{"added @s/b 2.1.0: @s+b-2.1.0.tgz", "added a 1.0.0: a-1.0.0.tgz",
		"imported " + p.lock + " into " + dir + ": 2 packages, 2 new, 1 downloaded",
		"wrote " + lockfile + ": 2 packages, requires a@npm:1.0.0"} {
		if !strings.Contains(out, want+"\n") && !strings.Contains(out, want) {
			t.Errorf("repo add --from: no %q in\n%s", want, out)
		}
	}
	index, _ := os.ReadFile(filepath.Join(dir, "index.json"))
	if out, _ := e.ok("--offline", "repo", "add", dir, "--from", p.lock, "--npm-cache", p.cache); !strings.Contains(out, "2 packages, 0 new, 0 downloaded") {
		t.Errorf("a second import:\n%s", out)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "index.json")); !bytes.Equal(again, index) {
		t.Errorf("a second import changed the index")
	}
	e.ok("sync", "-f", lockfile)
	if got := e.installed(); got != "@s/b 2.1.0, a 1.0.0" {
		t.Errorf("sync of the imported lock installed %s", got)
	}
}

// TestRepoAddFromNPMLockRefuses: a tarball whose bytes are not its integrity's, a lock of
// npm 6, flags of one archive and a lockfile that cannot be written are refused, the
// repository unchanged.
func TestRepoAddFromNPMLockRefuses(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	p := newNPMProject(t, base)
	e := newEnv(t, base, dir)
	p.write(t, []byte("other bytes")) // @s/b's integrity is not its tarball's: npm's cache lacks it, the download differs
	old := filepath.Join(base, "old", "package-lock.json")
	os.MkdirAll(filepath.Dir(old), 0o755)
	os.WriteFile(old, []byte(`{"lockfileVersion": 1, "dependencies": {}}`), 0o644)
	for _, tt := range []struct {
		args   []string
		code   int
		stderr []string
	}{
		{[]string{"--from", p.lock, "--npm-cache", p.cache}, 1, []string{"node_modules/@s/b", p.url + "/b-2.1.0.tgz", "integrity is " + sriOf([]byte("other bytes")), "the bytes have " + sriOf(p.b), "pkg: hint: nothing was added: what the registry served is not the tarball the lock records"}},
		{[]string{"--from", p.lock, "--npm-cache", p.cache, "--offline"}, 1, []string{"import " + p.lock + ": node_modules/@s/b", "is in neither " + p.cache + " nor the repository", "pkg: hint: without --offline"}},
		{[]string{"--from", old}, 1, []string{"lockfileVersion 1", "pkg: hint: npm 7 and later"}},
		{[]string{"--from", p.lock, "--name", "a"}, 2, []string{"--name describes one archive"}},
		{[]string{"--from", p.lock, "extra"}, 2, []string{`unexpected argument "extra"`}},
		{[]string{"--lock", "x.lock", "a.tgz"}, 2, []string{"--lock goes with --from"}},
		{[]string{"--from", p.lock, "--npm-cache", p.cache, "--lock", filepath.Join(base, "missing", "x.lock")}, 1, []string{"write lockfile " + filepath.Join(base, "missing", "x.lock")}},
		{[]string{"--from", p.lock, "--npm-cache", p.cache, "--lock", base}, 1, []string{"write lockfile " + base}},
	} {
		_, stderr, code := e.pkg(append([]string{"repo", "add", dir}, tt.args...)...)
		for _, want := range tt.stderr {
			if code != tt.code || !strings.Contains(stderr, want) {
				t.Errorf("repo add %q: exit %d, %q; want %d and %q", tt.args, code, stderr, tt.code, want)
			}
		}
		if _, err := os.Stat(dir); err == nil {
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("repo add %q left %d files in %s", tt.args, len(entries), dir)
			}
		}
	}
}

// TestRepoAddFromNPMLockOldName imports a lock naming JSONStream, an old npm name with
// capitals that npm still installs (browserify's dependency), and its dependency through:
// sync installs both, and Node finds JSONStream from a script under the root.
func TestRepoAddFromNPMLockOldName(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	js, through := npmTgz(t, "JSONStream", "1.3.5", map[string]string{"through": ">=2.2.7 <3"}), npmTgz(t, "through", "2.3.8", nil)
	served := filepath.Join(base, "served")
	os.MkdirAll(served, 0o755)
	os.WriteFile(filepath.Join(served, "JSONStream-1.3.5.tgz"), js, 0o644)
	os.WriteFile(filepath.Join(served, "through-2.3.8.tgz"), through, 0o644)
	url := serve(t, served)
	lock := filepath.Join(base, "proj", "package-lock.json")
	data, _ := json.Marshal(map[string]any{"name": "proj", "lockfileVersion": 3, "packages": map[string]any{
		"":                        map[string]any{"name": "proj", "dependencies": map[string]string{"JSONStream": "1.3.5"}},
		"node_modules/JSONStream": map[string]any{"version": "1.3.5", "resolved": url + "/JSONStream-1.3.5.tgz", "integrity": sriOf(js), "dependencies": map[string]string{"through": ">=2.2.7 <3"}},
		"node_modules/through":    map[string]any{"version": "2.3.8", "resolved": url + "/through-2.3.8.tgz", "integrity": sriOf(through)},
	}})
	os.MkdirAll(filepath.Dir(lock), 0o755)
	if err := os.WriteFile(lock, data, 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, base, dir)
	out, _ := e.ok("repo", "add", dir, "--from", lock, "--npm-cache", filepath.Join(base, "npm"))
	if !strings.Contains(out, "added JSONStream 1.3.5: JSONStream-1.3.5.tgz") || !strings.Contains(out, "requires JSONStream@npm:1.3.5") {
		t.Errorf("repo add --from:\n%s", out)
	}
	e.ok("sync", "-f", filepath.Join(filepath.Dir(lock), "pkg.lock"))
	if got := e.installed(); got != "JSONStream 1.3.5, through 2.3.8" {
		t.Errorf("sync installed %s", got)
	}
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Error("node not installed (CI=true: this test must run it)")
		}
		return
	}
	script := filepath.Join(e.root, "lib", "app.js")
	os.WriteFile(script, []byte("console.log(require('JSONStream'));\n"), 0o644)
	if got, err := exec.Command("node", script).CombinedOutput(); err != nil || string(got) != "JSONStream 1.3.5\n" {
		t.Errorf("node %s: %v\n%s", script, err, got)
	}
}

// TestRepoAddFromNPMLockAbsentBin imports a lock one of whose tarballs names in its bin a
// file it lacks, as real ones do: the import adds it, without that command, and warns
// naming the package and the path, where refusing it refused the whole lock.
func TestRepoAddFromNPMLockAbsentBin(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	p := newNPMProject(t, base)
	p.b = gzipped(t, pax(t, tf("package/package.json", `{"name": "@s/b", "version": "2.1.0", "bin": {"b": "./gone.js"}}`),
		tf("package/index.js", "\n")))
	if err := os.WriteFile(filepath.Join(base, "served", "b-2.1.0.tgz"), p.b, 0o644); err != nil {
		t.Fatal(err)
	}
	p.write(t, p.b)
	e := newEnv(t, base, dir)
	out, stderr := e.ok("repo", "add", dir, "--from", p.lock, "--npm-cache", p.cache)
	if !strings.Contains(out, "2 packages, 2 new") || !strings.Contains(stderr, "pkg: warning: @s/b 2.1.0: ") ||
		!strings.Contains(stderr, `"package/gone.js"`) {
		t.Errorf("repo add --from: %s%s\nwant both added and a warning naming @s/b 2.1.0 and package/gone.js", out, stderr)
	}
}

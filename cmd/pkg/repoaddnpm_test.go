package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pkg/repo"
)

// TestRepoAddNPM publishes npm tarballs with no flags: the entry is what package.json
// says (kind npm, a scoped name, its bin map, its dependencies as npm ranges), a
// postinstall script gets a note naming the package, and a package.json that does not
// parse is refused naming the archive and the member.
func TestRepoAddNPM(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	tgz := func(name, manifest string) string {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(pax(t, td("package/"), tf("package/package.json", manifest), tf("package/cli.js", "#!/usr/bin/env node\n")))
		zw.Close()
		path := filepath.Join(base, name)
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	e := newEnv(t, base, dir)
	_, stderr := e.ok("repo", "add", dir, tgz("scoped.tgz", `{"name": "@acme/tool", "version": "1.2.3", "bin": {"acme": "./cli.js"},
		"dependencies": {"debug": "^4.3.1"}, "scripts": {"postinstall": "node build.js"}}`))
	for _, want := range []string{
		"pkg: note: @acme/tool 1.2.3 depends on debug@npm:^4.3.1, which " + dir + " does not offer (yet)\n",
		"pkg: note: @acme/tool 1.2.3 declares the postinstall script: pkg never runs install scripts",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("repo add: stderr %q lacks %q", stderr, want)
		}
	}
	ix := repo.ReadDir(dir)
	if len(ix.Packages) != 1 {
		t.Fatalf("index: %+v", ix)
	}
	p := ix.Packages[0]
	if p.Name != "@acme/tool" || p.Kind != repo.KindNPM || p.Archive != "@acme+tool-1.2.3.tgz" ||
		repo.JoinRequirements(p.Depends) != "debug@npm:^4.3.1" || len(p.Bin) != 1 || p.Bin[0].String() != "acme=package/cli.js" {
		t.Errorf("entry %+v", p)
	}
	if _, err := os.Stat(filepath.Join(dir, "@acme+tool-1.2.3.tgz")); err != nil {
		t.Error(err)
	}

	bad := tgz("bad.tgz", `{"name": "x", "version": "1.0.0",`)
	_, stderr, code := e.pkg("repo", "add", dir, bad)
	if code == 0 || !strings.Contains(stderr, bad+": package/package.json: ") {
		t.Errorf("repo add of a bad package.json: exit %d, %q", code, stderr)
	}
}

// TestHostileNamesCLI refuses scoped names that are not npm's on the command line, naming
// them, changing nothing: as a request, a removal, a repo add's --name, a repo remove.
func TestHostileNamesCLI(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	archive := filepath.Join(base, "x.tar")
	if err := os.WriteFile(archive, pax(t, td("package/"), tf("package/x.js", "x\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(base, "good")
	e := newEnv(t, base, good)
	e.ok("repo", "add", good, archive, "--name", "x", "--version", "1.0.0")
	e.ok("install", "x") // a root, so that remove looks at the name
	for _, name := range []string{"@../x", "@a/b/c", "@/b", "@a"} {
		for _, args := range [][]string{
			{"install", name}, {"install", name + "@npm:^1"}, {"remove", name}, {"info", name},
			{"repo", "add", dir, archive, "--name", name, "--version", "1.0.0"}, {"repo", "remove", dir, name},
		} {
			_, stderr, code := e.pkg(args...)
			if code == 0 || !strings.Contains(stderr, `"`+name+`"`) {
				t.Errorf("pkg %q: exit %d, stderr %q; want a refusal naming %q", args, code, stderr, name)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "index.json")); !os.IsNotExist(err) {
		t.Errorf("a refused repo add wrote the index: %v", err)
	}
}

// TestRepoAddNPMAbsentBin publishes an npm tarball whose package.json names a command
// file it lacks, as npm and pnpm install it: with a warning naming the package, its
// version and the file, quoted, the other commands installed; --bin naming that file is
// refused. Installed from the file, it is warned of alike.
func TestRepoAddNPMAbsentBin(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(pax(t, td("package/"), tf("package/package.json", `{"name": "tool", "version": "1.0.0", "bin": {"tool": "./cli.js", "gone": "./bin/gone.js"}}`),
		tf("package/cli.js", "#!/usr/bin/env node\n")))
	zw.Close()
	archive := filepath.Join(base, "tool.tgz")
	if err := os.WriteFile(archive, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, base, dir)
	if _, stderr, code := e.pkg("repo", "add", dir, archive, "--version", "0.9.0", "--bin", "gone=package/bin/gone.js"); code == 0 {
		t.Errorf("repo add --bin naming no file: exit 0, %q", stderr)
	}
	_, stderr := e.ok("repo", "add", dir, archive)
	if !strings.Contains(stderr, "pkg: warning: tool 1.0.0: ") || !strings.Contains(stderr, `"package/bin/gone.js"`) {
		t.Errorf("repo add: stderr %q, want a warning naming tool 1.0.0 and package/bin/gone.js", stderr)
	}
	local := newEnv(t, t.TempDir(), dir)
	_, stderr = local.ok("install", archive)
	if !strings.Contains(stderr, "pkg: warning: tool 1.0.0: ") || !strings.Contains(stderr, `"package/bin/gone.js"`) {
		t.Errorf("install %s: stderr %q, want a warning naming tool 1.0.0 and package/bin/gone.js", archive, stderr)
	}
	if _, err := os.Lstat(filepath.Join(local.root, "bin", "gone")); !os.IsNotExist(err) {
		t.Errorf("bin/gone of the file installed: %v, want none", err)
	}
	e.ok("install", "tool")
	if _, err := os.Stat(filepath.Join(e.root, "bin", "tool")); err != nil {
		t.Error(err)
	}
	if _, err := os.Lstat(filepath.Join(e.root, "bin", "gone")); !os.IsNotExist(err) {
		t.Errorf("bin/gone: %v, want none", err)
	}
}

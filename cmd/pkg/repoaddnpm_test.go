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
	ix, _ := repo.ReadDir(dir)
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

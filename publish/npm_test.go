package publish

import (
	"archive/tar"
	"bytes"
	"cmp"
	"compress/gzip"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pkg/pkgtest/testrepo"
	"pkg/repo"
)

// npmTarball writes, gzip'd as npm packs it, a tarball of package/package.json holding
// manifest and the other members given as name, contents, ..., and opens it.
func npmTarball(t *testing.T, manifest string, files ...string) *Archive {
	t.Helper()
	return npmTarballIn(t, "package", manifest, files...)
}

// npmTarballIn is npmTarball with the top directory top.
func npmTarballIn(t *testing.T, top, manifest string, files ...string) *Archive {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	files = append([]string{top + "/package.json", manifest}, files...)
	for i := 0; i < len(files); i += 2 {
		if err := tw.WriteHeader(&tar.Header{Name: files[i], Mode: 0o644, Size: int64(len(files[i+1])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(files[i+1]))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	path := filepath.Join(t.TempDir(), "x.tgz")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

func TestNPMEntry(t *testing.T) {
	npm := func(p repo.Package) repo.Package { p.Kind = repo.KindNPM; return p }
	for _, tt := range []struct {
		manifest string
		files    []string
		given    repo.Package
		want     repo.Package
		scripts  []string
	}{
		{manifest: `{"name": "mkdirp", "version": "1.0.4", "description": "Recursively mkdir,\nlike mkdir -p", "bin": "bin/cmd.js"}`, files: []string{"package/bin/cmd.js", "x"},
			want: npm(repo.Package{Name: "mkdirp", Version: "1.0.4", Summary: "Recursively mkdir,", Bin: testrepo.Commands("mkdirp=package/bin/cmd.js")})},
		{manifest: `{"name": "@scope/tool", "version": "2.0.0-rc.1", "bin": "./cli.js"}`, files: []string{"package/cli.js", "x"},
			want: npm(repo.Package{Name: "@scope/tool", Version: "2.0.0-rc.1", Bin: testrepo.Commands("tool=package/cli.js")})},
		{manifest: `{"name": "eslint", "version": "9.39.2", "bin": {"eslint": "./bin/eslint.js", "sub/x": "x.js"},
			"dependencies": {"debug": "^4.3.2", "@eslint/js": "9.39.2", "fsevents": "*", "bundled": "1"},
			"optionalDependencies": {"fsevents": "~2.3.2"}, "bundleDependencies": ["bundled"],
			"peerDependencies": {"jiti": "*", "typescript": ">=4.8.4 <6.0.0", "debug": "4"},
			"peerDependenciesMeta": {"jiti": {"optional": true}},
			"scripts": {"test": "x", "postinstall": "node install.js", "preinstall": "y"}}`,
			files: []string{"package/bin/eslint.js", "x", "package/x.js", "x"},
			want: npm(repo.Package{Name: "eslint", Version: "9.39.2", Bin: testrepo.Commands("eslint=package/bin/eslint.js", "x=package/x.js"),
				Depends: testrepo.Requires("@eslint/js@npm:9.39.2", "debug@npm:^4.3.2"), Optional: testrepo.Requires("fsevents@npm:~2.3.2"),
				Peers: testrepo.Requires("typescript@npm:>=4.8.4 <6.0.0")}),
			scripts: []string{"preinstall", "postinstall"}},
		{manifest: `{"name": "addon", "version": "1.0.0", "dependencies": {"a": "1"}, "bundleDependencies": true}`, files: []string{"package/binding.gyp", "{}"},
			want: npm(repo.Package{Name: "addon", Version: "1.0.0"}), scripts: []string{"binding.gyp"}},
		{manifest: `{"name": "dirbin", "version": "1.0.0", "directories": {"bin": "./tools"}}`,
			files: []string{"package/tools/a", "x", "package/tools/sub/b.js", "x", "package/tools/.hidden", "x", "package/other", "x"},
			want:  npm(repo.Package{Name: "dirbin", Version: "1.0.0", Bin: testrepo.Commands("package/tools/a", "package/tools/sub/b.js")})},
		{manifest: `{"name": "JSONStream", "version": "1.3.5", "bin": "./bin.js", "dependencies": {"jsonparse": "^1.2.0", "through": ">=2.2.7 <3", "Base64": "*"}}`, files: []string{"package/bin.js", "x"},
			want: npm(repo.Package{Name: "JSONStream", Version: "1.3.5", Bin: testrepo.Commands("JSONStream=package/bin.js"),
				Depends: testrepo.Requires("Base64@npm:*", "jsonparse@npm:^1.2.0", "through@npm:>=2.2.7 <3")})},
		{manifest: `{"name": "@esbuild/linux-x64", "version": "0.24.0", "os": ["linux"], "cpu": ["x64"]}`,
			want: npm(repo.Package{Name: "@esbuild/linux-x64", Version: "0.24.0", Platform: "linux-amd64"})},
		{manifest: `{"name": "@esbuild/linux-ppc64", "version": "0.24.0", "os": ["linux"], "cpu": ["ppc64"]}`,
			want: npm(repo.Package{Name: "@esbuild/linux-ppc64", Version: "0.24.0", Platform: "linux-ppc64le"})},
		{manifest: `{"name": "fsevents", "version": "2.3.3", "os": ["darwin"]}`,
			want: npm(repo.Package{Name: "fsevents", Version: "2.3.3", Platform: "darwin-amd64"})},
		{manifest: `{"name": "notwin", "version": "1.0.0", "os": ["!win32"], "cpu": "!arm"}`,
			want: npm(repo.Package{Name: "notwin", Version: "1.0.0"})},
		{manifest: `{"name": "x", "version": "1.0.0", "os": "linux", "cpu": ["x64", "arm64"]}`, given: repo.Package{Platform: "linux-arm64"},
			want: npm(repo.Package{Name: "x", Version: "1.0.0", Platform: "linux-arm64"})},
		{manifest: `{"name": "x", "version": "1.0.0", "dependencies": {"latest": "latest"}, "description": 7}`,
			given: repo.Package{Name: "y", Version: "2.0.0", Summary: "mine", Depends: []repo.Requirement{}},
			want:  npm(repo.Package{Name: "y", Version: "2.0.0", Depends: []repo.Requirement{}})},
	} {
		a := npmTarball(t, tt.manifest, tt.files...)
		got, err := a.Entry(tt.given, tt.given.Summary != "")
		if tt.given.Summary != "" {
			tt.want.Summary = tt.given.Summary
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) || !slices.Equal(a.Scripts(), tt.scripts) {
			t.Errorf("Entry of %s:\ngot  %+v, %v, scripts %q\nwant %+v, scripts %q", tt.manifest, got, err, a.Scripts(), tt.want, tt.scripts)
		}
	}
}

// TestNPMEntryTop reads a tarball whose top directory is not package/, as @types' are
// (estree/): its package.json and its commands' paths are in it.
func TestNPMEntryTop(t *testing.T) {
	a := npmTarballIn(t, "estree", `{"name": "@types/estree", "version": "1.0.8", "bin": "x.js", "dependencies": {"y": "^1"}}`, "estree/x.js", "x")
	p, err := a.Entry(repo.Package{}, false)
	if err != nil || p.Kind != repo.KindNPM || p.Name != "@types/estree" || binText(p) != "estree=estree/x.js" || repo.JoinRequirements(p.Depends) != "y@npm:^1" {
		t.Errorf("Entry = %+v, %v", p, err)
	}
	bad := npmTarballIn(t, "estree", `{"name": "@types/estree", "version": "1"}`)
	var me *ManifestError
	if _, err := bad.Entry(repo.Package{}, false); !errors.As(err, &me) || me.Member != "estree/package.json" || me.Field != "version" {
		t.Errorf("Entry of a bad version = %v, want a *ManifestError naming estree/package.json", err)
	}
}

func TestNPMEntryRefuses(t *testing.T) {
	for _, tt := range []struct{ manifest, field string }{
		{`{"name": "x", "version": "1.0.0",`, ""},
		{`{"name": "X+y", "version": "1.0.0"}`, "name"},
		{`{"name": "_X", "version": "1.0.0"}`, "name"},
		{`{"name": "@../x", "version": "1.0.0"}`, "name"},
		{`{"name": "@a/b/c", "version": "1.0.0"}`, "name"},
		{`{"name": "x", "version": "1.0"}`, "version"},
		{`{"name": "x", "version": "1.0.0", "bin": ["a"]}`, "bin"},
		{`{"name": "x", "version": "1.0.0", "dependencies": {"y": "latest"}}`, "dependencies"},
		{`{"name": "x", "version": "1.0.0", "dependencies": {"y": "git+https://github.com/a/b.git"}}`, "dependencies"},
		{`{"name": "x", "version": "1.0.0", "dependencies": {"y": "npm:z@^1"}}`, "dependencies"},
		{`{"name": "x", "version": "1.0.0", "dependencies": {"Y~z": "1"}}`, "dependencies"},
		{`{"name": "x", "version": "1.0.0", "optionalDependencies": {"y": "file:../y"}}`, "optionalDependencies"},
		{`{"name": "x", "version": "1.0.0", "peerDependencies": {"y": "workspace:*"}}`, "peerDependencies"},
		{`{"name": "x", "version": "1.0.0", "os": ["linux"], "cpu": ["x64", "arm64"]}`, "os, cpu"},
		{`{"name": "x", "version": "1.0.0", "cpu": [1]}`, "os, cpu"},
		{`{"name": "x", "version": "1.0.0", "bundleDependencies": "y"}`, "bundleDependencies"},
		{`{"name": "x", "version": "1.0.0", "dependencies": ["y"]}`, "dependencies"},
		{`{"name": "x", "version": "1.0.0", "dependencies": {"y": 1}}`, "dependencies"},
		{`{"name": 5, "version": "1.0.0"}`, "name"},
		{`{"name": "x", "version": "1.0.0", "directories": {"bin": 5}}`, "directories.bin"},
		{`{"name": "x", "version": "1.0.0", "peerDependenciesMeta": {"y": {"optional": "yes"}}}`, "peerDependenciesMeta.optional"},
	} {
		a := npmTarball(t, tt.manifest)
		_, err := a.Entry(repo.Package{}, false)
		var me *ManifestError
		if !errors.As(err, &me) || me.Field != tt.field || me.Archive != a.Location || me.Member != "package/package.json" {
			t.Errorf("Entry of %s = %v, want a *ManifestError naming %q", tt.manifest, err, tt.field)
		}
	}
}

// packed are real npm packages, packed by npm at test time: a scoped one, one whose top
// directory is not package/, a bin map, a bin string, a postinstall script with optionalDependencies, os and cpu for Linux and for
// another system, peerDependencies marked optional.
var packed = []struct {
	spec string
	want func(t *testing.T, p repo.Package, scripts []string)
}{
	{"JSONStream@1.3.5", func(t *testing.T, p repo.Package, scripts []string) { // an old npm name, with capitals
		if p.Name != "JSONStream" || binText(p) != "JSONStream=package/bin.js" || repo.JoinRequirements(p.Depends) != "jsonparse@npm:^1.2.0 through@npm:>=2.2.7 <3" {
			t.Errorf("JSONStream: %+v", p)
		}
	}},
	{"@eslint/js@9.39.2", func(t *testing.T, p repo.Package, scripts []string) {
		if p.Name != "@eslint/js" || p.Version != "9.39.2" || p.Bin != nil || p.Depends != nil || p.Platform != "" || scripts != nil {
			t.Errorf("@eslint/js: %+v, scripts %q", p, scripts)
		}
	}},
	{"eslint@9.39.2", func(t *testing.T, p repo.Package, scripts []string) {
		if binText(p) != "eslint=package/bin/eslint.js" || p.Peers != nil || scripts != nil ||
			!slices.ContainsFunc(p.Depends, func(r repo.Requirement) bool { return r.String() == "@eslint/js@npm:9.39.2" }) ||
			!slices.ContainsFunc(p.Depends, func(r repo.Requirement) bool { return r.String() == "eslint-visitor-keys@npm:^4.2.1" }) {
			t.Errorf("eslint: bin %q, depends %q, peers %q (jiti is optional), scripts %q", p.Bin, p.Depends, p.Peers, scripts)
		}
	}},
	{"@types/estree@1.0.8", func(t *testing.T, p repo.Package, scripts []string) {
		if p.Name != "@types/estree" || p.Bin != nil || p.Depends != nil { // its top directory is estree/
			t.Errorf("@types/estree: %+v", p)
		}
	}},
	{"mkdirp@1.0.4", func(t *testing.T, p repo.Package, scripts []string) {
		if binText(p) != "mkdirp=package/bin/cmd.js" || scripts != nil {
			t.Errorf("mkdirp: bin %q, scripts %q (postversion and postpublish are not run at install)", p.Bin, scripts)
		}
	}},
	{"esbuild@0.24.0", func(t *testing.T, p repo.Package, scripts []string) {
		if binText(p) != "esbuild=package/bin/esbuild" || !slices.Equal(scripts, []string{"postinstall"}) ||
			!slices.ContainsFunc(p.Optional, func(r repo.Requirement) bool { return r.String() == "@esbuild/linux-x64@npm:0.24.0" }) || p.Depends != nil {
			t.Errorf("esbuild: bin %q, optional %q, depends %q, scripts %q", p.Bin, p.Optional, p.Depends, scripts)
		}
	}},
	{"@esbuild/linux-x64@0.24.0", func(t *testing.T, p repo.Package, scripts []string) {
		if p.Platform != "linux-amd64" || p.Bin != nil {
			t.Errorf("@esbuild/linux-x64: platform %q, bin %q", p.Platform, p.Bin)
		}
	}},
	{"@esbuild/darwin-arm64@0.24.0", func(t *testing.T, p repo.Package, scripts []string) {
		if p.Platform != "darwin-arm64" {
			t.Errorf("@esbuild/darwin-arm64: platform %q", p.Platform)
		}
	}},
}

// TestAddPacked publishes real npm tarballs with no flags (npm pack at test time, kept in
// $PKG_TEST_NPM/pack, else /var/tmp/pkg-test-npm/pack, between runs): each is an entry of
// kind npm as its package.json says, its archive named with repo.FileName.
func TestAddPacked(t *testing.T) {
	dir := filepath.Join(cmp.Or(os.Getenv("PKG_TEST_NPM"), "/var/tmp/pkg-test-npm"), "pack")
	repoDir := t.TempDir()
	for _, pk := range packed {
		a, err := Open(t.Context(), npmPack(t, dir, pk.spec))
		if err != nil {
			t.Fatal(err)
		}
		p, err := a.Entry(repo.Package{}, false)
		if err != nil {
			t.Fatalf("%s: %v", pk.spec, err)
		}
		res, err := Add(t.Context(), repoDir, a, p, false, nil)
		a.Close()
		if err != nil {
			t.Fatalf("%s: %v", pk.spec, err)
		}
		archive := repo.FileName(res.Package.Name) + "-" + res.Package.Version + ".tgz"
		if pl := res.Package.Platform; pl != "" {
			archive = strings.TrimSuffix(archive, ".tgz") + "-" + pl + ".tgz"
		}
		if res.Package.Kind != repo.KindNPM || res.Package.Key() != pk.spec || res.Package.Archive != archive {
			t.Errorf("%s: added %+v", pk.spec, res.Package)
		}
		pk.want(t, res.Package, res.Scripts)
	}
	ix := repo.ReadDir(repoDir)
	if len(ix.Packages) != len(packed) {
		t.Errorf("the index has %d entries, want %d", len(ix.Packages), len(packed))
	}
}

// binText is p's bin as NAME=PATH, space-separated.
func binText(p repo.Package) string {
	var s []string
	for _, c := range p.Bin {
		s = append(s, c.Name+"="+c.Path)
	}
	return strings.Join(s, " ")
}

// npmPack returns the tarball npm packs for spec, packing it into dir unless it is there.
func npmPack(t *testing.T, dir, spec string) string {
	t.Helper()
	at := strings.LastIndexByte(spec, '@')
	file := filepath.Join(dir, strings.ReplaceAll(strings.TrimPrefix(spec[:at], "@"), "/", "-")+"-"+spec[at+1:]+".tgz")
	if _, err := os.Stat(file); err == nil {
		return file
	}
	if _, err := exec.LookPath("npm"); err != nil && os.Getenv("CI") == "" {
		t.Skip("no npm")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("npm", "pack", "--silent", "--ignore-scripts", "--pack-destination", dir, spec)
	cmd.Dir = t.TempDir()
	if out, err := cmd.CombinedOutput(); err != nil && os.Getenv("CI") == "" {
		t.Skipf("npm pack %s (offline?): %v\n%s", spec, err, out)
	} else if err != nil {
		t.Fatalf("npm pack %s: %v\n%s", spec, err, out)
	}
	return file
}

// TestAddPackedAbsentBin publishes a real npm tarball whose package.json names command
// files it lacks (broken-link-checker 0.4.3's bin/ and blc/, left out of the tarball), as
// npm installs it: without those commands, each named in Added.Absent.
func TestAddPackedAbsentBin(t *testing.T) {
	dir := filepath.Join(cmp.Or(os.Getenv("PKG_TEST_NPM"), "/var/tmp/pkg-test-npm"), "pack")
	a, err := Open(t.Context(), npmPack(t, dir, "broken-link-checker@0.4.3"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	p, err := a.Entry(repo.Package{}, false)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Add(t.Context(), t.TempDir(), a, p, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []repo.Command{{Name: "blc", Path: "package/bin/broken-link-checker"}, {Name: "broken-link-checker", Path: "package/blc/broken-link-checker"}}
	if len(res.Package.Bin) != 0 || !slices.Equal(res.Absent, want) {
		t.Errorf("added with bin %q, absent %q; want none, absent %q", res.Package.Bin, res.Absent, want)
	}
}

func FuzzNPMEntry(f *testing.F) {
	for _, m := range []string{
		`{"name": "eslint", "version": "9.39.2", "bin": {"eslint": "./bin/eslint.js"}, "dependencies": {"debug": "^4.3.2"}, "peerDependencies": {"jiti": "*"}, "peerDependenciesMeta": {"jiti": {"optional": true}}}`,
		`{"name": "@esbuild/linux-x64", "version": "0.24.0", "os": ["linux"], "cpu": ["x64"], "scripts": {"postinstall": "x"}}`,
		`{"name": "x", "version": "1.0.0", "bin": "cli.js", "bundleDependencies": true, "optionalDependencies": {"y": "1.x || 2"}}`,
	} {
		f.Add([]byte(m))
	}
	a := &Archive{Location: "x.tgz"}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, _, err := a.npmEntry(repo.Package{}, "package", data, false)
		var me *ManifestError
		switch {
		case err != nil && !errors.As(err, &me):
			t.Fatalf("npmEntry(%q) = %v, not a *ManifestError", data, err)
		case err == nil && (p.Kind != repo.KindNPM || !repo.ValidName(p.Name) || repo.CheckNPMVersion(p.Version) != nil):
			t.Fatalf("npmEntry(%q) = %+v", data, p)
		}
	})
}

// TestAddAbsentBin publishes an npm package whose package.json names a command file its
// tarball lacks, as npm and pnpm install it: without that command, which Added.Absent
// names. A command given for that file is refused, and the index is as it was.
func TestAddAbsentBin(t *testing.T) {
	a := npmTarball(t, `{"name": "x", "version": "1.0.0", "bin": {"x": "cli.js", "gone": "./bin/gone.js"}}`, "package/cli.js", "x")
	p, err := a.Entry(repo.Package{}, false)
	if err != nil || binText(p) != "x=package/cli.js" || !slices.Equal(a.Absent(), []repo.Command{{Name: "gone", Path: "package/bin/gone.js"}}) {
		t.Fatalf("Entry = bin %q, absent %q, %v; want x=package/cli.js, gone absent", binText(p), a.Absent(), err)
	}
	dir := t.TempDir()
	res, err := Add(t.Context(), dir, a, p, false, nil)
	if err != nil || binText(res.Package) != "x=package/cli.js" || !slices.Equal(res.Absent, a.Absent()) {
		t.Fatalf("Add = %+v, %v", res, err)
	}
	index, _ := os.ReadFile(filepath.Join(dir, "index.json"))

	given := npmTarball(t, `{"name": "x", "version": "1.0.1", "bin": {"x": "cli.js"}}`, "package/cli.js", "x")
	p, err = given.Entry(repo.Package{Bin: testrepo.Commands("gone=package/bin/gone.js")}, false)
	if err != nil || given.Absent() != nil {
		t.Fatalf("Entry with a command given = %v, absent %q", err, given.Absent())
	}
	if _, err := Add(t.Context(), dir, given, p, false, nil); err == nil {
		t.Errorf("Add of a given command with no file succeeded")
	}
	if now, _ := os.ReadFile(filepath.Join(dir, "index.json")); !bytes.Equal(now, index) {
		t.Errorf("a refused add changed the index")
	}
}

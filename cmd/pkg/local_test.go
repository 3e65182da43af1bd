package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"pkg/internal/testfs"
	"pkg/report"
)

// writeFile writes data to dir/name and returns its path.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// gzipped returns data compressed with gzip.
func gzipped(t *testing.T, data []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// debOf returns a .deb (ar(5): debian-binary, control.tar.gz, data.tar.gz) whose control
// file is control and whose data is the tar data.
func debOf(t *testing.T, control string, data []byte) []byte {
	var b bytes.Buffer
	b.WriteString("!<arch>\n")
	for _, m := range []struct {
		name string
		data []byte
	}{
		{"debian-binary", []byte("2.0\n")},
		{"control.tar.gz", gzipped(t, pax(t, tf("./control", control)))},
		{"data.tar.gz", gzipped(t, data)},
	} {
		fmt.Fprintf(&b, "%-16s%-12d%-6d%-6d%-8o%-10d`\n", m.name, 0, 0, 0, 0o644, len(m.data))
		b.Write(m.data)
		if len(m.data)%2 == 1 {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// TestInstallLocalArchive installs local archive files as apt and npm do: a .tar.gz named
// NAME-VERSION, with a dependency from the repository; a .deb by its control file; one
// given by an absolute path and named by flags. Each is recorded with its file, shown by
// list and info, verified, held by upgrade and outdated until a repository's version is
// asked for by its repository's name, and removed.
func TestInstallLocalArchive(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "lib", "1.0")
	addPackage(t, dir, "tool", "2.0")
	e := newEnv(t, base, dir)
	files := t.TempDir()
	t.Chdir(files)
	tgz := writeFile(t, files, "tool-1.0.tar.gz", gzipped(t, packageTar(t, "tool", "1.0", 'l')))

	e.ok("install", "./tool-1.0.tar.gz", "--depends", "lib")
	if out, _ := e.ok("list"); !strings.Contains(out, "tool  1.0  3 files  64.0 KiB  from "+tgz+"\n") || !strings.HasPrefix(out, "lib ") {
		t.Errorf("list:\n%s", out)
	}
	if out, _ := e.ok("info", "tool"); !strings.Contains(out, "from:      "+tgz+" (a local archive file: upgrade leaves it)\n") {
		t.Errorf("info tool:\n%s", out)
	}
	if got := decode[report.List](t, "list --json", mustOut(e.ok("list", "--json")), "pkg.list/1"); len(got.Packages) != 2 || got.Packages[1].Origin != tgz || got.Packages[0].Origin != "" {
		t.Errorf("list --json: %+v", got)
	}
	if b, err := os.ReadFile(filepath.Join(e.root, "bin", "tool")); err != nil || string(b) != "#!/bin/sh\necho tool 1.0\n" {
		t.Errorf("bin/tool: %q, %v", b, err)
	}
	e.ok("verify")

	// Held: upgrade and outdated leave it, saying so, and so does install by name; install
	// REPO/NAME takes the repository's. The file's directory is named as no repository.
	kept := "kept tool at 1.0: installed from the local archive file " + tgz + " (newest 2.0)\n"
	if out, _ := e.ok("upgrade"); out != kept+"nothing to upgrade\n" {
		t.Errorf("upgrade: %q", out)
	}
	if out, _ := e.ok("upgrade", "tool"); out != kept+"nothing to upgrade\n" {
		t.Errorf("upgrade tool: %q", out)
	}
	if out, _ := e.ok("outdated"); !strings.Contains(out, "tool  1.0        1.0      2.0\n") ||
		!strings.HasSuffix(out, "tool is installed from the local archive file "+tgz+": upgrade leaves it\n") {
		t.Errorf("outdated: %q", out)
	}
	if got := decode[report.Outdated](t, "outdated --json", mustOut(e.ok("outdated", "--json")), report.OutdatedSchema); len(got.Packages) != 1 || got.Packages[0].Origin != tgz || got.Packages[0].Newest != "2.0" {
		t.Errorf("outdated --json: %+v", got)
	}
	if _, errOut, code := e.pkg("install", "tool=2.0"); code != 1 || !strings.Contains(errOut, "(local archive file "+tgz+"; repository file://"+dir+"/)") {
		t.Errorf("install tool=2.0: exit %d, %q; want the local file named apart from the repository", code, errOut)
	}
	if _, errOut, code := e.pkg("--repo", "", "install", "nope"); code != 1 || !strings.Contains(errOut, "(local archive file "+tgz+"; no repository in use)") {
		t.Errorf("install nope with no repository: exit %d, %q; want the local file named and no repository", code, errOut)
	}
	if out, _ := e.ok("install", "tool"); out != "tool 1.0 is already installed\n" {
		t.Errorf("install tool: %q", out)
	}
	e.ok("install", "repo/tool")
	if out, _ := e.ok("list"); !strings.Contains(out, "tool  2.0  3 files  64.0 KiB\n") {
		t.Errorf("list after install repo/tool:\n%s", out)
	}

	// A .deb, named by its control file, in place of the repository's version.
	deb := writeFile(t, files, "whatever.deb", debOf(t, "Package: tool\nVersion: 3.0\nDescription: a tool\n",
		pax(t, td("./usr/"), td("./usr/bin/"), moded(tf("./usr/bin/tool", "#!/bin/sh\necho deb\n"), 0o755))))
	e.ok("install", "./whatever.deb")
	if out, _ := e.ok("info", "tool"); !strings.Contains(out, "version:   3.0\nsummary:   a tool\nbin:       usr/bin/tool\n") || !strings.Contains(out, "from:      "+deb) {
		t.Errorf("info tool after the .deb:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(e.root, "bin", "tool")); err != nil || string(b) != "#!/bin/sh\necho deb\n" {
		t.Errorf("bin/tool from the .deb: %q, %v", b, err)
	}

	// An absolute path whose name says nothing, named by flags.
	odd := writeFile(t, files, "download", packageTar(t, "other", "1", 'o'))
	e.ok("install", odd, "--name", "other", "--version", "0.9")
	if out, _ := e.ok("list"); !strings.Contains(out, "other  0.9  3 files  64.0 KiB  from "+odd+"\n") {
		t.Errorf("list after installing %s:\n%s", odd, out)
	}
	e.ok("verify")
	e.ok("remove", "tool", "other", "lib")
	if out, _ := e.ok("list"); out != "" {
		t.Errorf("list after remove: %q", out)
	}
}

// localNPMEnv returns an environment whose repository holds ms 2.1.3, and a directory of
// local files, the working directory.
func localNPMEnv(t *testing.T) (*env, string) {
	base := t.TempDir()
	addNPM(t, base, "ms", "2.1.3")
	e := newEnv(t, base, filepath.Join(base, "repo"))
	files := t.TempDir()
	t.Chdir(files)
	return e, files
}

// TestInstallLocalNPM installs a local npm tarball as npm installs one, and as repo add
// takes it: named by its package.json (npm pack names @s/tool's file s-tool-1.0.0.tgz),
// its dependencies from the repositories, its commands linked, its install scripts noted.
// It was installed as a plain tree at lib/node_modules/s-tool, without its dependencies,
// so that require() failed.
func TestInstallLocalNPM(t *testing.T) {
	e, files := localNPMEnv(t)
	writeFile(t, files, "s-tool-1.0.0.tgz", gzipped(t, pax(t,
		tf("package/package.json", `{"name":"@s/tool","version":"1.0.0","bin":{"tool":"cli.js"},"dependencies":{"ms":"^2.1.0"},"scripts":{"postinstall":"node build.js"}}`),
		tf("package/cli.js", "#!/usr/bin/env node\n"))))
	_, errOut := e.ok("install", "./s-tool-1.0.0.tgz")
	if !strings.Contains(errOut, "@s/tool 1.0.0 declares the postinstall script") {
		t.Errorf("install of an npm tarball declaring postinstall: stderr %q, want a note naming the script", errOut)
	}
	if out, _ := e.ok("list"); !strings.Contains(out, "@s/tool  1.0.0") || !strings.Contains(out, "ms       2.1.3") {
		t.Errorf("list after installing the npm tarball:\n%s", out)
	}
	for _, path := range []string{"lib/node_modules/@s/tool/cli.js", "bin/tool", "lib/node_modules/.pnpm/@s+tool@1.0.0/node_modules/ms/index.js"} {
		if _, err := os.Stat(filepath.Join(e.root, path)); err != nil {
			t.Errorf("after installing the npm tarball: %v", err)
		}
	}
	e.ok("verify")
}

// TestInstallLocalNPMBeside installs a local npm tarball of another version of an npm
// name installed beside it, newer or older (npm pack ms@2.1.2 beside ms 2.1.3 from a
// repository), as npm instances are, each asked for: it said the installed version was
// installed already, and installed nothing.
func TestInstallLocalNPMBeside(t *testing.T) {
	for _, tt := range []struct{ installed, local string }{{"1.0.0", "2.0.0"}, {"2.0.0", "1.0.0"}} {
		t.Run(tt.local, func(t *testing.T) {
			base := t.TempDir()
			addNPM(t, base, "x", tt.installed)
			e := newEnv(t, base, filepath.Join(base, "repo"))
			e.ok("install", "x")
			files := t.TempDir()
			t.Chdir(files)
			file := "x-" + tt.local + ".tgz"
			writeFile(t, files, file, gzipped(t, pax(t, tf("package/package.json", `{"name":"x","version":"`+tt.local+`"}`), tf("package/index.js", tt.local+"\n"))))
			e.ok("install", "./"+file)
			if got, asked := e.installed(), e.requested(); got != "x 1.0.0, x 2.0.0" || asked != got {
				t.Errorf("after installing %s beside x %s: installed %q, asked for %q; want both, each asked for", file, tt.installed, got, asked)
			}
			e.ok("verify")
		})
	}
}

// TestInstallLocalRelease installs a release tarball whose one top directory holds a
// package.json and its node_modules (code-server's) as a plain tree, as before npm pack's
// tarballs were installed as npm's: taken as npm's, it needed express from the
// repositories, which hold none.
func TestInstallLocalRelease(t *testing.T) {
	e, files := localNPMEnv(t)
	app := tf("app-1.0.0/bin/app", "#!/bin/sh\necho app\n")
	app.hdr.Mode = 0o755
	writeFile(t, files, "app-1.0.0.tgz", gzipped(t, pax(t,
		tf("app-1.0.0/package.json", `{"name":"app","version":"1.0.0","dependencies":{"express":"^4"}}`), app,
		tf("app-1.0.0/node_modules/express/package.json", `{"name":"express","version":"4.21.2"}`))))
	e.ok("install", "./app-1.0.0.tgz", "--bin", "app=app-1.0.0/bin/app")
	if got := e.installed(); got != "app 1.0.0" {
		t.Errorf("installed after the release tarball: %q, want app 1.0.0 alone", got)
	}
	if out, err := exec.Command(filepath.Join(e.root, "bin", "app")).Output(); err != nil || string(out) != "app\n" {
		t.Errorf("bin/app: %q, %v", out, err)
	}
}

// TestInstallLocalNPMOverPlain refuses to install npm pack's tarball as npm's where the
// same file's package is installed as a plain tree (as pkg installed such a file before it
// took npm's), naming it and leaving the root as it was: it installed a second "tool
// 1.0.0", not asked for, its lib/node_modules/tool link not made, and "pkg remove tool"
// could not tell the two apart.
func TestInstallLocalNPMOverPlain(t *testing.T) {
	e, files := localNPMEnv(t)
	tarball := func(manifest string) []byte {
		return gzipped(t, pax(t, tf("package/package.json", manifest), tf("package/index.js", "module.exports = 1\n")))
	}
	writeFile(t, files, "tool-1.0.0.tgz", tarball(`{"description":"no name, so a plain tree"}`))
	e.ok("install", "./tool-1.0.0.tgz")
	if _, err := os.Stat(filepath.Join(e.root, "lib/node_modules/tool/index.js")); err != nil {
		t.Fatalf("the plain install: %v", err)
	}
	writeFile(t, files, "tool-1.0.0.tgz", tarball(`{"name":"tool","version":"1.0.0","dependencies":{"ms":"^2.1.0"}}`))
	_, errOut, code := e.pkg("install", "./tool-1.0.0.tgz")
	if code == 0 || !strings.Contains(errOut, "'"+e.cmd("remove tool")+"' first") {
		t.Errorf("install of npm's tarball over its plain install: exit %d, stderr %q, want a refusal saying to remove tool", code, errOut)
	}
	if got, asked := e.installed(), e.requested(); got != "tool 1.0.0" || asked != "tool 1.0.0" {
		t.Errorf("after the refusal: installed %q, asked for %q, want tool 1.0.0 as it was", got, asked)
	}
	e.ok("remove", "tool")
	e.ok("install", "./tool-1.0.0.tgz")
	if got, asked := e.installed(), e.requested(); got != "ms 2.1.3, tool 1.0.0" || asked != "tool 1.0.0" {
		t.Errorf("after removing the plain one: installed %q, asked for %q, want ms and tool, tool asked for", got, asked)
	}
	if _, err := os.Stat(filepath.Join(e.root, "lib/node_modules/tool/index.js")); err != nil {
		t.Errorf("the npm install: %v", err)
	}
}

// TestInstallLocalDebDepends notes a local .deb's Pre-Depends with its Depends, both
// Debian's names it does not install, as repo add takes both: python3-minimal needs
// python3.11-minimal by Pre-Depends, which the note left out, and a .deb with Pre-Depends
// alone got no note.
func TestInstallLocalDebDepends(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "lib", "1.0")
	e := newEnv(t, base, dir)
	files := t.TempDir()
	t.Chdir(files)
	data := pax(t, td("./usr/"), td("./usr/bin/"), moded(tf("./usr/bin/tool", "#!/bin/sh\n"), 0o755))
	for _, tt := range []struct{ relations, want string }{
		{"Pre-Depends: libc6 (>= 2.34)\n", "libc6 (>= 2.34)"},
		{"Pre-Depends: python3.11-minimal (>= 3.11.2-1~)\nDepends: dpkg (>= 1.13.20)\n", "python3.11-minimal (>= 3.11.2-1~), dpkg (>= 1.13.20)"},
	} {
		writeFile(t, files, "tool.deb", debOf(t, "Package: tool\nVersion: 1.0\n"+tt.relations, data))
		_, errOut := e.ok("install", "./tool.deb")
		if want := "./tool.deb depends on " + tt.want + ": Debian's names"; !strings.Contains(errOut, want) {
			t.Errorf("install of a .deb with %q: stderr %q, want a note %q", tt.relations, errOut, want)
		}
		e.ok("remove", "tool")
	}
}

// TestInstallLocalArchiveRefused checks what install refuses of local archive files, each
// naming the file and changing neither the root nor the cache: a missing file, one whose
// name gives no package name and version, a hostile archive, a gzip of a text file, a
// command that is not in it, the flags without a file, and --name for two files.
func TestInstallLocalArchiveRefused(t *testing.T) {
	base := t.TempDir()
	e := newEnv(t, base, "")
	e.initRoot()
	files := t.TempDir()
	t.Chdir(files)
	writeFile(t, files, "noversion.tar", packageTar(t, "tool", "1.0", 'x'))
	writeFile(t, files, "evil-1.0.tar", pax(t, tf("../outside", "x")))
	writeFile(t, files, "tool-1.0.tar", packageTar(t, "tool", "1.0", 'x'))
	writeFile(t, files, "text-1.0.tar.gz", gzipped(t, []byte("localhost\n")))
	if err := unix.Mkfifo(filepath.Join(files, "fifo-1.0.tar"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := rootTree(t, e.root)
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"./missing-1.0.tar.gz"}, 1, "install: stat ./missing-1.0.tar.gz: no such file or directory\n"},
		{[]string{"./fifo-1.0.tar"}, 1, "install: open ./fifo-1.0.tar: a named pipe (FIFO), not a regular file\n"},
		{[]string{"./"}, 1, "install: open ./: a directory, not a regular file\n"},
		{[]string{"noversion.tar"}, 1, "install: archive noversion.tar: no package name and version"},
		{[]string{"./evil-1.0.tar"}, 1, `install: ./evil-1.0.tar: member "../outside": path escapes the package`},
		{[]string{"./text-1.0.tar.gz"}, 1, "install: ./text-1.0.tar.gz: not a tar archive: its gz data hold 10 bytes, less than a tar header\n"},
		{[]string{"./tool-1.0.tar", "--bin", "bin/nothere"}, 1, `install: archive ./tool-1.0.tar: bin "bin/nothere"`},
		{[]string{"tool", "--name", "tool"}, 2, "install: --name, --version, --depends, --bin and --lib describe a local archive file, and none is given"},
		{[]string{"./tool-1.0.tar", "tool-1.0.tar", "--name", "x"}, 2, "install: --name and --version describe one local archive file, and 2 are given"},
	} {
		_, stderr, code := e.pkg(append([]string{"install"}, tt.args...)...)
		if code != tt.code || !strings.HasPrefix(stderr, "pkg: "+tt.want) {
			t.Errorf("install %v: exit %d, %q; want %d and %q", tt.args, code, stderr, tt.code, tt.want)
		}
	}
	testfs.SameTree(t, "root", rootTree(t, e.root), root)
	if _, err := os.Stat(e.cache); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the cache was made: %v", err)
	}
	checkDBEmpty(t, e.root)
}

// TestInstallLocalArchiveOffline installs a local archive file with no repository, offline,
// and a dry run of it, which changes nothing; with the cache emptied, a reinstall reads the
// file again.
func TestInstallLocalArchiveOffline(t *testing.T) {
	e := newEnv(t, t.TempDir(), "")
	tar := writeFile(t, t.TempDir(), "tool-1.0.tar", packageTar(t, "tool", "1.0", 'x'))
	e.initRoot()
	root := rootTree(t, e.root)
	if out, _ := e.ok("--offline", "install", "--dry-run", tar); !strings.Contains(out, "tool") {
		t.Errorf("install --dry-run: %q", out)
	}
	testfs.SameTree(t, "root", rootTree(t, e.root), root)
	e.ok("--offline", "install", tar)
	if out, _ := e.ok("list"); !strings.HasPrefix(out, "tool  1.0  ") {
		t.Errorf("list: %q", out)
	}
	e.ok("cache", "clean")
	if err := os.WriteFile(filepath.Join(e.root, "pkgs", "tool", "bin", "tool"), []byte("changed"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.ok("--offline", "install", "--reinstall", "tool")
	e.ok("verify")
	// Gone, the file cannot be read again: the hint says what to do.
	if err := os.Rename(tar, tar+".moved"); err != nil {
		t.Fatal(err)
	}
	e.ok("cache", "clean")
	_, stderr, code := e.pkg("install", "--reinstall", "tool")
	if want := "pkg: hint: put " + tar + " back as it was, or take a repository's version with '" + e.cmd("install REPO/NAME") + "'\n"; code != 1 || !strings.HasSuffix(stderr, want) {
		t.Errorf("reinstall with the file gone: exit %d, %q; want the hint %q", code, stderr, want)
	}
}

// TestInstallLocalArchiveRebuilt gives install a local archive file again, rebuilt at the
// same name and version: the file given is what was asked for, so it replaces the one
// installed, saying from which file; given again unchanged, it is already installed.
func TestInstallLocalArchiveRebuilt(t *testing.T) {
	e := newEnv(t, t.TempDir(), "")
	tar := writeFile(t, t.TempDir(), "tool-1.0.tar", packageTar(t, "tool", "1.0", 'x'))
	e.ok("install", tar)
	writeFile(t, filepath.Dir(tar), "tool-1.0.tar", pax(t, moded(tf("bin/tool", "#!/bin/sh\necho rebuilt\n"), 0o755)))
	if out, _ := e.ok("install", "--dry-run", tar); !strings.HasPrefix(out, "replace tool 1.0 (requested; ") {
		t.Errorf("install --dry-run of the rebuilt file: %q", out)
	}
	if out, _ := e.ok("install", tar); !strings.Contains(out, "replaced tool 1.0 with the archive "+tar+": 1 file") {
		t.Errorf("install of the rebuilt file: %q", out)
	}
	if b, err := os.ReadFile(filepath.Join(e.root, "bin", "tool")); err != nil || string(b) != "#!/bin/sh\necho rebuilt\n" {
		t.Errorf("bin/tool after the rebuilt file: %q, %v", b, err)
	}
	e.ok("verify")
	if out, _ := e.ok("install", tar); out != "tool 1.0 is already installed\n" {
		t.Errorf("install of the same file again: %q", out)
	}
}

// TestInstallLocalArchiveOlder installs a local archive file of an older version than the
// one installed, as `apt install ./old.deb` downgrades to it: the file takes the
// package's place, recorded with it. It said the newer version installed "is already
// installed" and left it, exit 0, the file unused.
func TestInstallLocalArchiveOlder(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "tool", "2.0")
	e := newEnv(t, base, dir)
	e.ok("install", "tool")
	files := t.TempDir()
	t.Chdir(files)
	deb := writeFile(t, files, "tool_1.0_amd64.deb", debOf(t, "Package: tool\nVersion: 1.0\nDescription: a tool\n",
		pax(t, td("./usr/"), td("./usr/bin/"), moded(tf("./usr/bin/tool", "#!/bin/sh\necho deb 1.0\n"), 0o755))))

	if out, _ := e.ok("install", "--dry-run", "./tool_1.0_amd64.deb"); !strings.HasPrefix(out, "downgrade tool 2.0 to 1.0 (requested; ") {
		t.Errorf("install --dry-run of the older file: %q", out)
	}
	if out, _ := e.ok("install", "./tool_1.0_amd64.deb"); !strings.Contains(out, "downgraded tool 2.0 to 1.0") {
		t.Errorf("install of the older file: %q", out)
	}
	if out, _ := e.ok("list"); !strings.Contains(out, "tool  1.0  1 file  23 B  from "+deb+"\n") {
		t.Errorf("list after the older file:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(e.root, "bin", "tool")); err != nil || string(b) != "#!/bin/sh\necho deb 1.0\n" {
		t.Errorf("bin/tool after the older file: %q, %v", b, err)
	}
	e.ok("verify")
	if out, _ := e.ok("install", "./tool_1.0_amd64.deb"); out != "tool 1.0 is already installed\n" {
		t.Errorf("install of the same file again: %q", out)
	}
}

package publish

import (
	"archive/tar"
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"pkg/pkgtest/testrepo"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pkg/fetch"
	"pkg/repo"
	"pkg/tarutil"
)

// TestSplitFileName checks the package name and version a local archive's file name gives.
func TestSplitFileName(t *testing.T) {
	for _, tt := range []struct{ file, name, version string }{
		{"tool-1.0.tar.gz", "tool", "1.0"},
		{"/tmp/dir-2/tool-1.0.tgz", "tool", "1.0"},
		{"my-tool-2.1.0-rc1.tar.zst", "my-tool", "2.1.0-rc1"},
		{"python3-foo-1.2.tar", "python3-foo", "1.2"},
		{"tool-v1.0.zip", "tool", "v1.0"},
		{"tool_1.0_amd64.deb", "", ""},
		{"tool.tar.gz", "", ""},
		{"Tool-1.0.tar.gz", "", ""},
		{"tool-1.0", "", ""},
		{".tar.gz", "", ""},
		{"tool-1.0|b.tar.gz", "", ""},
		{"tool-1.0,<2.tar.gz", "", ""},
	} {
		name, version, ok := splitFileName(tt.file)
		if name != tt.name || version != tt.version || ok != (tt.name != "") {
			t.Errorf("splitFileName(%q) = %q, %q, %v; want %q, %q", tt.file, name, version, ok, tt.name, tt.version)
		}
	}
}

// TestCommands checks the commands a local archive without bin entries gets: the files
// anyone may run, and symlinks, directly in bin/, usr/bin/ and usr/local/bin/, one per name.
func TestCommands(t *testing.T) {
	members := []tarutil.Member{
		{Name: "bin", Type: tar.TypeDir, Mode: 0o755},
		{Name: "bin/a", Type: tar.TypeReg, Mode: 0o755},
		{Name: "bin/data", Type: tar.TypeReg, Mode: 0o644},
		{Name: "bin/.hidden", Type: tar.TypeReg, Mode: 0o755},
		{Name: "usr/bin/a", Type: tar.TypeReg, Mode: 0o755},
		{Name: "usr/bin/b", Type: tar.TypeSymlink, Linkname: "../../bin/a"},
		{Name: "usr/bin/dangling", Type: tar.TypeSymlink, Linkname: "missing"},
		{Name: "usr/local/bin/c", Type: tar.TypeLink, Linkname: "bin/a", Mode: 0o755},
		{Name: "usr/bin/sub/d", Type: tar.TypeReg, Mode: 0o755},
		{Name: "share/e", Type: tar.TypeReg, Mode: 0o755},
	}
	want := testrepo.Commands("bin/a", "usr/bin/b", "usr/local/bin/c")
	if got := commands(members); !slices.Equal(got, want) {
		t.Errorf("commands = %q, want %q", got, want)
	}
}

// TestLocal checks a local archive's entry: named by its file, its commands found, its
// size, sha256 and absolute path set; and the errors of a file that gives no name, of a
// command too long for bin/, and of a missing file.
func TestLocal(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeTar(t, filepath.Join(dir, "tool-1.0.tar"), "bin/tool", "share/x")
	a, err := Open(context.Background(), "tool-1.0.tar")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	p, err := a.Local(repo.Package{Depends: testrepo.Requires("lib>=1")})
	if err != nil {
		t.Fatal(err)
	}
	size, sum, _ := repo.HashFile(filepath.Join(dir, "tool-1.0.tar"))
	want := repo.Package{Name: "tool", Version: "1.0", Archive: "tool-1.0.tar", Size: size, SHA256: sum, Depends: testrepo.Requires("lib>=1"),
		Bin: testrepo.Commands("bin/tool"), InstalledSize: 4, Files: 2, Origin: filepath.Join(dir, "tool-1.0.tar")}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("Local:\ngot  %+v\nwant %+v", p, want)
	}
	if _, err := a.Local(repo.Package{Name: "tool", Version: "1", Bin: testrepo.Commands(strings.Repeat("c", 251) + "=bin/tool")}); !errors.As(err, new(*repo.CommandTooLongError)) {
		t.Errorf("Local with a command of 251 bytes: %v, want a *repo.CommandTooLongError", err)
	}

	writeTar(t, filepath.Join(dir, "tool.tar"), "bin/tool")
	b, err := Open(context.Background(), "tool.tar")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Local(repo.Package{}); !errors.As(err, new(*UnnamedError)) {
		t.Errorf("Local of tool.tar: %v, want an *UnnamedError", err)
	}
	if p, err := b.Local(repo.Package{Name: "tool", Version: "2"}); err != nil || p.Name != "tool" || p.Version != "2" {
		t.Errorf("Local of tool.tar named: %+v, %v", p, err)
	}
	if _, err := Open(context.Background(), "missing-1.0.tar"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a missing file: %v, want fs.ErrNotExist", err)
	}
}

// TestLocalNPM takes as npm's only what npm pack writes, one top directory package/: a
// release tarball whose one top directory holds a package.json (code-server's
// app-1.0.0/, its node_modules in it) is a plain tree named by its file, as it was, not
// an npm package whose dependencies the repositories must hold. A bad package.json is
// refused by a *ManifestError naming the archive once.
func TestLocalNPM(t *testing.T) {
	a := npmTarball(t, `{"name": "@s/tool", "version": "1.0.0", "dependencies": {"ms": "^2"}}`)
	if p, err := a.Local(repo.Package{}); err != nil || p.Kind != repo.KindNPM || p.Name != "@s/tool" || repo.JoinRequirements(p.Depends) != "ms@npm:^2" {
		t.Errorf("Local of npm pack's tarball = %+v, %v, want @s/tool of kind npm depending on ms@npm:^2", p, err)
	}
	release := npmTarballIn(t, "app-1.0.0", `{"name": "app", "version": "1.0.0", "dependencies": {"express": "^4"}}`,
		"app-1.0.0/node_modules/express/package.json", `{"name": "express", "version": "4.21.2"}`)
	if p, err := release.Local(repo.Package{Name: "app", Version: "1.0.0"}); err != nil || p.Kind != "" || p.Depends != nil || p.Into != "" {
		t.Errorf("Local of a release tarball in app-1.0.0/ = %+v, %v, want a plain tree without dependencies", p, err)
	}
	bad := npmTarball(t, `{"name": "tool", "version": "1"}`)
	_, err := bad.Local(repo.Package{})
	if me := (*ManifestError)(nil); !errors.As(err, &me) || me.Field != "version" || strings.Count(err.Error(), bad.Location) != 1 {
		t.Errorf("Local of a bad version = %v, want a *ManifestError naming %s once", err, bad.Location)
	}
}

// TestLocalDebRelations: a local .deb keeps what its control file says it provides,
// conflicts with (Conflicts and Breaks) and replaces, which name packages whether the
// repositories hold them or not, as dpkg -i honours them; its Depends and Pre-Depends,
// Debian's names the repositories may lack, are not taken.
func TestLocalDebRelations(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeTar(t, filepath.Join(dir, "mta-1.0.tar"), "usr/sbin/sendmail")
	a, err := Open(context.Background(), "mta-1.0.tar")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	a.Control = &fetch.Control{Package: "mta", Version: "1.0", Architecture: "amd64", Relations: map[string]string{
		"Depends": "libc6 (>= 2.34)", "Provides": "mail-transport-agent", "Conflicts": "mail-transport-agent",
		"Breaks": "mailx (<< 1:20)", "Replaces": "mail-transport-agent"}}
	p, err := a.Local(repo.Package{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Depends != nil || !reflect.DeepEqual(p.Provides, testrepo.Requires("mail-transport-agent")) ||
		!reflect.DeepEqual(p.Conflicts, testrepo.Requires("mail-transport-agent", "mailx<1:20")) ||
		!reflect.DeepEqual(p.Replaces, testrepo.Requires("mail-transport-agent")) {
		t.Errorf("Local of a .deb: depends %v, provides %v, conflicts %v, replaces %v; want its Provides, Conflicts and Breaks, Replaces, no depends",
			p.Depends, p.Provides, p.Conflicts, p.Replaces)
	}
}

package main

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"pkg/internal/testfs"
	"pkg/repo"
)

// TestRepoAddDebs publishes libc6 and its dependencies, Debian 12's own .debs fetched with
// apt-get download, with no flags: each entry is what its control file and tree say
// (libc6 needs libgcc-s1, which needs libc6 back; its library directory; Breaks as
// conflicts), install pulls the dependencies, libc6's absolute lib64 link is installed
// relative, in its tree and at its prefix path, resolving to the loader beside it, and pkg
// verify finds nothing wrong.
func TestRepoAddDebs(t *testing.T) {
	debs := testfs.AptDownload(t, "libc6", "libgcc-s1", "gcc-12-base")
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	e := newEnv(t, base, serve(t, dir))
	for _, deb := range debs {
		e.ok("repo", "add", dir, deb)
	}
	ix := readIndexFile(t, dir)
	i := slices.IndexFunc(ix.Packages, func(p repo.Package) bool { return p.Name == "libc6" })
	if i < 0 {
		t.Fatalf("index %+v has no libc6", ix.Packages)
	}
	libc6 := ix.Packages[i]
	if repo.JoinRequirements(libc6.Depends) != "libgcc-s1" || !slices.Contains(libc6.Lib, "lib/x86_64-linux-gnu") ||
		!strings.Contains(" "+repo.JoinRequirements(libc6.Conflicts)+" ", " busybox<1.30.1-6 ") || repo.JoinRequirements(libc6.Replaces) != "libc6-amd64" {
		t.Errorf("libc6's entry: depends %q, lib %q, conflicts %q, replaces %q", libc6.Depends, libc6.Lib, libc6.Conflicts, libc6.Replaces)
	}

	// --depends '' publishes none, where the control file names some.
	other := filepath.Join(base, "other")
	libc6Deb := debs[slices.IndexFunc(debs, func(d string) bool { return strings.HasPrefix(filepath.Base(d), "libc6_") })]
	e.ok("repo", "add", other, libc6Deb, "--depends", "")
	if ix := readIndexFile(t, other); len(ix.Packages) != 1 || ix.Packages[0].Depends != nil {
		t.Errorf("repo add --depends '': %+v, want one entry without depends", ix.Packages)
	}

	e.ok("install", "libc6")
	for _, name := range []string{"libc6", "libgcc-s1", "gcc-12-base"} {
		if _, err := os.Stat(filepath.Join(e.root, "pkgs", name)); err != nil {
			t.Errorf("install libc6: %v", err)
		}
	}
	// The link in the package's tree, and at its prefix path: the same inode, leading to
	// the loader libc6 itself installs, inside the root.
	for _, link := range []string{filepath.Join(e.root, "pkgs", "libc6", "lib64", "ld-linux-x86-64.so.2"), filepath.Join(e.root, "lib64", "ld-linux-x86-64.so.2")} {
		if target, err := os.Readlink(link); err != nil || target != "../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" {
			t.Errorf("readlink %s = %q, %v; want ../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", link, target, err)
		}
		real, err := filepath.EvalSymlinks(link)
		if err != nil {
			t.Fatal(err)
		}
		want := filepath.Join(filepath.Dir(filepath.Dir(link)), "lib/x86_64-linux-gnu/ld-linux-x86-64.so.2")
		if fi, err := os.Lstat(real); err != nil || !fi.Mode().IsRegular() || real != want {
			t.Errorf("%s resolves to %s (%v), want the file of lib/x86_64-linux-gnu beside it", link, real, err)
		}
	}
	e.ok("verify")
}

// TestRepoAddDebLinkOut refuses a .deb whose absolute symlink leads into a top-level
// directory it does not install, naming the link; one into its own is published.
func TestRepoAddDebLinkOut(t *testing.T) {
	testfs.NeedTools(t, "dpkg-deb")
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	e := newEnv(t, base, serve(t, dir))
	build := func(name, target string) string {
		tree := filepath.Join(base, name)
		for _, d := range []string{"DEBIAN", "usr/bin", "etc/" + name} {
			os.MkdirAll(filepath.Join(tree, d), 0o755)
		}
		control := "Package: " + name + "\nVersion: 1.0-1\nArchitecture: all\nMaintainer: N <n@example.com>\nDescription: links\n"
		if err := os.WriteFile(filepath.Join(tree, "DEBIAN", "control"), []byte(control), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tree, "etc", name, "conf"), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(tree, "usr/bin/link")); err != nil {
			t.Fatal(err)
		}
		testfs.Run(t, base, "dpkg-deb", "--root-owner-group", "--build", tree, name+".deb")
		return filepath.Join(base, name+".deb")
	}
	_, stderr, code := e.pkg("repo", "add", dir, build("out", "/bin/sh"))
	if want := `member "./usr/bin/link": symlink target outside the package: absolute target "/bin/sh"`; code == 0 || !strings.Contains(stderr, want) {
		t.Errorf("repo add of a .deb linking to /bin/sh: exit %d, stderr %q; want it refused with %q", code, stderr, want)
	}
	e.ok("repo", "add", dir, build("in", "/etc/in/conf"))
	e.ok("install", "in")
	if got, err := os.Readlink(filepath.Join(e.root, "pkgs", "in", "usr/bin/link")); err != nil || got != "../../etc/in/conf" {
		t.Errorf("installed link: %q, %v; want ../../etc/in/conf", got, err)
	}
	if data, err := os.ReadFile(filepath.Join(e.root, "usr/bin/link")); err != nil || string(data) != "x\n" {
		t.Errorf("the link at its prefix path reads %q, %v; want its package's etc/in/conf", data, err)
	}
	e.ok("verify")
}

// TestDebianVersions installs Debian packages as apt chooses them: the newest version,
// though it holds a "~" (bookworm-security's ca-certificates 20250419~deb12u2 after
// 20230311+deb12u1), which outdated lists and upgrade takes, and git-man
// 1:2.39.5-0+deb12u3 for git's "git-man (<< 1:2.39.5-.)", which dpkg holds below it.
func TestDebianVersions(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	files := t.TempDir()
	e := newEnv(t, base, dir)
	add := func(name, version, depends string) (stderr string) {
		t.Helper()
		control := "Package: " + name + "\nVersion: " + version + "\nArchitecture: all\nDescription: " + name + "\n"
		if depends != "" {
			control += "Depends: " + depends + "\n"
		}
		deb := writeFile(t, files, name+"_"+strings.ReplaceAll(version, ":", "%3a")+".deb", debOf(t, control,
			pax(t, td("./usr/"), td("./usr/share/"), tf("./usr/share/"+name, version+"\n"))))
		_, stderr = e.ok("repo", "add", dir, deb)
		return stderr
	}
	installed := func(name string) string {
		t.Helper()
		for _, p := range e.list() {
			if p.Name == name {
				return p.Version
			}
		}
		return ""
	}

	add("ca-certificates", "20230311+deb12u1", "")
	e.ok("install", "ca-certificates")
	if stderr := add("ca-certificates", "20250419~deb12u2", ""); strings.Contains(stderr, "pre-release") {
		t.Errorf("repo add of a Debian version with ~ notes a pre-release: %q", stderr)
	}
	// A .deb's entry is of kind deb as read, from its archive's name, and index.json does
	// not say so: a pkg before it refuses a kind it does not know.
	if ix := readIndexFile(t, dir); ix.Packages[0].Kind != "" {
		t.Errorf("index.json gives a .deb's entry kind %q", ix.Packages[0].Kind)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "index.json")); err != nil {
		t.Fatal(err)
	} else if ix, err := repo.Parse(data); err != nil || ix.Packages[0].Kind != repo.KindDeb {
		t.Errorf("a .deb's entry as read: %v; want kind %q", err, repo.KindDeb)
	}
	if out, _ := e.ok("outdated"); !strings.Contains(out, "20250419~deb12u2") {
		t.Errorf("outdated with 20250419~deb12u2 in the repository:\n%s", out)
	}
	e.ok("upgrade")
	if v := installed("ca-certificates"); v != "20250419~deb12u2" {
		t.Errorf("ca-certificates after upgrade: %q, want 20250419~deb12u2", v)
	}
	e.ok("remove", "ca-certificates")
	e.ok("install", "ca-certificates")
	if v := installed("ca-certificates"); v != "20250419~deb12u2" {
		t.Errorf("install ca-certificates: %q, want 20250419~deb12u2", v)
	}

	add("git-man", "1:2.39.5-0+deb12u3", "")
	add("git", "1:2.39.5-0+deb12u3", "git-man (>> 1:2.39.5), git-man (<< 1:2.39.5-.)")
	e.ok("install", "git")
	if v := installed("git-man"); v != "1:2.39.5-0+deb12u3" {
		t.Errorf("install git: git-man %q, want 1:2.39.5-0+deb12u3", v)
	}
}

// TestRepoAddDebArchitecture publishes the builds of one version of a .deb for two
// architectures with no flags, as a Debian archive holds them: each entry is for the
// platform its Architecture names, so install takes this machine's, and a local file of
// the other architecture is refused naming both. The Architecture was not read: the first
// build was published for any platform, the second refused as a change of it, and the
// other architecture's binaries installed here.
func TestRepoAddDebArchitecture(t *testing.T) {
	debArch := map[string]string{"amd64": "amd64", "arm64": "arm64", "386": "i386", "arm": "armhf", "ppc64le": "ppc64el", "s390x": "s390x", "riscv64": "riscv64"}
	host, ok := debArch[runtime.GOARCH]
	if !ok {
		t.Skipf("no Debian architecture for %s in this test", runtime.GOARCH)
	}
	other, otherPlatform := "arm64", "linux-arm64"
	if host == "arm64" {
		other, otherPlatform = "amd64", "linux-amd64"
	}
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	e := newEnv(t, base, dir)
	build := func(arch string) string {
		control := "Package: tool\nVersion: 1.0-1\nArchitecture: " + arch + "\nDescription: a tool\n"
		return writeFile(t, base, "tool_1.0-1_"+arch+".deb", debOf(t, control,
			pax(t, td("./usr/"), td("./usr/bin/"), moded(tf("./usr/bin/tool", "#!/bin/sh\necho "+arch+"\n"), 0o755))))
	}
	foreign := build(other)
	e.ok("repo", "add", dir, foreign)
	e.ok("repo", "add", dir, build(host))
	e.ok("repo", "add", dir, writeFile(t, base, "doc_1_all.deb", debOf(t, "Package: doc\nVersion: 1\nArchitecture: all\nDescription: d\n",
		pax(t, td("./usr/"), td("./usr/share/"), tf("./usr/share/doc.txt", "doc\n")))))
	platforms := map[string]string{}
	for _, p := range readIndexFile(t, dir).Packages {
		platforms[p.Name+" "+p.Version+" "+p.Platform] = p.Archive
	}
	if len(platforms) != 3 || platforms["tool 1.0-1 "+otherPlatform] == "" || platforms["tool 1.0-1 "+repo.Host] == "" || platforms["doc 1 "] == "" {
		t.Errorf("index entries by name, version and platform: %v", platforms)
	}
	e.ok("install", "tool")
	if b, err := os.ReadFile(filepath.Join(e.root, "bin", "tool")); err != nil || string(b) != "#!/bin/sh\necho "+host+"\n" {
		t.Errorf("bin/tool: %q, %v; want the %s build", b, err, host)
	}
	e.ok("remove", "tool")
	if _, stderr, code := e.pkg("install", foreign); code != 1 || !strings.Contains(stderr, "offered for "+otherPlatform+" only") {
		t.Errorf("install of the %s file: exit %d, %q; want it refused for its platform", other, code, stderr)
	}
	if out, _ := e.ok("list"); out != "" {
		t.Errorf("list after the refused file: %q", out)
	}
}

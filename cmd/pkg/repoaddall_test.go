package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pkg/internal/testfs"
)

// debNamed writes to dir the .deb NAME_VERSION_all.deb of one command, bin/NAME, whose
// control file names depends, and returns its path.
func debNamed(t *testing.T, dir, name, version, depends string) string {
	t.Helper()
	control := "Package: " + name + "\nVersion: " + version + "\nArchitecture: all\nDescription: " + name + "\n"
	if depends != "" {
		control += "Depends: " + depends + "\n"
	}
	return writeFile(t, dir, name+"_"+version+"_all.deb", debOf(t, control,
		pax(t, td("./usr/"), td("./usr/bin/"), moded(tf("./usr/bin/"+name, "#!/bin/sh\necho "+name+" "+version+"\n"), 0o755))))
}

// TestRepoAddSeveral adds three .debs in one command, each as its control file says, a
// line each; the dependency of one on another added with it is not missing, one on a
// package none offers is; install then takes them from the index. Flags of one entry
// are refused with several archives, changing nothing.
func TestRepoAddSeveral(t *testing.T) {
	base, files := t.TempDir(), t.TempDir()
	dir := filepath.Join(base, "repo")
	e := newEnv(t, base, dir)
	debs := []string{
		debNamed(t, files, "tool", "1.0-1", "libtool (>= 1.0), libc6"),
		debNamed(t, files, "libtool", "1.0-1", ""),
		debNamed(t, files, "extra", "2.0", "libtool"),
	}

	if _, stderr, code := e.pkg(slices.Concat([]string{"repo", "add", dir}, debs, []string{"--name", "x"})...); code != 2 ||
		!strings.Contains(stderr, "repo add: --name describes one archive, and 3 are given: add the archive it describes alone") {
		t.Errorf("repo add of 3 --name x: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("refused repo add made %s: %v", dir, err)
	}

	out, stderr := e.ok(slices.Concat([]string{"repo", "add", dir}, debs)...)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "added tool 1.0-1 to "+dir+": tool-1.0-1.deb, ") ||
		!strings.HasPrefix(lines[1], "added libtool 1.0-1 to "+dir+": ") || !strings.HasPrefix(lines[2], "added extra 2.0 to "+dir+": ") {
		t.Errorf("repo add of 3: stdout\n%s", out)
	}
	if want := "pkg: note: tool 1.0-1 depends on libc6, which " + dir + " does not offer (yet)\n"; !strings.Contains(stderr, want) ||
		strings.Count(stderr, "does not offer") != 1 || strings.Count(stderr, "this is a new repository") != 1 {
		t.Errorf("repo add of 3: stderr\n%s\nwant one missing dependency, libc6, and one new repository note", stderr)
	}
	if ix := readIndexFile(t, dir); len(ix.Packages) != 3 {
		t.Errorf("index: %+v", ix.Packages)
	}
	e.ok("install", "extra")
	// pkg run execs the command: in the pkg binary, not in this test process.
	r := &runEnv{env: e, bin: testfs.PkgBinary(t), base: base}
	if got, stderr, code := r.exec("--repo", dir, "run", "extra"); got != "extra 2.0\n" || code != 0 {
		t.Errorf("run extra: exit %d, %q\n%s", code, got, stderr)
	}
}

// TestRepoAddSeveralBroken refuses an add of three archives whose second is not a .deb it
// can read, naming it: the repository is as it was, none of the three added.
func TestRepoAddSeveralBroken(t *testing.T) {
	base, files := t.TempDir(), t.TempDir()
	dir := filepath.Join(base, "repo")
	e := newEnv(t, base, dir)
	e.ok("repo", "add", dir, debNamed(t, files, "old", "1", ""))
	before, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	good := debNamed(t, files, "tool", "1.0", "")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	broken := writeFile(t, files, "broken_1_all.deb", data[:len(data)-40])
	_, stderr, code := e.pkg("repo", "add", dir, good, broken, debNamed(t, files, "other", "1", ""))
	if code != 1 || !strings.HasPrefix(stderr, "pkg: "+broken+": ") || !strings.Contains(stderr, ": none of the 3 archives was added to "+dir+"\n") {
		t.Errorf("repo add with a broken second: exit %d\n%s", code, stderr)
	}
	after, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil || string(after) != string(before) {
		t.Errorf("index.json after the refused add: %s, %v\nwant as before:\n%s", after, err, before)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 2 {
		t.Errorf("%s holds %v (%v), want index.json and old's archive", dir, entries, err)
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"pkg/internal/testfs"
)

// buildGreet compiles, in dir, a shared library libgreet.so.1 and a program linked against
// it with no RUNPATH, so that the program runs only where something tells the loader where
// the library is: nothing on this machine has it.
func buildGreet(t *testing.T, dir string) (lib, app []byte) {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testfs.Unavailable(t, "no gcc to build a shared library with")
	}
	files := map[string]string{
		"greet.c": "#include <stdio.h>\nvoid greet(void) { puts(\"hello from libgreet\"); }\n",
		"app.c":   "void greet(void);\nint main(void) { greet(); return 0; }\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"-shared", "-fPIC", "-Wl,-soname,libgreet.so.1", "-o", "libgreet.so.1.0", "greet.c"},
		{"-o", "app", "app.c", "libgreet.so.1.0"},
	} {
		cmd := exec.Command(gcc, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, out)
		}
	}
	lib, err = os.ReadFile(filepath.Join(dir, "libgreet.so.1.0"))
	if err != nil {
		t.Fatal(err)
	}
	app, err = os.ReadFile(filepath.Join(dir, "app"))
	if err != nil {
		t.Fatal(err)
	}
	return lib, app
}

// TestCommandFindsDependencyLibraries installs a program whose shared library another
// package provides, declared with repo add --lib: bin/app runs with it, which the program
// alone cannot find; verify checks the wrapper, and a lockfile carries the declaration to a
// sync.
func TestCommandFindsDependencyLibraries(t *testing.T) {
	base := t.TempDir()
	lib, app := buildGreet(t, base)
	dir := filepath.Join(base, "repo")
	write := func(name string, archive []byte) string {
		p := filepath.Join(base, name)
		if err := os.WriteFile(p, archive, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	libTar := write("libgreet.tar", pax(t, td("usr/"), td("usr/lib/"), moded(tf("usr/lib/libgreet.so.1.0", string(lib)), 0o755),
		tl("usr/lib/libgreet.so.1", "libgreet.so.1.0")))
	appTar := write("app.tar", pax(t, td("bin/"), moded(tf("bin/app", string(app)), 0o755)))
	e := newEnv(t, base, dir)

	if _, stderr := e.ok("repo", "add", dir, libTar, "--name", "libgreet", "--version", "0.9"); !strings.Contains(stderr,
		"pkg: note: libgreet 0.9 has shared libraries in usr/lib: --lib usr/lib puts them on LD_LIBRARY_PATH") {
		t.Errorf("repo add of a library without --lib: %q, want a note naming usr/lib", stderr)
	}
	if _, stderr, code := e.pkg("repo", "add", dir, libTar, "--name", "libgreet", "--version", "1", "--lib", "usr/lib/x"); code != 1 ||
		!strings.Contains(stderr, `repo add libgreet 1: lib "usr/lib/x" is not a directory in the package`) {
		t.Errorf("repo add --lib of a missing directory: exit %d, %q", code, stderr)
	}
	e.ok("repo", "add", dir, libTar, "--name", "libgreet", "--version", "1", "--lib", "./usr/lib")
	e.ok("repo", "add", dir, appTar, "--name", "app", "--version", "1", "--depends", "libgreet>=1", "--bin", "bin/app")

	// The program alone does not find its library: the host has none.
	e.ok("install", "app")
	out, err := exec.Command(filepath.Join(e.root, "pkgs", "app", "bin", "app")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "libgreet.so.1: cannot open shared object file") {
		t.Fatalf("pkgs/app/bin/app: %v, %q; want it not to find libgreet.so.1", err, out)
	}
	run := func(root string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(root, "bin", "app"))
		cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH=/nonexistent")
		if out, err := cmd.CombinedOutput(); err != nil || string(out) != "hello from libgreet\n" {
			t.Errorf("%s/bin/app: %v, %q", root, err, out)
		}
	}
	run(e.root)
	// Installed from the cache's member index, each member has its archive's mtime.
	for _, name := range []string{"pkgs/app/bin/app", "pkgs/app/bin", "pkgs/libgreet/usr/lib/libgreet.so.1"} {
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(e.root, name), &st); err != nil || int64(st.Mtim.Sec) != breakoutTime.Unix() {
			t.Errorf("%s: mtime %d, %v; want the archive's, %d", name, st.Mtim.Sec, err, breakoutTime.Unix())
		}
	}
	if out, _ := e.ok("info", "libgreet"); !strings.Contains(out, "usr/lib") {
		t.Errorf("info libgreet: %q, want its lib", out)
	}
	e.ok("verify")
	wrapper := filepath.Join(e.root, "bin", "app")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\n# pkg: app of app, edited\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := e.pkg("verify"); code != 1 || !strings.Contains(out, "app 1: modified "+wrapper+" (command link)") {
		t.Errorf("verify with bin/app edited: exit %d, %q, %q", code, out, stderr)
	}
	e.ok("install", "--reinstall", "app")
	run(e.root)

	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "app")
	synced := newEnv(t, filepath.Join(base, "other"), dir)
	synced.ok("sync", "-f", lock)
	run(synced.root)

	e.ok("remove", "app")
	if _, err := os.Lstat(wrapper); !os.IsNotExist(err) {
		t.Errorf("bin/app after remove: %v", err)
	}
}

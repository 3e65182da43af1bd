package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExtraArgs checks that every command taking a fixed number of arguments refuses more,
// naming them, before it reads or changes anything.
func TestExtraArgs(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"files", "hello", "libgreet"}, `files: unexpected argument "libgreet" (files takes NAME)`},
		{[]string{"info", "hello", "libgreet"}, `info: unexpected argument "libgreet" (info takes NAME)`},
		{[]string{"list", "extra"}, `list: unexpected argument "extra" (list takes no arguments)`},
		{[]string{"list", "--json", "a", "b"}, `list: unexpected arguments "a" "b"`},
		{[]string{"env", "extra"}, `env: unexpected argument "extra"`},
		{[]string{"env", "--bin-dir", "extra"}, `env: unexpected argument "extra"`},
		{[]string{"search", "a", "b"}, `search: unexpected argument "b" (search takes [WORD])`},
		{[]string{"cache", "list", "x"}, `cache list: unexpected argument "x" (cache list takes no arguments)`},
		{[]string{"cache", "clean", "x"}, `cache clean: unexpected argument "x"`},
		{[]string{"cache", "prune", "x"}, `cache prune: unexpected argument "x"`},
		{[]string{"repo", "add", "dir", "a.tar", "b.tar", "--name", "a", "--version", "1"}, `repo add: --name describes one archive, and 2 are given: add the archive it describes alone`},
		{[]string{"repo", "keygen", "x", "-o", filepath.Join(t.TempDir(), "key")}, `repo keygen: unexpected argument "x"`},
		{[]string{"repo", "forget", "x", "y"}, `repo forget: unexpected argument "y"`},
		{[]string{"fetch", "./tool-1.0.tar.gz"}, `fetch: "./tool-1.0.tar.gz" is a file, not a package name: only install takes local archive files`},
		{[]string{"lock", "hello", "/tmp/x.deb"}, `lock: "/tmp/x.deb" is a file, not a package name: only install takes local archive files`},
		{[]string{"sync", "./pkg.lock"}, `sync: "./pkg.lock" is a file, not a package name: give a lockfile with --file (-f)`},
		{[]string{"run", "../tool.tgz"}, `run: "../tool.tgz" is a file, not a package name`},
	}
	for _, tt := range tests {
		_, stderr, code := e.pkg(tt.args...)
		if code != 2 || !strings.HasPrefix(stderr, "pkg: "+tt.want) {
			t.Errorf("pkg %s: exit %d, %q; want 2 and %q", strings.Join(tt.args, " "), code, stderr, tt.want)
		}
	}
	for _, dir := range []string{e.root, e.cache} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("refused commands made %s: %v", dir, err)
		}
	}
}

// TestMissingSubcommand: a command that needs a subcommand, given none, is a usage error
// naming them, as a command given too few arguments is; its help is still there for the
// asking.
func TestMissingSubcommand(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	for cmd, subs := range map[string]string{"cache": "list, clean or prune", "trust": "add, list or remove",
		"repo": "add, remove, push, keygen, sign, forget or list"} {
		want := "pkg: " + cmd + ": missing subcommand: " + subs + "\npkg: hint: run 'pkg " + cmd + " --help' for usage\n"
		if out, stderr, code := e.pkg(cmd); code != 2 || out != "" || stderr != want {
			t.Errorf("pkg %s: exit %d, %q, %q; want 2 and %q", cmd, code, out, stderr, want)
		}
		for _, args := range [][]string{{cmd, "--help"}, {cmd, "-h"}} {
			if out, stderr, code := e.pkg(args...); code != 0 || !strings.Contains(out, "pkg "+cmd+" - ") || stderr != "" {
				t.Errorf("pkg %s: exit %d, %q, %q; want its help", strings.Join(args, " "), code, out, stderr)
			}
		}
	}
}

// TestHelpAfterArgs: --help or -h after a command's arguments shows that command's help.
func TestHelpAfterArgs(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"install", "hello", "--help"}, "pkg install - "},
		{[]string{"repo", "sign", "dir", "-h"}, "pkg repo sign - "},
		{[]string{"search", "word", "--help"}, "pkg search - "},
	} {
		out, stderr, code := e.pkg(tt.args...)
		if code != 0 || !strings.Contains(out, tt.want) || stderr != "" {
			t.Errorf("pkg %s: exit %d, %q, %q; want its help", strings.Join(tt.args, " "), code, out, stderr)
		}
	}
}

// TestRepeatedNames checks that a name given twice is acted on, and reported, once.
func TestRepeatedNames(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	if out, _ := e.ok("install", "hello", "hello"); strings.Count(out, "installed hello 1.2.0") != 1 {
		t.Errorf("install hello hello: %q", out)
	}
	bin := filepath.Join(e.root, "pkgs/hello/bin/hello")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, _, code := e.pkg("verify", "hello", "hello"); code != 1 || out != "hello 1.2.0: modified bin/hello (size)\n" {
		t.Errorf("verify hello hello: exit %d, %q", code, out)
	}
	if out, _ := e.ok("remove", "hello", "libgreet", "hello"); out != "removed hello 1.2.0\nremoved libgreet 1.0.0\n" {
		t.Errorf("remove hello libgreet hello: %q", out)
	}
}

// TestDidYouMean checks that the commands on installed packages offer the installed names
// close to one that is not.
func TestDidYouMean(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	e.ok("install", "hello")
	for _, cmd := range []string{"remove", "upgrade", "files", "verify"} {
		want := "pkg: " + cmd + " helo: not installed; did you mean \"hello\"?\n"
		if _, stderr, code := e.pkg(cmd, "helo"); code != 1 || !strings.HasSuffix(stderr, want) {
			t.Errorf("%s helo: exit %d, %q; want 1 and %q", cmd, code, stderr, want)
		}
	}
	if _, stderr, code := e.pkg("remove", "hello", "libgret"); code != 1 || !strings.HasSuffix(stderr, "remove libgret: not installed; did you mean \"libgreet\"?\n") {
		t.Errorf("remove hello libgret: exit %d, %q", code, stderr)
	}
	// info asks the repository, which has no helo either.
	if _, stderr, code := e.pkg("info", "helo"); code != 1 || !strings.HasSuffix(stderr, "has no package of that name; did you mean \"hello\"?\n") {
		t.Errorf("info helo: exit %d, %q", code, stderr)
	}
	if _, stderr, _ := e.pkg("files", "fortunes"); !strings.HasSuffix(stderr, "files fortunes: not installed (try '"+e.cmd("search fortunes")+"')\n") {
		t.Errorf("files fortunes: %q", stderr)
	}
	if got := e.installed(); got != "hello 1.2.0, libgreet 1.0.0" {
		t.Errorf("after the refused commands: %s", got)
	}
}

// TestNamesNotRequirements checks that the commands taking installed names refuse a
// constraint as a usage error, and upgrade a repository; NAME@VERSION, which picks one of
// an npm package's versions, names an installed package.
func TestNamesNotRequirements(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	e.ok("install", "hello")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"upgrade", "team/hello"}, "pkg: upgrade: \"team/hello\" is not a package name\n"},
		{[]string{"remove", "hello>=1"}, "pkg: remove takes names of installed packages, not hello>=1\n"},
		{[]string{"info", "hello>1"}, "pkg: info takes names of installed packages, not hello>1\n"},
		{[]string{"files", "../x"}, "pkg: files: \"../x\" is not a package name\n"},
	} {
		_, stderr, code := e.pkg(tt.args...)
		if code != 2 || !strings.HasPrefix(stderr, tt.want) {
			t.Errorf("pkg %s: exit %d, %q; want 2 and %q", strings.Join(tt.args, " "), code, stderr, tt.want)
		}
	}
	if out, _ := e.ok("info", "hello@1.2.0"); !strings.Contains(out, "installed:") {
		t.Errorf("info hello@1.2.0: %q", out)
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pkg/internal/testfs"
)

// TestRunSwapped swaps <cache>/run for a symlink to a decoy, in a loop, while pkg run runs
// a command again and again, from a run root reused from its memo, checked by --refresh,
// or made anew after cache clean removed it: the decoy is a copy of run/ whose command
// writes a marker instead. pkg run never runs the decoy's
// command, nothing in the decoy changes, and the run root is whole afterwards (#30). The
// swapper stands for another user of a cache its group shares, so the cache is made
// group-writable: a swap by the user running pkg, who can run anything, is no attack,
// and where nobody else can make the command's path name another file, pkg runs it by
// that path (TestRunScriptPath).
func TestRunSwapped(t *testing.T) {
	base := t.TempDir()
	e := newRunEnv(t, base)
	e.publishScript("tool", "1", map[string]string{"tool": "echo real"})
	if out, stderr, code := e.run("tool"); out != "real\n" || code != 0 {
		t.Fatalf("first run: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if err := os.Chmod(e.cache, 0o775); err != nil {
		t.Fatal(err)
	}
	runs := filepath.Join(e.cache, "run")
	decoy := filepath.Join(base, "decoy")
	if out, err := exec.Command("cp", "-a", runs, decoy).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	marker := filepath.Join(base, "marker")
	roots := e.runRoots()
	script := filepath.Join(decoy, filepath.Base(roots[0]), "pkgs", "tool", "bin", "tool")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\necho decoy\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := testfs.Snapshot(t, decoy)
	swapper := testfs.Swap(t, runs, decoy)
	deadline := time.Now().Add(15 * time.Second)
	ran, made, refused := 0, 0, 0
	for i := 0; i < 400 && (i < 60 || swapper.Swaps() < 300 || made < 10) && time.Now().Before(deadline); i++ {
		args := []string{"tool"}
		switch i % 6 {
		case 0:
			args = []string{"--refresh", "tool"}
		case 5: // the run root goes, to be made again by the next run
			e.pkg("cache", "clean")
		}
		out, stderr, code := e.run(args...)
		switch {
		case code == 0 && out == "real\n":
			ran++
			if strings.Contains(stderr, "installed") {
				made++
			}
		case code == 0:
			t.Fatalf("run %d: stdout %q, want the real command's", i, out)
		default:
			refused++
		}
	}
	swaps := swapper.Stop()
	t.Logf("%d runs, %d of them making the run root, %d refused, %d swaps", ran, made, refused, swaps)
	if _, err := os.Stat(marker); err == nil {
		t.Error("pkg run ran the decoy's command")
	}
	testfs.SameTree(t, "the decoy", testfs.Snapshot(t, decoy), before)
	if out, stderr, code := e.run("tool"); out != "real\n" || code != 0 {
		t.Errorf("run after the swaps: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if got := e.runRoots(); len(got) != 1 || got[0] != roots[0] {
		t.Errorf("run roots after the swaps: %q, want %q", got, roots)
	}
}

// TestRunRepairsRoot deletes the command from a run root's prefix (bin/tool, the
// package's file): the next pkg run, from the memo or resolving again, puts the package
// back and runs the command.
func TestRunRepairsRoot(t *testing.T) {
	base := t.TempDir()
	e := newRunEnv(t, base)
	e.publishScript("tool", "1", map[string]string{"tool": "echo real"})
	if out, stderr, code := e.run("tool"); out != "real\n" || code != 0 {
		t.Fatalf("first run: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	root := e.runRoots()[0]
	for _, tt := range []struct {
		name string
		path string
		args []string
	}{
		{"link", filepath.Join(root, "bin", "tool"), []string{"tool"}},
		{"link-refresh", filepath.Join(root, "bin", "tool"), []string{"--refresh", "tool"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.Remove(tt.path); err != nil {
				t.Fatal(err)
			}
			out, stderr, code := e.run(tt.args...)
			if out != "real\n" || code != 0 {
				t.Fatalf("run with %s deleted: exit %d, stdout %q, stderr %q", tt.path, code, out, stderr)
			}
			if _, err := os.Lstat(tt.path); err != nil {
				t.Errorf("%s not put back: %v", tt.path, err)
			}
			if got := e.runRoots(); len(got) != 1 || got[0] != root {
				t.Errorf("run roots: %q, want %q", got, root)
			}
			if out, stderr, code := e.run("tool"); out != "real\n" || code != 0 || strings.Contains(stderr, "installed") {
				t.Errorf("run after the repair: exit %d, stdout %q, stderr %q", code, out, stderr)
			}
		})
	}
}

// TestCacheSwapped swaps each of tars/, tmp/ and roots/ of the cache for a symlink to a
// decoy, in a loop, while pkg fetches, installs, upgrades, removes, prunes and cleans:
// nothing in the decoy changes, and afterwards the root verifies and the cache serves
// every package (#30). The fetch package's TestSwappedSubdirs covers index/ too, over HTTP.
func TestCacheSwapped(t *testing.T) {
	for _, sub := range []string{"tars", "tmp", "roots"} {
		t.Run(sub, func(t *testing.T) {
			base := t.TempDir()
			e := &runEnv{env: newEnv(t, base, filepath.Join(base, "repo")), base: base}
			for _, v := range []string{"1", "2"} {
				e.publishScript("tool", v, map[string]string{"tool": "echo tool " + v})
			}
			e.publishScript("other", "1", map[string]string{"other": "echo other"})
			e.ok("install", "-q", "other")
			decoy := filepath.Join(base, "decoy")
			if out, err := exec.Command("cp", "-a", filepath.Join(e.cache, sub), decoy).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v: %s", err, out)
			}
			if sub == "roots" { // without the root's record, which each command writes anew
				if err := os.RemoveAll(decoy); err != nil || os.Mkdir(decoy, 0o755) != nil {
					t.Fatal(err)
				}
			}
			testfs.OldFiles(t, decoy, "tool-1.tar", "fetch-x", "0123456789abcdef")
			before := testfs.Snapshot(t, decoy)
			swapper := testfs.Swap(t, filepath.Join(e.cache, sub), decoy)
			steps := [][]string{
				{"install", "-q", "tool=1"}, {"upgrade", "-q"}, {"remove", "-q", "tool"},
				{"cache", "prune", "--older-than", "0"}, {"fetch", "-q", "tool=1"}, {"fetch", "-q", "tool=2"},
				{"install", "-q", "tool=2"}, {"cache", "clean"}, {"remove", "-q", "tool"},
			}
			// Whole rounds of the steps, so that the last command is the same however many
			// a loaded machine ran before the deadline.
			deadline := time.Now().Add(6 * time.Second)
			rounds, done := 0, 0
			for ; (rounds < 60 || swapper.Swaps() < 300) && time.Now().Before(deadline); rounds += len(steps) {
				for _, step := range steps {
					if _, _, code := e.pkg(step...); code == 0 {
						done++
					}
				}
			}
			swaps := swapper.Stop()
			t.Logf("%d commands, %d of them done, %d swaps", rounds, done, swaps)
			testfs.SameTree(t, "the decoy", testfs.Snapshot(t, decoy), before)
			e.ok("verify")
			e.ok("fetch", "-q", "tool=1")
			e.ok("install", "-q", "tool=2")
			e.ok("verify")
			out, _ := e.ok("cache", "list")
			for _, want := range []string{"tool 1", "tool 2"} {
				if !strings.Contains(out, want) {
					t.Errorf("cache list after the swaps: %q, want %s in it", out, want)
				}
			}
		})
	}
}

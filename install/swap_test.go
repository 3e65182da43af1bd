package install

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"pkg/pkgtest/testrepo"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"pkg/internal/testfs"
	"pkg/repo"
)

// swapRounds is how many commands each TestSwappedDirectory case runs at least while its
// directory is swapped back and forth, and more until each kind succeeded swapSuccesses
// times; swapBound ends the case earlier on a slow machine, and swapHang fails it where a
// command never ends.
const (
	swapRounds    = 200
	swapSuccesses = 5
	swapBound     = 20 * time.Second
	swapHang      = 60 * time.Second
)

// TestSwappedDirectory swaps one directory of a root (or the root itself) for a symlink to
// a decoy directory and back, in a loop, while installs, upgrades, removes and verifies
// run, each from its own Open, as whoever may rename entries in the root (or beside it)
// could: a command may fail while the symlink is in place, but nothing in the decoy may
// change, nothing pkg says may come from the decoy (a start's cleanup, verify's findings),
// and the root is consistent afterwards (verify finds nothing, the database, pkgs/ and bin/
// agree).
func TestSwappedDirectory(t *testing.T) {
	for _, part := range []string{"bin", ".pkg/staging", ".pkg/saved", "pkgs", ".pkg/trash", "."} {
		name := part
		if part == "." {
			name = "root"
		}
		t.Run(name, func(t *testing.T) { testSwapped(t, part) })
	}
}

func testSwapped(t *testing.T, part string) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	tars := [2]string{alignedTar(t, base, swapVersion("1")), alignedTar(t, base, swapVersion("2"))}
	libTar := alignedTar(t, base, swapLib())
	r := openRoot(t, root)
	must(t, os.MkdirAll(r.path(".pkg", "saved"), 0o755))
	if _, err := r.installFrom(libTar, swapPackage("lib", "1")); err != nil {
		t.Fatal(err)
	}
	r.Close()

	decoy := filepath.Join(base, "decoy")
	if part == "." {
		makeDecoyRoot(t, decoy, libTar)
	} else {
		makeDecoy(t, decoy)
	}
	before := testfs.Snapshot(t, decoy)

	// What the user adds to the installed tree, for the salvage of each upgrade and
	// remove: written through a descriptor of pkgs/ opened before the swaps begin.
	pkgs, err := os.OpenRoot(filepath.Join(root, "pkgs"))
	if err != nil {
		t.Fatal(err)
	}
	defer pkgs.Close()

	dir := filepath.Join(root, part)
	stop := swapLoop(t, filepath.Dir(dir), filepath.Base(dir), decoy)
	done := make(chan struct{})
	var ok [4]int // installs, verifies, upgrades and removes that succeeded
	go func() {
		defer close(done)
		end := time.Now().Add(swapBound)
		for i := 0; (i < swapRounds || slices.Min(ok[:]) < swapSuccesses) && time.Now().Before(end); i++ {
			step := i % 4
			if step >= 2 { // a file of the user's in the tree an upgrade or remove replaces
				pkgs.WriteFile(filepath.Join("tool", fmt.Sprintf("notes-%d", i)), []byte("mine"), 0o644)
			}
			err, wrong := swapStep(root, step, tars)
			if wrong != nil {
				t.Errorf("round %d: %v", i, wrong)
			}
			if err == nil {
				ok[step]++
			} else if testing.Verbose() {
				t.Logf("round %d: %v", i, err)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(swapHang):
		t.Fatal("the commands did not end")
	}
	stop()

	testfs.SameTree(t, "decoy", testfs.Snapshot(t, decoy), before)
	if slices.Min(ok[:]) == 0 {
		t.Errorf("installs, verifies, upgrades, removes that succeeded: %v: the test proves nothing", ok)
	}
	checkConsistent(t, root)
}

// swapStep opens the root at dir and installs tool 1 (step 0), verifies it (1), upgrades
// it to 2 (2) or removes it (3). It returns the error of the command, which the swap may
// cause, and what the command got wrong: it said something of the decoy.
func swapStep(dir string, step int, tars [2]string) (err, wrong error) {
	r, err := Open(context.Background(), dir, Options{NoSync: step != 2})
	if err != nil {
		return err, nil
	}
	defer r.Close()
	if said := fmt.Sprint(r.Notes()); strings.Contains(said, "decoy") {
		return nil, fmt.Errorf("the start found %s", said)
	}
	switch step {
	case 0:
		_, err = r.installFrom(tars[0], swapPackage("tool", "1"))
	case 1:
		var problems []FileError
		if problems, err = r.Verify(); len(mistaken(problems)) > 0 {
			return err, fmt.Errorf("verify found %v", mistaken(problems))
		}
	case 2:
		_, err = r.installFrom(tars[1], swapPackage("tool", "2"))
	default:
		if _, gerr := r.DB().Get("tool"); gerr == nil {
			err = r.uninstall("tool")
		}
	}
	return err, nil
}

// mistaken returns problems but the files of the user's that no upgrade or remove found
// since, which are theirs, not a problem.
func mistaken(problems []FileError) []FileError {
	return slices.DeleteFunc(problems, func(p FileError) bool { return errors.Is(p.Err, ErrExtra) && strings.HasPrefix(p.Path, "notes-") })
}

// swapVersion is a package with a command, which is a wrapper script where it uses lib's
// libraries (version 2), in the member's place in the prefix, and the member otherwise.
func swapVersion(v string) []entry {
	return []entry{
		{name: "bin/", typ: tar.TypeDir, mode: 0o755},
		{name: "bin/tool", typ: tar.TypeReg, mode: 0o755, data: "#!/bin/sh\necho v" + v + "\n"},
		{name: "share/", typ: tar.TypeDir, mode: 0o755},
		{name: "share/tool/", typ: tar.TypeDir, mode: 0o755},
		{name: "share/tool/data", typ: tar.TypeReg, mode: 0o644, data: "data " + v},
	}
}

// swapLib is a package with a library directory and a command, linked in bin/.
func swapLib() []entry {
	return []entry{
		{name: "lib/", typ: tar.TypeDir, mode: 0o755},
		{name: "lib/libx.so", typ: tar.TypeReg, mode: 0o644, data: "lib"},
		{name: "lib/sub/", typ: tar.TypeDir, mode: 0o755},
		{name: "lib/sub/data", typ: tar.TypeReg, mode: 0o644, data: "data"},
		{name: "lib/tool", typ: tar.TypeReg, mode: 0o755, data: "#!/bin/sh\necho lib\n"},
	}
}

func swapPackage(name, version string) repo.Package {
	p := repo.Package{Name: name, Version: version, SHA256: fmt.Sprintf("%064d", 0), Bin: testrepo.Commands(name + "=bin/tool")}
	if name == "lib" {
		p.Lib, p.Bin = []string{"lib"}, testrepo.Commands("lib=lib/tool")
	} else if version == "2" {
		p.Depends = testrepo.Requires("lib")
	}
	return p
}

// makeDecoy makes a directory that every part of a root could be taken for: a package's
// tree, leftovers of staging and trash, a command link no package declares and a file.
func makeDecoy(t *testing.T, dir string) {
	for _, d := range []string{"tool/bin", "decoy.1/bin", "decoy-1.2", "decoy"} {
		must(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	must(t, os.WriteFile(filepath.Join(dir, "tool", "bin", "tool"), []byte("decoy"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "decoy.1", "bin", "tool"), []byte("decoy"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "decoy-keep"), []byte("decoy"), 0o644))
	must(t, os.Symlink("../pkgs/gone/bin/x", filepath.Join(dir, "decoy-stale")))
	must(t, os.Symlink("../pkgs/other/bin/tool", filepath.Join(dir, "tool-cmd")))
}

// makeDecoyRoot makes a root of its own at dir, with lib installed.
func makeDecoyRoot(t *testing.T, dir, tarPath string) {
	r := openRoot(t, dir)
	if _, err := r.installFrom(tarPath, swapPackage("lib", "1")); err != nil {
		t.Fatal(err)
	}
	r.Close()
	makeDecoy(t, filepath.Join(dir, ".pkg", "staging"))
}

// swapLoop exchanges the entry name of dir with a symlink to decoy beside it, and back, in
// a loop, until the function it returns is called, which leaves name as it was.
func swapLoop(t *testing.T, dir, name, decoy string) (stop func()) {
	link := ".swap-" + name
	must(t, os.Symlink(decoy, filepath.Join(dir, link)))
	d, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	var quit atomic.Bool
	var wg sync.WaitGroup
	var swaps atomic.Int64
	wg.Go(func() {
		for !quit.Load() {
			for range 2 {
				if err := unix.Renameat2(d, name, d, link, unix.RENAME_EXCHANGE); err != nil {
					t.Errorf("swap %s: %v", name, err)
					quit.Store(true)
					return
				}
				swaps.Add(1)
				time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
			}
		}
	})
	return func() {
		quit.Store(true)
		wg.Wait()
		unix.Close(d)
		if swaps.Load() < 10 {
			t.Errorf("%d swaps", swaps.Load())
		}
		must(t, os.Remove(filepath.Join(dir, link)))
	}
}

// checkConsistent opens the root at dir and checks that verify finds nothing, that pkgs/
// holds a tree for each package the database records and nothing else, that bin/ holds
// their commands and nothing else, and that staging and trash are empty.
func checkConsistent(t *testing.T, dir string) {
	t.Helper()
	r := openRoot(t, dir)
	defer r.Close()
	problems, err := r.Verify()
	if problems = mistaken(problems); err != nil || len(problems) > 0 {
		t.Errorf("verify: %v, %v", problems, err)
	}
	recs, err := r.DB().List()
	if err != nil {
		t.Fatal(err)
	}
	var names, cmds []string
	for _, p := range recs {
		names = append(names, p.Name)
		for _, b := range p.Bin {
			cmds = append(cmds, b.Name)
		}
	}
	slices.Sort(cmds)
	for _, c := range []struct {
		dir  string
		want []string
	}{{"pkgs", names}, {"bin", cmds}, {".pkg/staging", nil}, {".pkg/trash", nil}} {
		ents, err := os.ReadDir(filepath.Join(dir, c.dir))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range ents {
			got = append(got, e.Name())
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s holds %q, want %q", c.dir, got, c.want)
		}
	}
}

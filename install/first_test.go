package install

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pkg/internal/testfs"
	"pkg/notice"
)

// TestFirstChange: the first change into a root that Open made makes its prefix before its
// records, so that one sync makes both durable and no roll-forward is left pending: cut
// right after its records, the root holds its prefix already. Into a root Open did not
// make (the directory was there), the prefix follows the records, as for any change.
func TestFirstChange(t *testing.T) {
	for _, made := range []bool{true, false} {
		base := t.TempDir()
		dir := filepath.Join(base, "root")
		if !made {
			must(t, os.Mkdir(dir, 0o755))
		}
		r := openRoot(t, dir)
		a := stageIn(t, r, base, prefixPkg("a", "1"), tree(appTree("opt/app", 3, "one", "usr/bin/a=1")...))
		testHookRecorded = func() bool { return true }
		_, err := r.Apply(context.Background(), []*Staged{a}, nil)
		testHookRecorded = nil
		if err != nil {
			t.Fatal(err)
		}
		_, statErr := os.Lstat(r.path("usr/bin/a"))
		p, _, err := r.db.Prefix()
		if err != nil {
			t.Fatal(err)
		}
		if made && (statErr != nil || p != nil) {
			t.Errorf("a root Open made: usr/bin/a: %v, pending %+v; want it linked, nothing pending", statErr, p)
		}
		if !made && (statErr == nil || p == nil) {
			t.Errorf("a root that was there: usr/bin/a: %v, pending %+v; want it not yet linked, its roll-forward pending", statErr, p)
		}
		r.Close()
		r = openRoot(t, dir)
		checkPrefix(t, r)
		if markers, _ := filepath.Glob(r.path(".pkg", "db.done-*")); made && len(markers) > 0 {
			t.Errorf("done markers %v: a first change has none to make", markers)
		}
		r.Close()
	}
}

// TestFirstChangeCut: a first change cut short once it made its prefix, before its
// records (a crash), is undone by the next start: nothing is recorded, and the root holds
// nothing of it, neither its trees in pkgs/ nor its prefix (a directory it folded there
// among it); and one that fails there (its roll-forward cut before a fold) undoes itself,
// and its Abandon leaves no root, as there was none.
func TestFirstChangeCut(t *testing.T) {
	for _, crash := range []bool{true, false} {
		base := t.TempDir()
		dir := filepath.Join(base, "root")
		r := openRoot(t, dir)
		a := stageIn(t, r, base, prefixPkg("a", "1"), tree(appTree("opt/app", 20, "one", "usr/bin/a=1", "usr/share/a=1")...))
		if crash {
			testHookFirstRolled = func() bool { return true }
		} else {
			testHookFoldStep = func() bool { return true }
		}
		_, err := r.Apply(context.Background(), []*Staged{a}, nil)
		testHookFirstRolled, testHookFoldStep = nil, nil
		if crash {
			if !errors.Is(err, errFirstCut) {
				t.Fatalf("Apply = %v, want it cut before the records", err)
			}
			if _, err := os.Lstat(r.path("usr/bin/a")); err != nil {
				t.Fatalf("usr/bin/a before the records: %v, want it made", err)
			}
			r.Close()
			r = openRoot(t, dir)
			want := []notice.Notice{notice.RootRecovered{Undone: []notice.Undone{{Op: "install", Names: []string{"a"}}}, Unfinished: []string{"a"}}}
			if notes := r.Notes(); !reflect.DeepEqual(notes, want) {
				t.Errorf("notes = %#v, want %#v", notes, want)
			}
		} else if !errors.Is(err, errFoldCut) {
			t.Fatalf("Apply = %v, want the roll-forward cut", err)
		}
		recs, err := r.db.List()
		if err != nil || len(recs) != 0 {
			t.Errorf("records %+v, %v; want none", recs, err)
		}
		if ins, err := r.db.Intents(); err != nil || len(ins) != 0 {
			t.Errorf("intents %+v, %v; want none", ins, err)
		}
		for _, p := range []string{"usr", "opt", "pkgs/a"} {
			if _, err := os.Lstat(r.path(p)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s after the undo: %v, want it gone", p, err)
			}
		}
		checkPrefix(t, r)
		r.Abandon()
		if _, err := os.Lstat(dir); !crash && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the root after Abandon: %v, want none, as there was none", err)
		}
	}
}

// TestFirstWholeCommit: a first change on btrfs whose tree's files had their write-back
// only started (Staged.whole) commits the filesystem (its syncfs) before the records'
// pages are written back (FIEMAP_FLAG_SYNC of db.new), not after: a transaction commit
// writes no delayed allocation, so one that btrfs ran on its own in between would make
// the sealed records durable without the files' data.
func TestFirstWholeCommit(t *testing.T) {
	if dir := os.Getenv("PKG_STRACED_WHOLE"); dir != "" {
		r := openRoot(t, filepath.Join(dir, "root"))
		tarPath := filepath.Join(dir, "tool.tar")
		s := stageMembers(t, r, tarPath, pkgOf("tool", "1"), digestsOf(t, tarPath))
		s.whole = true // as a tree of more than maxTracked files
		applyStaged(t, r, s)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		return
	}
	testfs.NeedTools(t, "strace")
	dir := testfs.Mount(t, "btrfs")
	if err := os.Rename(alignedTar(t, dir, version1()), filepath.Join(dir, "tool.tar")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "strace")
	cmd := exec.Command("strace", "-f", "-qq", "-y", "-o", out, "-e", "trace=syncfs,ioctl", os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PKG_STRACED_WHOLE="+dir)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	synced := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "syncfs(") })
	written := slices.IndexFunc(lines, func(l string) bool {
		return strings.Contains(l, "FS_IOC_FIEMAP") && strings.Contains(l, "/.pkg/db.new>")
	})
	if synced < 0 || written >= 0 && written < synced {
		t.Errorf("syncfs at line %d, the records' write-back at %d: want the syncfs first:\n%s", synced, written, strings.Join(lines, "\n"))
	}
}

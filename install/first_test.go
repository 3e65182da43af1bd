package install

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pkg/db"
	"pkg/internal/testfs"
	"pkg/notice"
)

// TestFirstChangeAside: a first change's intent (db.FirstIntent) found by a start, its
// prefix on the disk without its records (a sync of another process's logged it ahead of
// them on btrfs), has the root's entries it names moved aside into .pkg/saved, not
// deleted, with what the user wrote in them since, and said (a part of the layout, bin/,
// has its entries moved).
func TestFirstChangeAside(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	long := "bin/" + strings.Repeat("l", 250) // its saved name cut to fit NAME_MAX
	for _, f := range []string{"usr/share/a/x", "usr/local/notes", "bin/a", long} {
		must(t, os.MkdirAll(filepath.Dir(r.path(f)), 0o755))
		must(t, os.WriteFile(r.path(f), []byte(f), 0o644))
	}
	must(t, os.Symlink("../usr/share/a/x", r.path("bin/.a.new"))) // a command link the change prepared
	must(t, r.db.SetIntents([]db.Intent{{Op: firstOp, Name: db.FirstIntent, Staging: "bin/usr"}}))
	r.Close()
	r = openRoot(t, dir)
	defer r.Close()
	if ins, err := r.db.Intents(); err != nil || len(ins) != 0 {
		t.Errorf("intents %+v, %v; want none", ins, err)
	}
	for _, p := range []string{"usr", "bin/a", long, "bin/.a.new"} { // the prepared link removed by syncBins
		if _, err := os.Lstat(r.path(p)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s after the start: %v, want it gone", p, err)
		}
	}
	var rec notice.RootRecovered
	for _, n := range r.Notes() {
		if n, ok := n.(notice.RootRecovered); ok {
			rec = n
		}
	}
	if len(rec.Aside) != 3 {
		t.Fatalf("notes = %#v, want bin/a, its long neighbour and usr said moved aside", r.Notes())
	}
	for _, k := range rec.Aside {
		f := map[string]string{"usr": "usr/local/notes", "bin/a": "bin/a", long: long}[k.Name]
		at := filepath.Join(k.Dir, strings.TrimPrefix(f, k.Name))
		if b, err := os.ReadFile(at); err != nil || string(b) != f {
			t.Errorf("%s moved to %s: %s holds %q, %v; want %q", k.Name, k.Dir, at, b, err, f)
		}
	}
}

// TestFirstWholeCommit: a first change on btrfs whose tree's files had their write-back
// only started (Staged.whole) commits the filesystem (its syncfs) before the records'
// pages are written back (FIEMAP_FLAG_SYNC of db.new), not after: a transaction commit
// writes no delayed allocation, so one that btrfs ran on its own in between would make
// the sealed records durable without the files' data.
func TestFirstWholeCommit(t *testing.T) {
	if dir := os.Getenv("PKG_STRACED"); dir != "" { // straceInstall's child
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
	base := testfs.Mount(t, "btrfs")
	skipUntracked(t, base)
	lines := straceInstall(t, base, "-y", "-e", "trace=fsync,syncfs,ioctl")
	if i := slices.IndexFunc(lines, func(l string) bool {
		return strings.Contains(l, " fsync(") && strings.Contains(l, "/.pkg/db.intents>")
	}); i >= 0 { // any other change's on btrfs, made durable before its renames
		t.Fatalf("the intents fsynced at line %d: want a first change, whose intents no sync precedes:\n%s", i, strings.Join(lines, "\n"))
	}
	synced := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "syncfs(") })
	written := slices.IndexFunc(lines, func(l string) bool {
		return strings.Contains(l, "FS_IOC_FIEMAP") && strings.Contains(l, "/.pkg/db.new>")
	})
	if synced < 0 || written >= 0 && written < synced {
		t.Errorf("syncfs at line %d, the records' write-back at %d: want the syncfs first:\n%s", synced, written, strings.Join(lines, "\n"))
	}
}

// TestFirstCommitFailed: a first change whose one commit, the roll-forward's, fails made
// nothing durable, its records included, so it does not say it is recorded (results and a
// *LinksError, which the CLI words as "committed" and "recorded"): it fails as a change
// whose records' sync failed does, and the next start finds it whole.
func TestFirstCommitFailed(t *testing.T) {
	base := testfs.Mount(t, "btrfs")
	skipUntracked(t, base)
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	a := stageIn(t, r, base, prefixPkg("a", "1"), tree(appTree("opt/app", 20, "one", "usr/bin/a=1")...))
	errCommit := errors.New("commit failed by a test")
	testHookCommitPrefix = func() error { return errCommit }
	res, err := r.Apply(context.Background(), []*Staged{a}, nil)
	testHookCommitPrefix = nil
	var le *LinksError
	if res != nil || !errors.Is(err, errCommit) || errors.As(err, &le) {
		t.Errorf("Apply = %v, %v (%T); want no results and the commit's error, not a *LinksError", res, err, err)
	}
	r.Close()
	r = openRoot(t, dir)
	defer r.Close()
	checkPrefix(t, r)
}

// TestFirstAsideCommitted: a start that moves a first change's entries aside (unroll)
// commits the filesystem (durable.Commit) before it removes the intent (db.FirstIntent):
// a crash that keeps the intent's removal keeps the moves too.
func TestFirstAsideCommitted(t *testing.T) {
	if dir := os.Getenv("PKG_STRACED"); dir != "" { // straceInstall's child: a start
		must(t, openRoot(t, filepath.Join(dir, "root")).Close())
		return
	}
	base := testfs.Mount(t, "btrfs")
	skipUntracked(t, base)
	r := openRoot(t, filepath.Join(base, "root"))
	must(t, os.MkdirAll(r.path("usr/share"), 0o755))
	must(t, r.db.SetIntents([]db.Intent{{Op: firstOp, Name: db.FirstIntent, Staging: "usr"}}))
	must(t, r.Close())
	lines := straceInstall(t, base, "-y", "-e", "trace=ioctl,renameat,unlinkat")
	at := func(f func(string) bool) int { return slices.IndexFunc(lines, f) }
	moved := at(func(l string) bool { return strings.Contains(l, "renameat(") && strings.Contains(l, `"usr"`) })
	committed := at(func(l string) bool { return strings.Contains(l, "BTRFS_IOC_START_SYNC") })
	removed := at(func(l string) bool {
		return strings.Contains(l, "unlinkat(") && strings.Contains(l, "/.pkg/db.intents>")
	})
	if moved < 0 || committed < moved || removed < committed {
		t.Errorf("usr moved at line %d, committed at %d, the intent removed at %d: want them in that order:\n%s",
			moved, committed, removed, strings.Join(lines, "\n"))
	}
}

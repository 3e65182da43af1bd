package fetch

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"pkg/internal/testfs"
)

// nobody is the owner of a cache of nobody's (65534).
var nobody = cacheOwner{uid: 65534, gid: 65534, set: true}

// opened opens the file at path, until t ends.
func opened(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// linkedIn writes a file of this process's, dir/root's, links it into dir as name, and
// returns its path: a user's link to a file of root's.
func linkedIn(t *testing.T, dir, name string) string {
	t.Helper()
	own := filepath.Join(dir, "root's")
	if err := os.WriteFile(own, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(own, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
	return own
}

// TestGiveLinked checks that root does not hand over a file of the cache that has another
// link: one the user linked in from a file of root's.
func TestGiveLinked(t *testing.T) {
	dir := t.TempDir()
	own := linkedIn(t, dir, "fetch-x")
	f := opened(t, filepath.Join(dir, "fetch-x"))
	if err := nobody.give(int(f.Fd()), f.Name()); !errors.Is(err, errLinked) {
		t.Errorf("give of a file with two links: %v, want %v", err, errLinked)
	}
	info, err := os.Stat(own)
	if err != nil {
		t.Fatal(err)
	}
	if uid := info.Sys().(*syscall.Stat_t).Uid; int(uid) != os.Geteuid() {
		t.Errorf("the linked file is %d's after give, want %d's", uid, os.Geteuid())
	}
}

// TestGiveAtLinked checks that giveAt, by name, refuses a file with another link as give does.
func TestGiveAtLinked(t *testing.T) {
	dir := t.TempDir()
	linkedIn(t, dir, "tars")
	if err := nobody.giveAt(opened(t, dir), "tars"); !errors.Is(err, errLinked) {
		t.Errorf("giveAt of a file with two links: %v, want %v", err, errLinked)
	}
}

// TestGiveAtSymlink checks that giveAt hands over a symlink put in place of what root made,
// never the file it points to.
func TestGiveAtSymlink(t *testing.T) {
	if os.Geteuid() != 0 {
		testfs.Unavailable(t, "needs root, to hand a file to another user")
	}
	dir := t.TempDir()
	own := filepath.Join(dir, "root's")
	if err := os.WriteFile(own, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(own, filepath.Join(dir, "tars")); err != nil {
		t.Fatal(err)
	}
	if err := nobody.giveAt(opened(t, dir), "tars"); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]uint32{own: 0, filepath.Join(dir, "tars"): 65534} {
		info, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if uid := info.Sys().(*syscall.Stat_t).Uid; uid != want {
			t.Errorf("%s is %d's after giveAt of the symlink, want %d's", path, uid, want)
		}
	}
}

// TestGiveAll checks that giveAll hands over a tree, its files linked within it included,
// but not what a symlink in it points to, and refuses a file also linked from outside it.
func TestGiveAll(t *testing.T) {
	if os.Geteuid() != 0 {
		testfs.Unavailable(t, "needs root, to hand a file to another user")
	}
	protected := hardlinksProtected
	defer func() { hardlinksProtected = protected }()
	hardlinksProtected = func() bool { return true }
	dir := t.TempDir()
	outside := filepath.Join(dir, "root's")
	tree := filepath.Join(dir, "run", "set")
	for _, d := range []string{filepath.Join(tree, "pkgs", "app"), filepath.Join(tree, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{outside, filepath.Join(tree, "pkgs", "app", "app")} {
		if err := os.WriteFile(f, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(tree, "pkgs", "app", "app"), filepath.Join(tree, "bin", "app")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(tree, "bin", "out")); err != nil {
		t.Fatal(err)
	}
	runs := opened(t, filepath.Join(dir, "run"))
	if err := nobody.giveAll(runs, "set"); err != nil {
		t.Fatal(err)
	}
	uid := func(path string) uint32 {
		info, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		return info.Sys().(*syscall.Stat_t).Uid
	}
	for path, want := range map[string]uint32{
		tree: 65534, filepath.Join(tree, "bin", "app"): 65534, filepath.Join(tree, "bin", "out"): 65534,
		filepath.Join(tree, "pkgs"): 65534, outside: 0,
	} {
		if got := uid(path); got != want {
			t.Errorf("%s is %d's after giveAll, want %d's", path, got, want)
		}
	}

	// Where users may link root's files, no count of links is trusted: the tree's own
	// link is refused too.
	hardlinksProtected = func() bool { return false }
	err := nobody.giveAll(runs, "set")
	hardlinksProtected = func() bool { return true }
	if !errors.Is(err, errLinked) {
		t.Errorf("giveAll of a tree with a linked file, fs.protected_hardlinks off: %v, want %v", err, errLinked)
	}

	if err := os.Link(outside, filepath.Join(tree, "bin", "linked")); err != nil {
		t.Fatal(err)
	}
	if err := nobody.giveAll(runs, "set"); !errors.Is(err, errLinked) {
		t.Errorf("giveAll of a tree with a file linked from outside: %v, want %v", err, errLinked)
	}
	if got := uid(outside); got != 0 {
		t.Errorf("the file linked from outside the tree is %d's after giveAll, want root's", got)
	}
}

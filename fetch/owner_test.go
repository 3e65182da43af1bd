package fetch

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestGiveLinked checks that root does not hand over a file of the cache that has another
// link: one the user linked in from a file of root's.
func TestGiveLinked(t *testing.T) {
	dir := t.TempDir()
	own := filepath.Join(dir, "root's")
	if err := os.WriteFile(own, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(own, filepath.Join(dir, "fetch-x")); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "fetch-x"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o := cacheOwner{uid: 65534, gid: 65534, set: true}
	if err := o.give(int(f.Fd()), f.Name()); !errors.Is(err, errLinked) {
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
	if err := os.WriteFile(filepath.Join(dir, "root's"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "root's"), filepath.Join(dir, "tars")); err != nil {
		t.Fatal(err)
	}
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	o := cacheOwner{uid: 65534, gid: 65534, set: true}
	if err := o.giveAt(d, "tars"); !errors.Is(err, errLinked) {
		t.Errorf("giveAt of a file with two links: %v, want %v", err, errLinked)
	}
}

// TestGiveAtSymlink checks that giveAt hands over a symlink put in place of what root made,
// never the file it points to.
func TestGiveAtSymlink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to hand a file to another user")
	}
	dir := t.TempDir()
	own := filepath.Join(dir, "root's")
	if err := os.WriteFile(own, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(own, filepath.Join(dir, "tars")); err != nil {
		t.Fatal(err)
	}
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	o := cacheOwner{uid: 65534, gid: 65534, set: true}
	if err := o.giveAt(d, "tars"); err != nil {
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

package install

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"pkg/internal/testfs"
)

// removeTree deletes the tree at path as Root.removeTree does one under its root.
func removeTree(path string) error { return removeIn(filepath.Dir(path), filepath.Base(path)) }

func TestRemoveTree(t *testing.T) {
	top := filepath.Join(t.TempDir(), "tree")
	for i := range 30 {
		dir := filepath.Join(top, fmt.Sprintf("d%d", i%5), fmt.Sprintf("e%d", i%3))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("d0", filepath.Join(top, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(top, "top"), nil, 0o400); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(top, "d1"), 0o555); err != nil {
		t.Fatal(err)
	}
	if err := removeTree(top); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(top); !os.IsNotExist(err) {
		t.Errorf("tree still there: %v", err)
	}
	if err := removeTree(top); err != nil {
		t.Errorf("removing a missing tree: %v", err)
	}
}

// BenchmarkRemoveTree removes a tree of 1,000 empty files in 320 directories two levels
// deep under one top directory, as a package's tree is, on the temporary directory's
// filesystem and on fresh XFS and btrfs, with one worker and with two.
func BenchmarkRemoveTree(b *testing.B) {
	for _, kind := range []string{"tmp", "xfs", "btrfs"} {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/workers=%d", kind, workers), func(b *testing.B) {
				base := b.TempDir()
				if kind != "tmp" {
					base = testfs.Mount(b, kind)
				}
				var m fileStat
				if err := m.at(unix.AT_FDCWD, base, 0); err != nil {
					b.Fatal(err)
				}
				parent, err := unix.Open(base, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
				if err != nil {
					b.Fatal(err)
				}
				defer unix.Close(parent)
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					b.StopTimer()
					top := filepath.Join(base, fmt.Sprint(i))
					for j := range 1000 {
						dir := filepath.Join(top, "usr", fmt.Sprintf("d%d", j%8), fmt.Sprintf("e%d", j%40))
						os.MkdirAll(dir, 0o755)
						os.WriteFile(filepath.Join(dir, fmt.Sprint(j)), nil, 0o644)
					}
					b.StartTimer()
					if err := removeAt(parent, fmt.Sprint(i), m.mount, workers); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestRemoveTreeNotDir checks that a file or symlink where a tree was is unlinked, and a
// symlink's target left alone: a user may replace a package's directory with either, and the
// old tree is then one of them once a reinstall swaps it out.
func TestRemoveTreeNotDir(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.MkdirAll(filepath.Join(target, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	file, link := filepath.Join(dir, "file"), filepath.Join(dir, "link")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, link} {
		if err := removeTree(p); err != nil {
			t.Errorf("removeTree(%s): %v", p, err)
		}
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s still there: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(target, "keep")); err != nil {
		t.Errorf("the symlink's target was touched: %v", err)
	}
}

// asNobody runs the test t again as nobody, for whom modes count, and reports whether it did:
// the caller then returns. Run as nobody, it returns false, and the test runs.
func asNobody(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		return false
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		testfs.Unavailable(t, "setpriv (util-linux) missing: "+err.Error())
	}
	dir := t.TempDir()
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil { // t.TempDir's parent is private to root
		t.Fatal(err)
	}
	for d := filepath.Dir(filepath.Dir(dir)); d != "/"; d = filepath.Dir(d) {
		if info, err := os.Stat(d); err != nil || info.Mode().Perm()&0o001 == 0 {
			testfs.Unavailable(t, d+" is not searchable by other users: set TMPDIR to a directory that is")
		}
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	return true
}

// TestRemoveTreeClosed removes, as its owner, a tree with directories a package may ship
// that only root could enter: mode 000 with files in it, and 0600 around a subdirectory.
// As root, the test runs itself as nobody, for whom modes count.
func TestRemoveTreeClosed(t *testing.T) {
	if asNobody(t) {
		return
	}
	top := filepath.Join(t.TempDir(), "tree")
	for _, d := range []string{"shut/inner", "rw/sub/deeper"} {
		if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(top, d, "f"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct { // innermost first: a closed directory cannot be entered
		dir  string
		mode os.FileMode
	}{{"shut/inner", 0}, {"shut", 0}, {"rw/sub", 0o600}, {"rw", 0o600}} {
		if err := os.Chmod(filepath.Join(top, c.dir), c.mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := removeTree(top); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(top); !os.IsNotExist(err) {
		t.Errorf("tree still there: %v", err)
	}
}

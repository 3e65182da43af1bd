package install

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"pkg/internal/regfile"
	"pkg/internal/testfs"
)

// TestLayoutRefused puts, in a root with a package installed, something pkg did not make in
// the place of a part of its layout: Open refuses the root with an error naming that part
// and what is wrong, and changes nothing, in the root or in what the part leads to (a
// directory whose contents a start would have deleted, a file it would have truncated).
func TestLayoutRefused(t *testing.T) {
	// elsewhere moves the part rel to other and puts a symlink to it in its place.
	elsewhere := func(rel string) func(t *testing.T, root, other string) {
		return func(t *testing.T, root, other string) {
			must(t, os.Rename(filepath.Join(root, rel), filepath.Join(other, filepath.Base(rel))))
			must(t, os.Symlink(filepath.Join(other, filepath.Base(rel)), filepath.Join(root, rel)))
		}
	}
	// to puts a symlink to other in the place of the directory rel.
	to := func(rel string) func(t *testing.T, root, other string) {
		return func(t *testing.T, root, other string) {
			must(t, os.RemoveAll(filepath.Join(root, rel)))
			must(t, os.Symlink(other, filepath.Join(root, rel)))
		}
	}
	symlink := "is a symlink, not the directory pkg made: remove it"
	tests := []struct {
		name, part string
		damage     func(t *testing.T, root, other string)
		root       bool // needs root: to mount, to chown
		problem    string
	}{
		{"trash", ".pkg/trash", to(".pkg/trash"), false, symlink},
		{"staging", ".pkg/staging", to(".pkg/staging"), false, symlink},
		{"saved", ".pkg/saved", to(".pkg/saved"), false, symlink},
		{"dot-pkg", ".pkg", elsewhere(".pkg"), false, symlink},
		{"pkgs", "pkgs", elsewhere("pkgs"), false, symlink},
		{"bin", "bin", elsewhere("bin"), false, symlink},
		{"lock", ".pkg/lock", func(t *testing.T, root, other string) {
			must(t, os.Remove(filepath.Join(root, ".pkg/lock")))
			must(t, os.Symlink(filepath.Join(other, "precious"), filepath.Join(root, ".pkg/lock")))
		}, false, "is a symlink, not the file pkg made: remove it"},
		{"db", ".pkg/db", elsewhere(".pkg/db"), false, "is a symlink, not the file pkg made: remove it"},
		{"trash-file", ".pkg/trash", func(t *testing.T, root, _ string) {
			must(t, os.RemoveAll(filepath.Join(root, ".pkg/trash")))
			must(t, os.WriteFile(filepath.Join(root, ".pkg/trash"), []byte("mine"), 0o644))
		}, false, "is not the directory pkg made: move it away"},
		{"trash-mount", ".pkg/trash", func(t *testing.T, root, _ string) {
			trash := filepath.Join(root, ".pkg/trash")
			must(t, unix.Mount("tmpfs", trash, "tmpfs", 0, "size=1m"))
			t.Cleanup(func() { unix.Unmount(trash, unix.MNT_DETACH) })
			must(t, os.MkdirAll(filepath.Join(trash, "tool.1", "sub"), 0o755))
			must(t, os.WriteFile(filepath.Join(trash, "tool.1", "sub", "f"), []byte("another filesystem's"), 0o644))
		}, true, "is on another filesystem than the root (a mount point), not the directory pkg made: unmount it"},
		{"db-mount", ".pkg/db", func(t *testing.T, root, _ string) {
			// Commit's records would carry the renames of another filesystem than pkgs/'s.
			db := filepath.Join(testfs.Tmpfs(t, 1<<20), "db")
			must(t, os.WriteFile(db, []byte(readFile(t, filepath.Join(root, ".pkg/db"))), 0o644))
			must(t, unix.Mount(db, filepath.Join(root, ".pkg/db"), "", unix.MS_BIND, ""))
			t.Cleanup(func() { unix.Unmount(filepath.Join(root, ".pkg/db"), unix.MNT_DETACH) })
		}, true, "is on another filesystem than the root (a mount point), not the file pkg made: unmount it"},
		{"trash-owner", ".pkg/trash", func(t *testing.T, root, _ string) {
			must(t, os.MkdirAll(filepath.Join(root, ".pkg/trash", "tool.1"), 0o755))
			must(t, os.Chown(filepath.Join(root, ".pkg/trash"), 4242, 4242))
		}, true, "belongs to uid 4242, neither root, this user nor the root's owner (uid 0): pkg did not make it; move it away"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root && os.Geteuid() != 0 {
				testfs.Unavailable(t, "needs root")
			}
			base := t.TempDir()
			root, other := filepath.Join(base, "root"), filepath.Join(base, "other")
			r := openRoot(t, root)
			if _, err := r.installFrom(alignedTar(t, base, version1()), pkgOf("tool", "1")); err != nil {
				t.Fatal(err)
			}
			must(t, r.makeSaved())
			must(t, r.Close())
			// What a start deletes or truncates, were it there.
			must(t, os.MkdirAll(filepath.Join(other, "tool.1", "sub"), 0o755))
			must(t, os.WriteFile(filepath.Join(other, "tool.1", "sub", "f"), []byte("not pkg's"), 0o644))
			must(t, os.WriteFile(filepath.Join(other, "precious"), []byte("not pkg's"), 0o644))
			tt.damage(t, root, other)
			before, beforeOther := testfs.Tree(t, root), testfs.Tree(t, other)

			for _, open := range []func() (*Root, error){
				func() (*Root, error) { return Open(context.Background(), root, Options{}) },
				func() (*Root, error) { return OpenReadOnly(root, Options{}) },
			} {
				r, err := open()
				var le *LayoutError
				if !errors.As(err, &le) || *le != (LayoutError{Root: root, Path: tt.part, Problem: tt.problem}) {
					t.Errorf("Open = %#v, want a *LayoutError of %s %q", err, tt.part, tt.problem)
				}
				if err == nil {
					r.Close()
				}
			}
			testfs.SameTree(t, "root", testfs.Tree(t, root), before)
			testfs.SameTree(t, "other", testfs.Tree(t, other), beforeOther)
		})
	}
}

// TestRemoveTreeConfined checks that a tree is removed only on its own mount, and reached
// through no symlink: a mount point in it is not entered, and a symlinked directory on the
// way to it leaves it be.
func TestRemoveTreeConfined(t *testing.T) {
	base := t.TempDir()
	elsewhere := filepath.Join(base, "elsewhere")
	must(t, os.MkdirAll(filepath.Join(elsewhere, "tree", "d"), 0o755))
	must(t, os.WriteFile(filepath.Join(elsewhere, "tree", "d", "f"), []byte("x"), 0o644))
	must(t, os.Mkdir(filepath.Join(base, "dir"), 0o755))
	must(t, os.Symlink(elsewhere, filepath.Join(base, "dir", "link")))
	if err := removeIn(filepath.Join(base, "dir"), "link/tree"); !errors.Is(err, unix.ELOOP) && !errors.Is(err, unix.ENOTDIR) {
		t.Errorf("removeIn through a symlink = %v, want ELOOP", err)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "tree", "d", "f")); err != nil {
		t.Errorf("the tree beyond the symlink: %v", err)
	}

	if os.Geteuid() != 0 {
		testfs.Unavailable(t, "mounting a tmpfs needs root")
	}
	top := filepath.Join(base, "tree")
	mnt := filepath.Join(top, "a", "mnt")
	must(t, os.MkdirAll(mnt, 0o755))
	must(t, os.WriteFile(filepath.Join(top, "a", "f"), []byte("x"), 0o644))
	must(t, unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"))
	defer unix.Unmount(mnt, unix.MNT_DETACH)
	must(t, os.WriteFile(filepath.Join(mnt, "kept"), []byte("another filesystem's"), 0o644))
	for _, path := range []string{top, mnt} {
		err := removeTree(path)
		if !errors.Is(err, errMountPoint) {
			t.Errorf("removeTree(%s) = %v, want %v", path, err, errMountPoint)
		}
	}
	if got, err := os.ReadFile(filepath.Join(mnt, "kept")); err != nil || string(got) != "another filesystem's" {
		t.Errorf("the mounted filesystem's file: %q, %v", got, err)
	}
	if ents, _ := os.ReadDir(filepath.Join(top, "a")); !slices.EqualFunc(ents, []string{"mnt"}, func(e os.DirEntry, s string) bool { return e.Name() == s }) {
		t.Errorf("left of the tree: %v, want only the mount point", ents)
	}
}

// TestRenameConfined swaps pkgs/ for a symlink once the root is open, as whoever may write
// the root could while a command runs: the commit's exchange goes on in the directory the
// root opened, and never swaps a directory beyond the symlink into staging, whence it
// would be deleted.
func TestRenameConfined(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	staging, _ := stageTool(t, r, base, version1())
	other := filepath.Join(base, "other")
	must(t, os.MkdirAll(filepath.Join(other, "tool"), 0o755))
	must(t, os.WriteFile(filepath.Join(other, "tool", "f"), []byte("not pkg's"), 0o644))
	must(t, os.Rename(r.path("pkgs"), r.path("pkgs.real")))
	must(t, os.Symlink(other, r.path("pkgs")))
	if err := r.swapIn(staging, place{pkgs, "tool"}); err != nil {
		t.Errorf("swapIn with pkgs/ swapped for a symlink: %v", err)
	}
	if got := readFile(t, filepath.Join(other, "tool", "f")); got != "not pkg's" {
		t.Errorf("other/tool/f = %q", got)
	}
	if ents, _ := os.ReadDir(other); len(ents) != 1 {
		t.Errorf("other holds %v", ents)
	}
	if _, err := os.Stat(filepath.Join(base, "root", "pkgs.real", "tool", "libexec", "tool")); err != nil {
		t.Errorf("the tree swapped in: %v", err)
	}
}

// TestTrustedKeys replaces and reads the root's trusted-keys file through the root's
// descriptors: the file is 0644 whatever the umask, a read of a file missing says so, and
// a FIFO in its place is refused at once rather than waited on.
func TestTrustedKeys(t *testing.T) {
	r := openRoot(t, filepath.Join(t.TempDir(), "root"))
	defer r.Close()
	f := r.TrustedKeys()
	if _, err := f.Read(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Read of no file: %v", err)
	}
	old := unix.Umask(0o077)
	err := f.Replace([]byte("keys\n"))
	unix.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := f.Read(); string(got) != "keys\n" || err != nil {
		t.Errorf("Read = %q, %v", got, err)
	}
	if info, err := os.Stat(r.path(".pkg", "trusted-keys")); err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v; want 0644", info.Mode(), err)
	}
	must(t, os.Remove(r.path(".pkg", "trusted-keys")))
	must(t, unix.Mkfifo(r.path(".pkg", "trusted-keys"), 0o644))
	if _, err := f.Read(); !errors.As(err, new(*regfile.NotRegularError)) {
		t.Errorf("Read of a FIFO: %v", err)
	}
}

// TestLayoutErrorText checks the words of a *LayoutError, for a part and for
// the root itself.
func TestLayoutErrorText(t *testing.T) {
	for _, tt := range []struct {
		e    LayoutError
		want string
	}{
		{LayoutError{Root: "/r", Path: ".pkg/trash", Problem: "is a symlink, not the directory pkg made: remove it"}, "root /r: .pkg/trash is a symlink, not the directory pkg made: remove it"},
		{LayoutError{Root: "/r", Path: ".", Problem: "is a symlink: give pkg the directory it leads to"}, "root /r is a symlink: give pkg the directory it leads to"},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

package install

import (
	"archive/tar"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"pkg/internal/testfs"
	"pkg/repo"
	"pkg/tarutil"
)

// foldedEntries differ only in case or Unicode normalization, as 13 pairs of the Linux
// source tree do (xt_CONNMARK.h and xt_connmark.h).
func foldedEntries() []entry {
	return []entry{
		{name: "include/", typ: tar.TypeDir, mode: 0o755},
		{name: "include/xt_CONNMARK.h", typ: tar.TypeReg, mode: 0o644, data: "upper\n"},
		{name: "include/xt_connmark.h", typ: tar.TypeReg, mode: 0o644, data: "lower\n"},
		{name: "caf\u00e9", typ: tar.TypeReg, mode: 0o644, data: "nfc\n"},
		{name: "cafe\u0301", typ: tar.TypeReg, mode: 0o644, data: "nfd\n"},
		{name: "D", typ: tar.TypeSymlink, link: "include"},
		{name: "d/", typ: tar.TypeDir, mode: 0o755},
		{name: "d/x", typ: tar.TypeReg, mode: 0o644, data: "in d\n"},
	}
}

var kernelPkg = repo.Package{Name: "kernel", Version: "1", SHA256: strings.Repeat("a", 64)}

// TestFoldedNamesInstall installs names that differ only in case or normalization where
// directories do not fold them (XFS, btrfs, ext4): each is its own file, and none is
// written through the symlink D.
func TestFoldedNamesInstall(t *testing.T) {
	for _, kind := range []string{"xfs", "btrfs", "ext4"} {
		t.Run(kind, func(t *testing.T) {
			base := testfs.Mount(t, kind)
			if fold, err := foldsAt(t, base); err != nil || fold {
				t.Fatalf("folds(%s) = %v, %v; want false", kind, fold, err)
			}
			r := openRoot(t, filepath.Join(base, "root"))
			defer r.Close()
			if _, err := r.installFrom(alignedTar(t, base, foldedEntries()), kernelPkg); err != nil {
				t.Fatal(err)
			}
			dir := r.pkgDir("kernel")
			for _, e := range foldedEntries() {
				if e.typ == tar.TypeReg {
					if got := readFile(t, filepath.Join(dir, e.name)); got != e.data {
						t.Errorf("%s = %q, want %q", e.name, got, e.data)
					}
				}
			}
			if got := testfs.Tree(t, filepath.Join(dir, "include")); len(got) != 3 { // and "."
				t.Errorf("include/ holds %v, want the two headers only", got)
			}
		})
	}
}

// TestFoldedNamesRefused installs the same names where the root's directories fold them: the
// install is refused before anything is created, naming both members.
func TestFoldedNamesRefused(t *testing.T) {
	t.Run("folding-directory", func(t *testing.T) {
		dir := testfs.Folding(t)
		if fold, err := foldsAt(t, dir); err != nil || !fold {
			t.Fatalf("folds(%s) = %v, %v; want true", dir, fold, err)
		}
		testFoldedRefused(t, dir)
	})
	// Where the kernel can make no folding directory, the refusal itself is checked on an
	// ordinary one that the test says folds.
	t.Run("stand-in", func(t *testing.T) {
		dirFolds = func(int, string) (bool, error) { return true, nil }
		t.Cleanup(func() { dirFolds = folds })
		testFoldedRefused(t, t.TempDir())
	})
}

func testFoldedRefused(t *testing.T, base string) {
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	tarPath := alignedTar(t, t.TempDir(), foldedEntries())
	before := testfs.Tree(t, r.Dir())
	_, err := r.installFrom(tarPath, kernelPkg)
	want := tarutil.FoldedError{Other: "include/xt_CONNMARK.h", Name: "include/xt_connmark.h"}
	if fe := (*tarutil.FoldedError)(nil); !errors.Is(err, tarutil.ErrFolded) || !errors.As(err, &fe) || *fe != want {
		t.Errorf("install: %v, want %v naming both headers", err, tarutil.ErrFolded)
	}
	testfs.SameTree(t, "root", testfs.Tree(t, r.Dir()), before)
	assertEmpty(t, r)
}

// foldsAt is folds of the directory dir.
func foldsAt(t *testing.T, dir string) (bool, error) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	return folds(fd, dir)
}

// TestFoldedPackageNames installs npm packages whose names differ only in case (JSONStream
// and jsonstream, both on npm's registry): where the root's directories fold names, the
// second is refused before anything changes, naming both, since their directories would
// be one; where they do not, both are installed.
func TestFoldedPackageNames(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	if _, err := r.Apply(t.Context(), []*Staged{stageNPM(t, r, base, "JSONStream", "1.3.5")}, nil); err != nil {
		t.Fatal(err)
	}
	dirFolds = func(int, string) (bool, error) { return true, nil }
	t.Cleanup(func() { dirFolds = folds })
	before := testfs.Tree(t, r.Dir())
	_, err := r.Apply(t.Context(), []*Staged{stageNPM(t, r, base, "jsonstream", "1.0.3")}, nil)
	var fe *FoldedNamesError
	if !errors.As(err, &fe) || fe.Name != "jsonstream" || fe.Other != "JSONStream" || !strings.Contains(err.Error(), "differ only in case") {
		t.Errorf("Apply of jsonstream beside JSONStream where names fold: %v, want a *FoldedNamesError naming both", err)
	}
	testfs.SameTree(t, "root", testfs.Tree(t, r.Dir()), before)
	dirFolds = folds
	if _, err := r.Apply(t.Context(), []*Staged{stageNPM(t, r, base, "jsonstream", "1.0.3")}, nil); err != nil {
		t.Errorf("Apply of jsonstream beside JSONStream where names do not fold: %v", err)
	}
}

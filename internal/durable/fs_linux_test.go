package durable

import (
	"os"
	"path/filepath"
	"testing"

	"pkg/internal/testfs"
)

// TestCommit checks that XFS and btrfs are told apart, each written file waited for, and
// the tree renamed into a directory committed with it, without a syncfs.
func TestCommit(t *testing.T) {
	for _, tc := range []struct {
		fs   string
		want kind
	}{{"xfs", journal}, {"btrfs", btrfs}} {
		t.Run(tc.fs, func(t *testing.T) {
			dir := filepath.Join(testfs.Mount(t, tc.fs), "tree")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			f, err := os.Create(filepath.Join(dir, "f"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			files := ForFS(int(f.Fd()))
			if files.kind != tc.want || !files.Tracks() {
				t.Fatalf("ForFS = %v, want %v", files.kind, tc.want)
			}
			if _, err := f.WriteString("data"); err != nil {
				t.Fatal(err)
			}
			files.Start(int(f.Fd()))
			if err := files.Wait(int(f.Fd())); err != nil {
				t.Fatal(err)
			}
			into := filepath.Join(filepath.Dir(dir), "pkgs")
			if err := os.Mkdir(into, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(dir, filepath.Join(into, "tree")); err != nil {
				t.Fatal(err)
			}
			if err := commitPath(into); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestCommitOther checks that a filesystem without a known way is synced whole.
func TestCommitOther(t *testing.T) {
	dir := testfs.Tmpfs(t, 1<<20)
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if files := ForFS(int(f.Fd())); files.Tracks() {
		t.Errorf("tmpfs: ForFS = %v, want syncAll", files.kind)
	}
	if err := commitPath(dir); err != nil {
		t.Fatal(err)
	}
}

// commitPath is Commit of the directory at dir.
func commitPath(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return Commit(f)
}

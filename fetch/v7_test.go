package fetch

import (
	"os"
	"path/filepath"
	"testing"

	"pkg/internal/testfs"
)

// TestV7Tar reads a tar GNU tar writes in the V7 format (no ustar magic: known by its
// checksum), plain and gzip compressed alike, and compares the members with what tar -x
// extracts.
func TestV7Tar(t *testing.T) {
	testfs.NeedTools(t, "tar")
	base := t.TempDir()
	writeTree(t, filepath.Join(base, "hello"))
	testfs.Run(t, base, "tar", "--format=v7", "-cf", "hello.tar", "hello")
	data, err := os.ReadFile(filepath.Join(base, "hello.tar"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "hello.tar.gz"), gzipped(t, data), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	testfs.Run(t, dir, "tar", "-xf", filepath.Join(base, "hello.tar"))
	want := extracted(t, dir)
	for _, name := range []string{"hello.tar", "hello.tar.gz"} {
		got, err := Inspect(t.Context(), filepath.Join(base, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		testfs.SameTree(t, "members of the V7 "+name, membersTree(got.Members), want)
	}
}

package fetch

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"pkg/internal/testfs"
)

// TestBzip2 reads a .tar.bz2 made by tar -cjf, and an empty one made by bzip2, and
// compares the members with what tar -x extracts.
func TestBzip2(t *testing.T) {
	testfs.NeedTools(t, "tar")
	testfs.NeedTools(t, "bzip2")
	base := t.TempDir()
	writeTree(t, filepath.Join(base, "hello"))
	testfs.Run(t, base, "tar", "-cjf", "hello.tar.bz2", "hello")
	got, err := Inspect(t.Context(), filepath.Join(base, "hello.tar.bz2"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	testfs.Run(t, dir, "tar", "-xf", filepath.Join(base, "hello.tar.bz2"))
	testfs.SameTree(t, "members of the .tar.bz2", membersTree(got.Members), extracted(t, dir))

	if err := os.WriteFile(filepath.Join(base, "empty.tar"), make([]byte, 10240), 0o644); err != nil {
		t.Fatal(err)
	}
	testfs.Run(t, base, "bzip2", "empty.tar")
	data, err := os.ReadFile(filepath.Join(base, "empty.tar.bz2"))
	if err != nil {
		t.Fatal(err)
	}
	if st, err := convert(io.Discard, bytes.NewReader(data), conversion{}); err != nil || len(st.Members) != 0 {
		t.Errorf("empty .tar.bz2: %d members, %v", len(st.Members), err)
	}
}

// TestNotBzip2: a tar whose first member's name starts like a bzip2 stream is a tar.
func TestNotBzip2(t *testing.T) {
	st, err := convert(io.Discard, bytes.NewReader(makeTar(t, []file{{"BZh9x", []byte("x")}})), conversion{})
	if err != nil || len(st.Members) != 1 {
		t.Errorf("tar of BZh9x: %d members, %v", len(st.Members), err)
	}
}

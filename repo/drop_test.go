package repo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// undeletable puts at dir/name what os.Remove cannot delete, a directory holding a file,
// as chattr +i would make a file: the deletion of the archive it stands for fails.
func undeletable(t *testing.T, dir, name string) {
	t.Helper()
	file := filepath.Join(dir, name)
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(file, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// checkLeft fails unless d deleted nothing and left exactly archive, its error naming it
// in dir.
func checkLeft(t *testing.T, what string, d Dropped, dir, archive string) {
	t.Helper()
	pe := (*fs.PathError)(nil)
	if d.Deleted != nil || len(d.Left) != 1 || d.Left[0].Archive != archive || !errors.As(d.Left[0].Err, &pe) ||
		pe.Path != filepath.Join(dir, archive) || errors.Is(d.Left[0].Err, ErrOutside) {
		t.Errorf("%s: deleted %q, left %+v; want %s left, its error naming it", what, d.Deleted, d.Left, archive)
	}
}

// TestDropLeft: an archive no entry names whose deletion fails, after the index is
// written and signed, leaves the change made: Add, AddAll and Remove return no error but
// the archive Left, and why.
func TestDropLeft(t *testing.T) {
	dir := t.TempDir()
	s := testSigner("r", time.Now().Add(time.Hour))
	if _, err := Add(t.Context(), dir, writeArchive(t, "a.tar", "one"), Package{Name: "a", Version: "1"}, false, s); err != nil {
		t.Fatal(err)
	}
	undeletable(t, dir, "a-1.tar")
	res, err := Add(t.Context(), dir, writeArchive(t, "a.tar", "two"), Package{Name: "a", Version: "1"}, true, s)
	if err != nil {
		t.Fatalf("Add replacing an archive that cannot be deleted: %v", err)
	}
	checkLeft(t, "Add", res.Dropped, dir, "a-1.tar")
	if ix := checkSigned(t, dir); ix.Packages[0].Archive != "a-1-2.tar" || res.Package.Archive != "a-1-2.tar" {
		t.Errorf("index after Add: %+v, want a 1 of a-1-2.tar", ix.Packages)
	}

	undeletable(t, dir, "a-1-2.tar")
	all, err := AddAll(t.Context(), dir, []string{writeArchive(t, "a.tar", "three")}, []Package{{Name: "a", Version: "1"}}, true, s)
	if err != nil {
		t.Fatalf("AddAll replacing an archive that cannot be deleted: %v", err)
	}
	checkLeft(t, "AddAll", all.Dropped, dir, "a-1-2.tar")

	undeletable(t, dir, "a-1-3.tar")
	rm, err := Remove(t.Context(), dir, Removal{Name: "a"}, s)
	if err != nil {
		t.Fatalf("Remove of an entry whose archive cannot be deleted: %v", err)
	}
	checkLeft(t, "Remove", rm.Dropped, dir, "a-1-3.tar")
	if ix := checkSigned(t, dir); len(ix.Packages) != 0 || len(rm.Packages) != 1 || rm.Packages[0].Archive != "a-1-3.tar" {
		t.Errorf("index after Remove: %+v, removed %+v", ix.Packages, rm.Packages)
	}
}

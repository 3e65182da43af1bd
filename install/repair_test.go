package install

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRebuildRemovesMarkers: the done markers beside the database a repair replaces name
// stamps of that database alone (db.done-ID): the repair removes them, as the new database,
// marked with this pkg's format, never sweeps the markers beside it.
func TestRebuildRemovesMarkers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "root")
	r := openRoot(t, dir)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, ".pkg", "db.done-0000000000004005")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Rebuild(context.Background(), dir, Options{}, func(string) ([]Candidate, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the replaced database's marker after the repair: %v; want it removed", err)
	}
}

// TestRebuildUnmatched: a tree in pkgs/ that no candidate matches stops the repair before
// it changes anything, as an *UnmatchedError naming the tree: the database stays, and the
// tree with it.
func TestRebuildUnmatched(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "root")
	r := openRoot(t, dir)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	stranger := filepath.Join(dir, "pkgs", "stranger")
	if err := os.MkdirAll(filepath.Join(stranger, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(dir, ".pkg", "db"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Rebuild(context.Background(), dir, Options{}, func(string) ([]Candidate, error) { return nil, nil })
	if ue := (*UnmatchedError)(nil); !errors.As(err, &ue) || !slices.Equal(ue.Trees, []string{stranger}) {
		t.Fatalf("Rebuild with an unknown tree: %v; want an *UnmatchedError naming %s", err, stranger)
	}
	if after, err := os.ReadFile(filepath.Join(dir, ".pkg", "db")); err != nil || !bytes.Equal(after, before) {
		t.Errorf("the database after the refused repair: %v, changed %v", err, !bytes.Equal(after, before))
	}
	if kept, _ := filepath.Glob(filepath.Join(dir, ".pkg", "db.damaged-*")); len(kept) != 0 {
		t.Errorf("the refused repair kept %v", kept)
	}
	if _, err := os.Stat(filepath.Join(stranger, "bin")); err != nil {
		t.Errorf("the unknown tree: %v", err)
	}
}

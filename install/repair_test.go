package install

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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

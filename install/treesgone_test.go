package install

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"pkg/db"
)

// TestTreesGone: a recorded package's tree is gone where pkgs/ holds nothing of its name,
// or something that is no directory (as hasTree judges it), and there where a directory is.
func TestTreesGone(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "pkgs", "here"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pkgs", "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	recs := []db.Record{{Name: "here", Version: "1"}, {Name: "file", Version: "1"}, {Name: "none", Version: "1"}}
	if got, want := TreesGone(dir, recs), []string{"file", "none"}; !slices.Equal(got, want) {
		t.Errorf("TreesGone: %v, want %v", got, want)
	}
}

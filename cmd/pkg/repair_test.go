package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRepairFailedKeepsDatabase: a repair that fails before its new database is whole
// (here its creation, refused by a directory in the way) leaves the root's database as
// it was, with the records of what the user asked for, not a root with none, where a start
// would create an empty one and the next repair find nothing to salvage.
func TestRepairFailedKeepsDatabase(t *testing.T) {
	d := newDamagedDB(t)
	var ways []string
	for _, name := range []string{"db.new", "db.rebuilt.new"} { // what the creation of a database writes
		way := filepath.Join(d.e.root, ".pkg", name)
		if err := os.MkdirAll(filepath.Join(way, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
		ways = append(ways, way)
	}
	if _, stderr, code := d.e.pkg("verify", "--repair"); code != 1 {
		t.Fatalf("verify --repair with its database's creation refused: exit %d\n%s", code, stderr)
	}
	for _, way := range ways {
		if err := os.RemoveAll(way); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := os.ReadFile(d.path); err != nil || !bytes.Equal(got, d.good) {
		t.Errorf("the database after the failed repair: %v; want it as it was", err)
	}
	if kept, _ := filepath.Glob(d.path + ".damaged-*"); len(kept) != 0 {
		t.Errorf("the failed repair kept %v", kept)
	}
	if got := d.e.list(); !slices.Equal(got, d.listed) {
		t.Errorf("list after the failed repair: %v, want %v", got, d.listed)
	}
	d.e.ok("verify", "--repair")
	if got := d.e.list(); !slices.Equal(got, d.listed) {
		t.Errorf("list after the repair: %v, want %v", got, d.listed)
	}
}

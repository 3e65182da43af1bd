package install

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNotes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "root")
	r, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if ns := r.Notes(); len(ns) != 0 {
		t.Errorf("a new root's notes: %v", ns)
	}
	r.found, r.left = "undid an interrupted install of app", errors.New("trash/1: busy")
	if os.Geteuid() == 0 {
		if err := os.Chown(dir, 1000, 1000); err != nil {
			t.Fatal(err)
		}
	}
	want := []Note{
		{false, "an earlier pkg command was cut short: undid"},
		{true, "could not delete what an earlier command left behind (the root is as recorded; delete it by hand): trash/1"},
		{false, "running as root in " + dir + ", which belongs to uid 1000"},
	}
	if os.Geteuid() != 0 {
		want = want[:2]
	}
	ns := r.Notes()
	if len(ns) != len(want) {
		t.Fatalf("notes: %v, want %d", ns, len(want))
	}
	for i, n := range ns {
		if n.Warn != want[i].Warn || !strings.HasPrefix(n.Text, want[i].Text) {
			t.Errorf("note %d: %+v, want %+v...", i, n, want[i])
		}
	}
}

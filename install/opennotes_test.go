package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pkg/db"
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

func TestUndone(t *testing.T) {
	many := make([]db.Intent, 10)
	for i := range many {
		many[i] = db.Intent{Op: "install", Name: fmt.Sprintf("p%d", i)}
	}
	for _, c := range []struct {
		ins  []db.Intent
		want []string
	}{
		{nil, nil},
		{[]db.Intent{{Op: "install", Name: "a"}, {Op: "remove", Name: "b"}, {Op: "install", Name: "c"}},
			[]string{"undid an interrupted install of a, c", "undid an interrupted remove of b"}},
		{many, []string{"undid an interrupted install of p0, p1, p2, p3, p4, p5, p6, p7 and 2 more"}},
	} {
		if got := undone(c.ins); !slices.Equal(got, c.want) {
			t.Errorf("undone(%v) = %q, want %q", c.ins, got, c.want)
		}
	}
}

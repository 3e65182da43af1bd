package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"pkg/db"
	"pkg/notice"
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
	busy := errors.New("trash/1: busy")
	r.found, r.left = notice.RootRecovered{Undone: []notice.Undone{{Op: "install", Names: []string{"app"}}}}, busy
	if os.Geteuid() == 0 {
		if err := os.Chown(dir, 1000, 1000); err != nil {
			t.Fatal(err)
		}
	}
	want := []notice.Notice{r.found, notice.RootLeftover{Err: busy}, notice.RootOfUser{Dir: dir, UID: 1000}}
	if os.Geteuid() != 0 {
		want = want[:2]
	}
	if ns := r.Notes(); !reflect.DeepEqual(ns, want) {
		t.Errorf("notes: %+v, want %+v", ns, want)
	}
}

func TestUndone(t *testing.T) {
	many := make([]db.Intent, 10)
	for i := range many {
		many[i] = db.Intent{Op: "install", Name: fmt.Sprintf("p%d", i)}
	}
	for _, c := range []struct {
		ins  []db.Intent
		want []notice.Undone
	}{
		{nil, nil},
		{[]db.Intent{{Op: "install", Name: "a"}, {Op: "remove", Name: "b"}, {Op: "install", Name: "c"}},
			[]notice.Undone{{Op: "install", Names: []string{"a", "c"}}, {Op: "remove", Names: []string{"b"}}}},
		{many, []notice.Undone{{Op: "install", Names: []string{"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9"}}}},
	} {
		if got := undone(c.ins); !reflect.DeepEqual(got, c.want) {
			t.Errorf("undone(%v) = %q, want %q", c.ins, got, c.want)
		}
	}
}

// TestReplacedLeftover: a commit cut short at its end, its roll-forward done, leaves in
// staging the old trees it replaced; the next start deletes them as replaced trees, not
// as unfinished installs, which a tree staged for an install never recorded is.
func TestReplacedLeftover(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	for _, v := range []string{"1", "2"} {
		s := stageIn(t, r, base, prefixPkg("a", v), tree("etc/a="+v))
		if _, err := r.Apply(context.Background(), []*Staged{s}, nil); err != nil {
			t.Fatal(err)
		}
		if v == "2" { // the old tree at its staging name, where the exchange put it
			if err := os.MkdirAll(r.path(".pkg", "staging", s.name, "etc"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, name := range []string{"big.7", "@scope+tool@1.0.0.8"} {
		if err := os.MkdirAll(r.path(".pkg", "staging", name, "etc"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.Close() // the crash

	r = openRoot(t, dir)
	defer r.Close()
	// An npm instance of a scoped name is said by its key, as every command names it, not
	// by its tree's file name (@scope+tool@1.0.0).
	if got := r.found; !reflect.DeepEqual(got.Replaced, []string{"a"}) || !reflect.DeepEqual(got.Unfinished, []string{"@scope/tool@1.0.0", "big"}) {
		t.Errorf("recovered %+v, want a's tree replaced and the installs of @scope/tool@1.0.0 and big unfinished", got)
	}
	if names, _ := os.ReadDir(r.path(".pkg", "staging")); len(names) != 0 {
		t.Errorf("staging after the start: %v", names)
	}
}

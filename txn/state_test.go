package txn_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"pkg/db"
	"pkg/install"
	"pkg/repo"
	"pkg/txn"
)

func TestOffered(t *testing.T) {
	w := newWorld(t)
	addPackage(t, w.repo, "hello", "1.0")
	addPackage(t, w.repo, "hello", "1.1")
	ix := w.index(filepath.Join(t.TempDir(), "root"))
	if p, err := txn.Offered(ix, "hello", nil); err != nil || p.Version != "1.1" {
		t.Errorf("Offered(hello) = %s, %v; want 1.1", p.Version, err)
	}
	_, err := txn.Offered(ix, "jello", []db.Record{{Name: "jelly"}})
	var ne *txn.NotOfferedError
	if !errors.As(err, &ne) || ne.Name != "jello" || ne.Close != `; did you mean "hello" or "jelly"?` {
		t.Errorf("Offered(jello) = %v", err)
	}
}

func TestRequirements(t *testing.T) {
	got := txn.Requirements(map[string]string{"a": "a>=1", "b": "b", "c": "c>>"})
	if len(got) != 2 {
		t.Errorf("Requirements = %v, want a>=1 and b", got)
	}
	for _, r := range got {
		if r.Name == "a" && (len(r.Constraints) != 1 || r.Constraints[0] != (repo.Constraint{Op: ">=", Version: "1"})) {
			t.Errorf("a>=1 parsed as %v", r)
		}
	}
}

func TestReadInstalled(t *testing.T) {
	w := newWorld(t)
	addPackage(t, w.repo, "lib", "1.0")
	addPackage(t, w.repo, "hello", "1.0", "lib")
	dir := filepath.Join(t.TempDir(), "root")
	w.install(dir, "hello>=1")
	r, err := install.Open(context.Background(), dir, install.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.DB().Request(map[string]string{"hello": "hello>=1"}); err != nil {
		t.Fatal(err)
	}
	r.Close()
	var recs []db.Record
	var requested map[string]string
	err = install.View(dir, install.Options{}, nil, func(d *db.DB) (err error) {
		recs, requested, err = txn.ReadInstalled(d)
		return err
	})
	if err != nil || len(recs) != 2 || len(requested) != 1 || requested["hello"] != "hello>=1" {
		t.Errorf("ReadInstalled = %v, %v, %v; want hello and lib, hello>=1 requested", recs, requested, err)
	}
}

package txn_test

import (
	"errors"
	"path/filepath"
	"testing"

	"pkg/db"
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
	_, err := txn.Offered(ix, "jello", []db.Package{{Name: "jelly"}})
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

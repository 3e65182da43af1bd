package txn_test

import (
	"errors"
	"path/filepath"
	"testing"

	"pkg/db"
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

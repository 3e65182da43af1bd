package session_test

import (
	"errors"
	"path/filepath"
	"testing"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/session"
	"pkg/txn"
)

// TestOfferedPackage: a package not installed is offered at the version a new install
// takes; a name the index lacks is a *session.NotOfferedError offering the close names of
// the index and of the installed packages.
func TestOfferedPackage(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	for _, v := range []string{"1.0", "1.1"} {
		publish(t, dir, "hello", v)
	}
	cache, err := fetch.OpenCache(t.Context(), filepath.Join(base, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	ix, err := txn.ReadIndex(t.Context(), cache, filepath.Join(base, "root"), install.Options{}, dir, fetch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := session.OfferedPackage(ix, "hello", nil); err != nil || p.Version != "1.1" {
		t.Errorf("offeredPackage(hello) = %s, %v; want 1.1", p.Version, err)
	}
	_, err = session.OfferedPackage(ix, "jello", []db.Record{{Name: "jelly"}})
	var ne *session.NotOfferedError
	if !errors.As(err, &ne) || ne.Name != "jello" || ne.Close != `; did you mean "hello" or "jelly"?` {
		t.Errorf("offeredPackage(jello) = %v", err)
	}
}

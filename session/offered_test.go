package session_test

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/pkgtest/testrepo"
	"pkg/repo"
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
	ix := readIndex(t, base, dir)
	if p, err := session.OfferedPackage(ix, "hello", nil); err != nil || p.Version != "1.1" {
		t.Errorf("offeredPackage(hello) = %s, %v; want 1.1", p.Version, err)
	}
	_, err := session.OfferedPackage(ix, "jello", []db.Record{{Name: "jelly"}})
	var ne *session.NotOfferedError
	if !errors.As(err, &ne) || ne.Name != "jello" || ne.Close != `; did you mean "hello" or "jelly"?` {
		t.Errorf("offeredPackage(jello) = %v", err)
	}
}

// TestOfferedVirtual: a virtual name, which no package of the index is named, is a
// *session.NotOfferedError naming the packages that provide it, of the index and
// installed, as pkg why and pkg remove name the installed ones.
func TestOfferedVirtual(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	publish(t, dir, "hello", "1.0")
	tmp := t.TempDir()
	if _, err := testrepo.Publish(t.TempDir(), tmp, "gawk", "1.0"); err != nil {
		t.Fatal(err)
	}
	gawk := repo.Package{Name: "gawk", Version: "1.0", Provides: testrepo.Requires("awk"), Bin: testrepo.Commands("bin/gawk")}
	if _, err := repo.Add(t.Context(), dir, filepath.Join(tmp, "gawk-1.0.tar"), gawk, false, nil); err != nil {
		t.Fatal(err)
	}
	ix := readIndex(t, base, dir)
	// gawk installed and offered both is named once.
	_, err := session.OfferedPackage(ix, "awk", []db.Record{{Name: "mawk", Provides: testrepo.Requires("awk")}, {Name: "awkuser"},
		{Name: "gawk", Version: "1.0", Provides: testrepo.Requires("awk")}})
	var ne *session.NotOfferedError
	if !errors.As(err, &ne) || !slices.Equal(ne.ProvidedBy, []string{"gawk", "mawk"}) || ne.Close != "" {
		t.Errorf("offeredPackage(awk) = %#v, want one naming gawk and mawk, which provide it, each once", err)
	}
}

// readIndex reads the index of the repository dir through a cache and for a root made in
// base.
func readIndex(t *testing.T, base, dir string) *txn.Catalog {
	t.Helper()
	cache, err := fetch.OpenCache(t.Context(), filepath.Join(base, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cache.Close() })
	ix, err := txn.ReadIndex(t.Context(), cache, filepath.Join(base, "root"), install.Options{}, dir, fetch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

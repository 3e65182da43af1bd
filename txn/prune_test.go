package txn_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"pkg/fetch"
	"pkg/install"
	"pkg/txn"
)

// TestPruneAcrossRoots prunes a cache two roots install from: what either root uses is
// kept, until the other root is gone, which the prune forgets.
func TestPruneAcrossRoots(t *testing.T) {
	w := newWorld(t)
	hello := addPackage(t, w.repo, "hello", "1")
	tool := addPackage(t, w.repo, "tool", "1")
	old := addPackage(t, w.repo, "old", "1")
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	w.install(a, "hello", "old")
	w.install(b, "tool")

	used, forgot, err := txn.Used(w.cache, a, install.Options{})
	if err != nil || len(forgot) != 0 || !used[hello.SHA256] || !used[tool.SHA256] || !used[old.SHA256] {
		t.Fatalf("Used with both roots: %v, forgot %v, %v; want hello, tool and old", used, forgot, err)
	}
	if err := w.cache.Exclusive(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	t0, _, err := txn.Prune(w.cache, a, install.Options{}, fetch.Limits{})
	if err != nil || len(t0.Removed) != 0 {
		t.Errorf("Prune with both roots: removed %v, %v; want none", t0.Removed, err)
	}
	if err := os.RemoveAll(b); err != nil {
		t.Fatal(err)
	}
	t1, forgot, err := txn.Prune(w.cache, a, install.Options{}, fetch.Limits{})
	if removed := t1.Removed; err != nil || len(removed) != 1 || removed[0].SHA256 != tool.SHA256 || !slices.Equal(forgot, []string{b}) {
		t.Errorf("Prune once root b is gone: removed %v, forgot %v, %v; want tool, and b forgotten", t1.Removed, forgot, err)
	}
	if roots, err := w.cache.Roots(); err != nil || !slices.Equal(roots, []string{a}) {
		t.Errorf("roots after: %v, %v; want only %s", roots, err, a)
	}
}

// TestPruneUnreadableRoot: a root the cache records that cannot be read stops the prune.
func TestPruneUnreadableRoot(t *testing.T) {
	w := newWorld(t)
	addPackage(t, w.repo, "hello", "1")
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	w.install(a, "hello")
	w.install(b, "hello")
	if err := os.WriteFile(filepath.Join(b, ".pkg", "db"), []byte("not a database, but long enough to be one"+string(make([]byte, 20000))), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := txn.Used(w.cache, a, install.Options{}); err == nil {
		t.Errorf("Used with an unreadable root: no error")
	}
}

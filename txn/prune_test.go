package txn_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

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

// TestAutoPrune: an automatic prune does nothing without limits, starts counting on a cache
// never pruned, waits a day between prunes, skips a cache another command uses, and, when
// due, removes what the limits let go but what a root uses.
func TestAutoPrune(t *testing.T) {
	w := newWorld(t)
	hello := addPackage(t, w.repo, "hello", "1")
	old := addPackage(t, w.repo, "old", "1")
	recent := addPackage(t, w.repo, "recent", "1")
	base := t.TempDir()
	a, gone := filepath.Join(base, "a"), filepath.Join(base, "gone")
	w.install(a, "hello")
	w.install(gone, "old", "recent", "hello")
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	for _, sha := range []string{hello.SHA256, old.SHA256} {
		was := time.Now().Add(-40 * 24 * time.Hour)
		if err := os.Chtimes(w.cache.Path(sha), was, was); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Dir(filepath.Dir(w.cache.RootFile("/"))) // the cache's
	age := func(d time.Duration) {                           // the last prune, as <cache>/last-prune records it
		was := time.Now().Add(-d)
		if err := os.Chtimes(filepath.Join(dir, "last-prune"), was, was); err != nil {
			t.Fatal(err)
		}
	}
	month := fetch.Limits{OlderThan: 30 * 24 * time.Hour}
	step := func(what string, l fetch.Limits, wantDone bool, wantRemoved ...string) {
		t.Helper()
		got, _, done, err := txn.AutoPrune(w.cache, a, install.Options{}, l)
		var names []string
		for _, e := range got.Removed {
			names = append(names, e.Name)
		}
		if err != nil || done != wantDone || !slices.Equal(names, wantRemoved) {
			t.Errorf("AutoPrune %s: done %v, removed %v, %v; want done %v, removed %v", what, done, names, err, wantDone, wantRemoved)
		}
	}

	step("without limits", fetch.Limits{}, false)
	if last, err := w.cache.LastPruned(); err != nil || !last.IsZero() {
		t.Errorf("LastPruned after AutoPrune without limits: %v, %v; want none", last, err)
	}
	step("on a cache never pruned", month, false)
	step("pruned just now", month, false)

	age(2 * txn.AutoEvery)
	other, err := fetch.OpenCache(context.Background(), dir) // another command's
	if err != nil {
		t.Fatal(err)
	}
	step("while another command uses the cache", month, false)
	other.Close()
	step("due", month, true, "old")
	step("once pruned", month, false)
	if !w.cache.Has(hello.SHA256) || !w.cache.Has(recent.SHA256) || w.cache.Has(old.SHA256) {
		t.Errorf("after AutoPrune: hello %v, recent %v, old %v cached; want hello and recent",
			w.cache.Has(hello.SHA256), w.cache.Has(recent.SHA256), w.cache.Has(old.SHA256))
	}
}

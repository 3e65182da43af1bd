package txn_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"pkg/repo"
	"pkg/txn"
)

// TestRelocateCached: a sync's plan of a lockfile of a repository directory reads from the
// repository an archive the cache held when the plan was made and has not when it fetches
// (pruned meanwhile, or dropped as damaged), rather than refuse the lockfile's file URL.
func TestRelocateCached(t *testing.T) {
	w := newWorld(t)
	hello := addPackage(t, w.repo, "hello", "1")
	w.install(filepath.Join(t.TempDir(), "root"), "hello")
	fresh := openRoot(t)
	ix := w.index(fresh.Dir())
	path := filepath.Join(t.TempDir(), "pkg.lock")
	l, err := txn.Lock(nil, ix, []repo.Requirement{{Name: "hello"}}, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.WriteLock(path, l); err != nil {
		t.Fatal(err)
	}
	if l, err = repo.ReadLock(path); err != nil {
		t.Fatal(err)
	}
	sp, _, err := txn.SyncPlan(fresh, l, false, w.cache)
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Relocate(l, ix.Sources(), w.cache); err != nil {
		t.Fatal(err)
	}
	tars := filepath.Join(filepath.Dir(w.repo), "cache", "tars")
	for _, ext := range []string{".tar", ".idx"} {
		if err := os.Remove(filepath.Join(tars, hello.SHA256+ext)); err != nil {
			t.Fatal(err)
		}
	}
	sp.Bind(txn.Target{Root: fresh, Fetcher: fetcher(ix, w.cache)})
	if _, err := sp.Apply(context.Background()); err != nil {
		t.Fatalf("sync of hello, its cache entry gone since the plan: %v", err)
	}
	if got := says(t, fresh.Dir(), "hello"); got != "hello 1" {
		t.Errorf("hello says %q, want %q", got, "hello 1")
	}
}

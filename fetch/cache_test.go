package fetch

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"pkg/repo"
)

// TestFetchLocal fetches from a repository directory, and again from the cache.
func TestFetchLocal(t *testing.T) {
	dir, p := localRepo(t)
	s, err := NewSource(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := openCache(t)
	var progress countWriter
	tar, err := c.Fetch(context.Background(), s, p, &progress)
	if err != nil || tar != c.Path(p.SHA256) {
		t.Fatalf("Fetch = %q, %v", tar, err)
	}
	if progress.n != p.Size {
		t.Errorf("progress saw %d bytes, want %d", progress.n, p.Size)
	}
	checkEntry(t, c, p, testFiles())
	os.Remove(filepath.Join(dir, p.Archive))
	if _, err := c.Fetch(context.Background(), s, p, nil); err != nil {
		t.Errorf("second Fetch, from the cache: %v", err)
	}
}

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// TestFetchConcurrent fetches one package from several goroutines into one cache.
func TestFetchConcurrent(t *testing.T) {
	archive, p := testArchive(t)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) { serveArchive(w, r, archive) })
	c := openCache(t)
	s := quick(t, srv.URL)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = fetchOne(c, s, p) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	checkEntry(t, c, p, testFiles())
	if ents, _ := os.ReadDir(filepath.Join(c.dir, "tmp")); len(ents) != 0 {
		t.Errorf("%d temporary files left", len(ents))
	}
}

// TestListRemove lists two entries, removes one, and removes stale leftovers.
func TestListRemove(t *testing.T) {
	c := openCache(t)
	dir := t.TempDir()
	var pkgs []repo.Package
	for _, name := range []string{"zeta", "alpha"} {
		files := []file{{name + "/f", []byte(name)}}
		archive := gzipped(t, makeTar(t, files))
		p := entry(name, archive, files)
		os.WriteFile(filepath.Join(dir, p.Archive), archive, 0o644)
		pkgs = append(pkgs, p)
	}
	s, _ := NewSource(dir, Options{})
	for _, p := range pkgs {
		if err := fetchOne(c, s, p); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleAge)
	orphan := c.idxPath("00")
	os.WriteFile(orphan, nil, 0o644)
	os.Chtimes(orphan, old, old)
	es, err := c.List()
	if err != nil || len(es) != 2 || es[0].Name != "alpha" || es[1].Name != "zeta" || es[0].Version != "1.0" ||
		es[0].Size == 0 || time.Since(es[0].Used) > time.Minute {
		t.Fatalf("List = %+v, %v", es, err)
	}
	removed, err := c.Remove(func(e Entry) bool { return e.Name == "alpha" })
	if err != nil || len(removed) != 1 || removed[0].Name != "zeta" {
		t.Errorf("Remove = %+v, %v", removed, err)
	}
	if c.Has(pkgs[0].SHA256) || !c.Has(pkgs[1].SHA256) {
		t.Errorf("after Remove: zeta cached %v, alpha cached %v", c.Has(pkgs[0].SHA256), c.Has(pkgs[1].SHA256))
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("stale digests without a tar survived Remove: %v", err)
	}
}

// TestStaleTemporary removes a day-old temporary file at open, and keeps a fresh one.
func TestStaleTemporary(t *testing.T) {
	c := openCache(t)
	stale, fresh := filepath.Join(c.dir, "tmp", "stale.tar"), filepath.Join(c.dir, "tmp", "fresh.tar")
	os.WriteFile(stale, nil, 0o644)
	os.WriteFile(fresh, nil, 0o644)
	old := time.Now().Add(-2 * staleAge)
	os.Chtimes(stale, old, old)
	if _, err := OpenCache(c.dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary file survived: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("fresh temporary file removed: %v", err)
	}
}

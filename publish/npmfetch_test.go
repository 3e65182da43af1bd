package publish

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// tarballOf returns the lockTarball of name at 1.0.0 whose integrity is that of data,
// resolved at base/name.tgz.
func tarballOf(name, data, base string) lockTarball {
	sums := sha512s(integrity(data))
	return lockTarball{Key: "node_modules/" + name, Name: name, Version: "1.0.0", Resolved: base + "/" + name + ".tgz",
		Integrity: integrity(data), SHA512: sums}
}

// cacheHolding returns an npm cache directory holding each of data, as npm writes it.
func cacheHolding(t *testing.T, data ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range data {
		p := cachedPath(dir, sha512s(integrity(d))[0])
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(d), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// registry serves files, name to contents, at /NAME, counting the GETs.
func registry(t *testing.T, files map[string]string) (*httptest.Server, *atomic.Int32) {
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		data, ok := files[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(data))
	}))
	t.Cleanup(srv.Close)
	return srv, &gets
}

func TestNPMFetcher(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // where fetch.Local downloads
	srv, gets := registry(t, map[string]string{"a.tgz": "a", "b.tgz": "b", "c.tgz": "c"})
	cache := cacheHolding(t, "a")
	damaged := cachedPath(cache, sha512s(integrity("c"))[0]) // holds other bytes than its name says
	os.MkdirAll(filepath.Dir(damaged), 0o755)
	os.WriteFile(damaged, []byte("not c"), 0o444)
	ts := []lockTarball{tarballOf("a", "a", srv.URL), tarballOf("b", "b", srv.URL), tarballOf("c", "c", srv.URL)}

	inRepo := writeFile(t, "b-1.0.0.tgz", "b") // the repository's archive of b
	got, err := npmFetcher{Cache: cache, Have: map[string]string{"b@1.0.0": inRepo, "c@1.0.0": writeFile(t, "c-1.0.0.tgz", "not c")}, Jobs: 2}.getAll(context.Background(), ts)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].From != "" || got[0].Path != cachedPath(cache, ts[0].SHA512[0]) {
		t.Errorf("a: from %q at %s, want npm's cache", got[0].From, got[0].Path)
	}
	if got[1].From != "" || got[1].Path != inRepo {
		t.Errorf("b: from %q at %s, want the repository's", got[1].From, got[1].Path)
	}
	if data, err := os.ReadFile(got[2].Path); err != nil || string(data) != "c" || got[2].From != ts[2].Resolved {
		t.Errorf("c: %q from %q, want it downloaded", data, got[2].From)
	}
	if gets.Load() != 1 {
		t.Errorf("%d downloads, want 1 (c, damaged in the cache and the repository)", gets.Load())
	}
	removeGot(got)
	if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) != 0 || !exists(got[0].Path) {
		t.Errorf("after removeGot, %d downloads left, npm's cache file there: %v", len(left), exists(got[0].Path))
	}
}

// writeFile writes data to a file named name in a new directory and returns its path.
func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func exists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// TestNPMFetcherRefuses: a tarball whose bytes are not its integrity's, or that an offline
// fetcher's cache lacks, is refused naming it, and nothing downloaded stays.
func TestNPMFetcherRefuses(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	srv, _ := registry(t, map[string]string{"a.tgz": "a", "b.tgz": "evil", "c.tgz": "c"})
	good, bad := tarballOf("a", "a", srv.URL), tarballOf("b", "b", srv.URL)
	gone := tarballOf("c", "c", srv.URL)
	gone.Resolved = srv.URL + "/missing.tgz"

	_, err := npmFetcher{Jobs: 1}.getAll(context.Background(), []lockTarball{good, bad, tarballOf("c", "c", srv.URL)})
	var ie *integrityError
	var le *NPMLockError
	if !errors.As(err, &ie) || ie.Name != "b" || ie.From != bad.Resolved || ie.Want != bad.Integrity || ie.Got != integrity("evil") ||
		!errors.As(err, &le) || le.Key != "node_modules/b" {
		t.Errorf("a tarball of other bytes: %v, want an integrity error naming b, its URL and both digests", err)
	}
	if _, err := (npmFetcher{Jobs: 4}).getAll(context.Background(), []lockTarball{good, gone}); !errors.As(err, &le) || le.Key != "node_modules/c" {
		t.Errorf("a tarball the registry lacks: %v, want an error naming c", err)
	}
	cache := cacheHolding(t, "a")
	if got, err := (npmFetcher{Cache: filepath.Join(cache, "_cacache"), Offline: true}).getAll(context.Background(), []lockTarball{good}); err != nil || len(got) != 1 {
		t.Errorf("offline, from the cache's _cacache directory: %v", err)
	}
	if _, err := (npmFetcher{Cache: cache, Offline: true}).getAll(context.Background(), []lockTarball{good, bad}); !errors.Is(err, ErrNotInNPMCache) ||
		!errors.As(err, &le) || le.Key != "node_modules/b" {
		t.Errorf("offline, b not in the cache: %v", err)
	}
	if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) != 0 {
		t.Errorf("%d downloads left behind", len(left))
	}
}

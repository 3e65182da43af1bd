package fetch

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"pkg/repo"
)

// file is a member of a test archive.
type file struct {
	name string
	data []byte
}

// testFiles are a few members, one big enough to be aligned, of data gzip cannot shrink
// much, so that a download takes many reads.
func testFiles() []file {
	rng := rand.New(rand.NewPCG(1, 2))
	big := make([]byte, 3<<20+123)
	for i := range big {
		big[i] = byte(rng.IntN(64))
	}
	return []file{
		{"bin/tool", []byte("#!/bin/sh\necho hi\n")},
		{"share/big", big},
		{"share/empty", nil},
	}
}

// makeTar writes files as a tar.
func makeTar(t testing.TB, files []file) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(f.data)), ModTime: time.Unix(1700000000, 0)}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gzipped(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// entry describes an archive of files as an index entry.
func entry(name string, archive []byte, files []file) repo.Package {
	sum := sha256.Sum256(archive)
	p := repo.Package{Name: name, Version: "1.0", Archive: name + ".tar.gz", Size: int64(len(archive)),
		SHA256: hex.EncodeToString(sum[:]), Files: len(files)}
	for _, f := range files {
		p.InstalledSize += int64(len(f.data))
	}
	return p
}

// testArchive returns the gzipped test archive and its index entry.
func testArchive(t testing.TB) ([]byte, repo.Package) {
	files := testFiles()
	archive := gzipped(t, makeTar(t, files))
	return archive, entry("demo", archive, files)
}

// server is an HTTP repository whose handler a test writes, recording the requests.
type server struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []http.Header
}

func newServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, n int)) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reqs = append(s.reqs, r.Header.Clone())
		n := len(s.reqs)
		s.mu.Unlock()
		handle(w, r, n)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) requests() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.reqs...)
}

// requestsSeen returns how many requests the server's handler has seen, once it has seen
// n or 10 s have passed: a request the client gave up on may reach the handler after the
// client returned, when the machine is loaded.
func (s *server) requestsSeen(n int) int {
	for deadline := time.Now().Add(10 * time.Second); len(s.requests()) < n && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	return len(s.requests())
}

// indexRead serves the index of one package, reads it once into a new cache through a
// quick source and returns the three: for tests of what a later read finds.
func indexRead(t *testing.T) (*server, *Cache, *Source) {
	t.Helper()
	_, p := testArchive(t)
	index := writeIndex(t, p)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) { w.Write(index) })
	c, s := openCache(t), quick(t, srv.URL)
	if _, err := c.indexOnly(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	return srv, c, s
}

// serveArchive serves data with an ETag, handling Range and If-Range.
func serveArchive(w http.ResponseWriter, r *http.Request, data []byte) {
	w.Header().Set("ETag", `"v1"`)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
}

// quick makes a source that retries without waiting long.
func quick(t testing.TB, location string) *Source {
	t.Helper()
	s, err := NewSource(location, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.backoff = time.Millisecond
	return s
}

func openCache(t testing.TB) *Cache {
	t.Helper()
	c, err := OpenCache(context.Background(), filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// checkEmpty fails unless the cache holds no entry and no temporary file.
func checkEmpty(t testing.TB, c *Cache) {
	t.Helper()
	for _, d := range []string{"tars", "tmp"} {
		ents, err := os.ReadDir(filepath.Join(c.dir, d))
		if err != nil || len(ents) != 0 {
			t.Errorf("cache %s: %d files (%v), want none", d, len(ents), err)
		}
	}
}

// checkEntry fails unless p is in the cache with the right digests.
func checkEntry(t testing.TB, c *Cache, p repo.Package, files []file) {
	t.Helper()
	if !c.Has(p.SHA256) {
		t.Fatalf("%s is not in the cache", p.Name)
	}
	members, err := c.Members(p.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	var sums [][32]byte
	for _, m := range members {
		if m.Type == tar.TypeReg {
			sums = append(sums, m.SHA256)
		}
	}
	if len(sums) != len(files) {
		t.Fatalf("%d digests, want %d", len(sums), len(files))
	}
	for i, f := range files {
		if sums[i] != sha256.Sum256(f.data) {
			t.Errorf("digest of %s is %x, want its sha256", f.name, sums[i])
		}
	}
}

func fetchOne(c *Cache, s *Source, p repo.Package) error {
	_, err := c.Fetch(context.Background(), s, p, nil)
	return err
}

// writeIndex writes an index of pkgs.
func writeIndex(t testing.TB, pkgs ...repo.Package) []byte {
	t.Helper()
	b, err := json.Marshal(repo.Index{Format: 1, Packages: pkgs})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// localRepo writes the test archive into a new repository directory and returns the
// directory and the archive's index entry.
func localRepo(t testing.TB) (string, repo.Package) {
	t.Helper()
	archive, p := testArchive(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, p.Archive), archive, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, p
}

// cacheOpener returns a function that opens a new Cache on one directory each time, as a
// new process would.
func cacheOpener(t testing.TB) func() *Cache {
	dir := filepath.Join(t.TempDir(), "cache")
	return func() *Cache {
		c, err := OpenCache(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
}

// idxPath is where the index of the entry with this sha256 is.
func (c *Cache) idxPath(sha string) string { return filepath.Join(c.dir, "tars", idxName(sha)) }

// indexOnly returns the repository's index, as VerifiedIndex does with nothing known.
func (c *Cache) indexOnly(ctx context.Context, s *Source) (*repo.Index, error) {
	ix, _, err := c.VerifiedIndex(ctx, s)
	return ix, err
}

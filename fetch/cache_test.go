package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"pkg/internal/regfile"
	"pkg/internal/testfs"
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

// TestFetchWaitLimit fetches an archive another fetch has claimed and does not finish: the
// fetch waits for WaitLimit, saying so twice, then downloads the archive itself; and it
// stops waiting when cancelled.
func TestFetchWaitLimit(t *testing.T) {
	dir, p := localRepo(t)
	s, err := NewSource(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := openCache(t)
	claim := filepath.Join(c.dir, "tmp", "fetch-"+p.SHA256)
	held, err := os.Create(claim)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := unix.Flock(int(held.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := c.Fetch(ctx, s, p, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Fetch cancelled while it waits: %v", err)
	}
	var calls []bool
	c.WaitLimit, c.Waiting = 200*time.Millisecond, func(_ repo.Package, pids []int) { calls = append(calls, pids == nil) }
	if _, err := c.Fetch(context.Background(), s, p, nil); err != nil {
		t.Fatalf("Fetch past the wait limit: %v", err)
	}
	if len(calls) != 2 || !calls[1] {
		t.Errorf("Waiting called %d times (%v), want twice, the second time with no pids", len(calls), calls)
	}
	checkEntry(t, c, p, testFiles())
}

// TestFetchLocalNotFile fetches from a repository directory whose archive is a FIFO: the
// fetch fails at once, naming it, instead of blocking in open.
func TestFetchLocalNotFile(t *testing.T) {
	dir, p := localRepo(t)
	path := filepath.Join(dir, p.Archive)
	os.Remove(path)
	if err := unix.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := NewSource(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var nr *regfile.NotRegularError
	var pe *fs.PathError
	if _, err := openCache(t).Fetch(context.Background(), s, p, nil); !errors.As(err, &nr) || !errors.As(err, &pe) || pe.Path != path {
		t.Errorf("Fetch of a FIFO: %v", err)
	}
}

// TestDeclaredSize fetches an archive whose entry declares a size it does not have, up to
// the largest int64, which no parsed index holds: each is refused as a *SizeError naming
// both sizes, its sha256 being the one declared, and the cache stays empty; with another
// sha256 too, it is a mismatch.
func TestDeclaredSize(t *testing.T) {
	dir, p := localRepo(t)
	s, err := NewSource(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int64{math.MaxInt64, math.MaxInt64 - 1, p.Size + 1, p.Size - 1, 1, 0, -1} {
		q := p
		q.Size = size
		c := openCache(t)
		err := fetchOne(c, s, q)
		var se *SizeError
		if !errors.As(err, &se) || errors.Is(err, ErrMismatch) || *se != (SizeError{Name: p.Name, Version: p.Version, Declared: size, Size: p.Size}) {
			t.Errorf("size %d: %v, want a SizeError of %d bytes", size, err, p.Size)
		}
		checkEmpty(t, c)
		q.SHA256 = strings.Repeat("0", 64)
		err = fetchOne(c, s, q)
		msg := fmt.Sprint(err)
		if !errors.Is(err, ErrMismatch) || errors.As(err, &se) || !strings.Contains(msg, fmt.Sprintf("index declares %d", size)) && !strings.Contains(msg, fmt.Sprintf("than the %d bytes", size)) {
			t.Errorf("size %d and another sha256: %v, want ErrMismatch naming the size", size, err)
		}
		checkEmpty(t, c)
	}
}

// TestDeclaredSizeCached: an entry in the cache records the size of its archive, and a
// package of its sha256 that declares another is refused as its download is, with a
// *SizeError, the entry kept, but by one that declares none (0); one an older pkg wrote,
// which records no size, is used.
func TestDeclaredSizeCached(t *testing.T) {
	dir, p := localRepo(t)
	s, err := NewSource(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	open := cacheOpener(t)
	c := open()
	if err := fetchOne(c, s, p); err != nil {
		t.Fatal(err)
	}
	q := p
	q.Size = p.Size - 1
	for _, c := range []*Cache{c, open()} { // as written, and as read
		var se *SizeError
		if _, err := c.Fetch(context.Background(), s, q, nil); !errors.As(err, &se) || *se != (SizeError{Name: p.Name, Version: p.Version, Declared: q.Size, Size: p.Size}) {
			t.Errorf("Fetch of a cached archive declared %d bytes: %v, want a SizeError of %d bytes", q.Size, err, p.Size)
		}
		if !c.Has(p.SHA256) {
			t.Fatal("the entry went")
		}
		if _, err := c.Fetch(context.Background(), nil, p, nil); err != nil {
			t.Errorf("Fetch of the cached archive as declared: %v", err)
		}
		undeclared := p
		undeclared.Size = 0 // as a root's record has it
		if _, err := c.Fetch(context.Background(), nil, undeclared, nil); err != nil {
			t.Errorf("Fetch of the cached archive of no size declared: %v", err)
		}
	}
	data, err := os.ReadFile(c.idxPath(p.SHA256))
	if err != nil {
		t.Fatal(err)
	}
	h, rest, err := readEntryHeader(data)
	if err != nil || h.size != p.Size {
		t.Fatalf("the entry's header: %+v, %v; want the archive's size %d", h, err, p.Size)
	}
	old := fmt.Sprintf("pkg-entry 1 %s %s\n", p.Name, p.Version) // as an older pkg wrote it
	if err := os.WriteFile(c.idxPath(p.SHA256), append([]byte(old), data[rest:]...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := open().Fetch(context.Background(), nil, q, nil); err != nil {
		t.Errorf("Fetch of an entry an older pkg wrote, declared %d bytes: %v", q.Size, err)
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
	orphan := c.idxPath(strings.Repeat("0", 64))
	os.WriteFile(orphan, nil, 0o644)
	os.Chtimes(orphan, old, old)
	es, err := c.List()
	if err != nil || len(es) != 2 || es[0].Name != "alpha" || es[1].Name != "zeta" || es[0].Version != "1.0" ||
		es[0].Size == 0 || time.Since(es[0].Used) > time.Minute {
		t.Fatalf("List = %+v, %v", es, err)
	}
	removed, err := c.removeEntries(func(e Entry) bool { return e.Name == "alpha" })
	if err != nil || len(removed) != 1 || removed[0].Name != "zeta" {
		t.Errorf("removeEntries = %+v, %v", removed, err)
	}
	if c.Has(pkgs[0].SHA256) || !c.Has(pkgs[1].SHA256) {
		t.Errorf("after removeEntries: zeta cached %v, alpha cached %v", c.Has(pkgs[0].SHA256), c.Has(pkgs[1].SHA256))
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("stale digests without a tar survived removeEntries: %v", err)
	}
}

// TestRemoveUnfinished removes a fresh partial download and its tails, which open keeps
// (another process may be writing them), once the cache is exclusively this process's, and
// only then.
func TestRemoveUnfinished(t *testing.T) {
	c := openCache(t)
	partial := filepath.Join(c.dir, "tmp", "big-123.tar")
	if err := os.WriteFile(partial, make([]byte, 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	tails := filepath.Join(c.dir, "tmp", "big-123"+tailsSuffix)
	if err := os.Mkdir(tails, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tails, "512"), make([]byte, 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := c.RemoveUnfinished(); n != 0 {
		t.Errorf("RemoveUnfinished while shared = %d, want 0", n)
	}
	if err := c.Exclusive(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if n := c.RemoveUnfinished(); n < 2000 {
		t.Errorf("RemoveUnfinished = %d, want the tar's 1000 and its tail's blocks", n)
	}
	for _, p := range []string{partial, tails} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s after RemoveUnfinished: %v", filepath.Base(p), err)
		}
	}
}

// TestStaleTemporary removes at open a day-old temporary file, and a download and a saved
// index that no process holds, and keeps a fresh file, a held download, and a recent entry
// index.
func TestStaleTemporary(t *testing.T) {
	c := openCache(t)
	tmp := func(name string, age time.Duration) string {
		p := filepath.Join(c.dir, "tmp", name)
		old := time.Now().Add(-age)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale := tmp("idx-1", 2*staleAge)
	orphan := tmp("a-1.tar", 2*orphanAge)
	fresh := tmp("b-1.tar", 0)
	orphanIndex := tmp("x.json-3", 2*orphanAge)
	recent := tmp("idx-2", 2*orphanAge) // an entry's index, which Settle may hold longer
	held := tmp("c-1.tar", 2*orphanAge)
	f, err := os.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if again, err := OpenCache(context.Background(), c.dir); err != nil {
		t.Fatal(err)
	} else {
		again.Close()
	}
	for _, p := range []string{stale, orphan, orphanIndex} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s survived: %v", filepath.Base(p), err)
		}
	}
	for _, p := range []string{fresh, recent, held} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", filepath.Base(p), err)
		}
	}
}

// TestLocalFetchCanceled checks that a fetch from a local repository stops once its context
// is done, leaving nothing in the cache.
func TestLocalFetchCanceled(t *testing.T) {
	c := openCache(t)
	dir, p := localRepo(t)
	s, err := NewSource(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Fetch(ctx, s, p, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Fetch with its context done: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(c.dir, "tmp")); c.Has(p.SHA256) || len(ents) != 0 {
		t.Errorf("after a canceled fetch: cached %v, temporary files %d", c.Has(p.SHA256), len(ents))
	}
}

// TestIndexNotKept reads an index into a cache on a full filesystem: the index comes back
// with a NotKeptError, so a command that only reads it can go on.
func TestIndexNotKept(t *testing.T) {
	dir := testfs.Tmpfs(t, 256<<10)
	c, err := OpenCache(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close() // before the unmount
	if err := os.WriteFile(filepath.Join(dir, "filler"), make([]byte, 512<<10), 0o644); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling the cache's filesystem: %v", err)
	}
	ix, _, err := c.VerifiedIndex(context.Background(), quick(t, "../testdata/repo"))
	var nk *NotKeptError
	if !errors.As(err, &nk) || !errors.Is(err, syscall.ENOSPC) || ix == nil || len(ix.Packages) == 0 {
		t.Fatalf("VerifiedIndex into a full cache: %v, %v; want the index and a NotKeptError", ix, err)
	}
	if ents, err := os.ReadDir(filepath.Join(dir, "tmp")); err != nil || len(ents) != 0 {
		t.Errorf("tmp/ after: %v, %v", ents, err)
	}
}

// TestOpenCacheReadOnly opens a cache that does not exist for a dry run: nothing is made
// at its path, and the empty cache read in its place is gone once closed; an existing
// cache is opened read-only, in place.
func TestOpenCacheReadOnly(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "cache")
	c, err := OpenCacheReadOnly(context.Background(), missing)
	if err != nil {
		t.Fatal(err)
	}
	tmp := c.dir
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) || !c.ReadOnly || tmp == missing {
		t.Errorf("OpenCacheReadOnly of a missing cache: made %s (%v), ReadOnly %v, in %s", missing, err, c.ReadOnly, tmp)
	}
	c.Close()
	if _, err := os.Stat(tmp); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Close left the temporary cache %s: %v", tmp, err)
	}
	dir := t.TempDir()
	if c, err = OpenCacheReadOnly(context.Background(), dir); err != nil || !c.ReadOnly || c.dir != dir {
		t.Fatalf("OpenCacheReadOnly of %s: %v, %+v", dir, err, c)
	}
	c.Close()
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("Close removed the cache itself: %v", err)
	}
}

// TestIndexNameFromHead checks that IndexName reads a repository's name from the first line
// of the copy of its index the cache keeps, not from the index; from the index in a copy
// an older pkg kept, whose first line has no meta; and that the next read keeps such a
// copy again, with it.
func TestIndexNameFromHead(t *testing.T) {
	repoDir := t.TempDir()
	index := []byte(`{"format": 1, "name": "team", "packages": []}`)
	if err := os.WriteFile(filepath.Join(repoDir, "index.json"), index, 0o644); err != nil {
		t.Fatal(err)
	}
	c, s := openCache(t), quick(t, repoDir)
	if _, err := c.indexOnly(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(c.dir, "index", indexName(s.indexLocation()))
	kept, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := bytes.Cut(kept, []byte("\n"))
	write := func(head []byte, rest string) {
		t.Helper()
		if err := os.WriteFile(path, append(append(slices.Clone(head), '\n'), rest...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(head, "not an index")
	if got := IndexName(c.dir, s); got != "team" {
		t.Errorf("IndexName with the index after the first line gone = %q, want team", got)
	}
	var saved savedIndex
	if err := json.Unmarshal(head, &saved); err != nil || saved.Meta == nil {
		t.Fatalf("the first line %s: %v, want its meta", head, err)
	}
	saved.Meta = nil
	old, err := json.Marshal(&saved)
	if err != nil {
		t.Fatal(err)
	}
	write(old, string(index))
	if got := IndexName(c.dir, s); got != "team" {
		t.Errorf("IndexName of a copy an older pkg kept = %q, want team", got)
	}
	if _, err := c.indexOnly(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	if again, err := os.ReadFile(path); err != nil || !bytes.Contains(again, []byte(`"meta":{"name":"team"}`)) {
		t.Errorf("the copy after the next read: %.200s, %v; want its meta kept", again, err)
	}
	// A first line over what loadIndexHead reads (a server's ETag has no bound): the copy
	// is read whole.
	long := saved
	long.ETag, long.Meta = strings.Repeat("<", maxSavedHead), &repo.Meta{Name: "team"}
	if head, err = json.Marshal(&long); err != nil {
		t.Fatal(err)
	}
	write(head, string(index))
	if got := IndexName(c.dir, s); got != "team" {
		t.Errorf("IndexName of a copy with a %d-byte first line = %q, want team", len(head), got)
	}
	// A kept meta that its index does not say is kept again, right, at the next read.
	evil := saved
	evil.Meta = &repo.Meta{Name: "evil"}
	if head, err = json.Marshal(&evil); err != nil {
		t.Fatal(err)
	}
	write(head, string(index))
	if _, err := c.indexOnly(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	if got := IndexName(c.dir, s); got != "team" {
		t.Errorf("IndexName after a read of a copy whose meta said evil = %q, want team", got)
	}
}

// TestSavedIndexFIFO puts a FIFO, held open by a writer, where the copy of an index is
// kept: naming the repository and reading the copy refuse it at once instead of waiting
// for data that never comes.
func TestSavedIndexFIFO(t *testing.T) {
	repoDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(repoDir, "index.json"), []byte(`{"format": 1, "name": "team", "packages": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c, s := openCache(t), quick(t, repoDir)
	if _, err := c.indexOnly(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	name := indexName(s.indexLocation())
	path := filepath.Join(c.dir, "index", name)
	if err := errors.Join(os.Remove(path), unix.Mkfifo(path, 0o644)); err != nil {
		t.Fatal(err)
	}
	writer, err := os.OpenFile(path, os.O_RDWR, 0) // a writer that never writes
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	done := make(chan error, 1)
	go func() {
		if got := IndexName(c.dir, s); got != "" {
			done <- fmt.Errorf("IndexName = %q, want none", got)
			return
		}
		_, err := loadIndex(c.index, name)
		done <- err
	}()
	select {
	case err := <-done:
		if nr := (*regfile.NotRegularError)(nil); !errors.As(err, &nr) {
			t.Errorf("loadIndex of a FIFO: %v, want a *regfile.NotRegularError", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("IndexName or loadIndex still waiting on a FIFO after 10 s")
	}
}

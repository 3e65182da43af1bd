package fetch

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pkg/repo"
)

// counted serves with handle, adding the bytes of the bodies it writes to sent.
func counted(sent *atomic.Int64, handle func(w http.ResponseWriter, r *http.Request)) func(http.ResponseWriter, *http.Request, int) {
	return func(w http.ResponseWriter, r *http.Request, _ int) {
		handle(countingWriter{w, sent}, r)
	}
}

type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w countingWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.n.Add(int64(n))
	return n, err
}

func (w countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// fetchWithin fetches p into c from s, failing the test if that takes longer than limit:
// a hang's bound, not a measure.
func fetchWithin(t *testing.T, limit time.Duration, c *Cache, s *Source, p repo.Package) error {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.Fetch(ctx, s, p, nil)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		cancel()
		<-done
		t.Fatalf("fetch still running after %v", limit)
		return nil
	}
}

// dying serves the first half of archive to the first request and then closes the
// connection, as it does at once for every later one: a server that died.
func dying(archive []byte) func(http.ResponseWriter, *http.Request, int) {
	return func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			w.Header().Set("ETag", `"a"`)
			w.Header().Set("Content-Length", strconv.Itoa(len(archive)))
			w.Write(archive[:len(archive)/2])
			http.NewResponseController(w).Flush()
		}
		panic(http.ErrAbortHandler)
	}
}

// wholeOnly serves archive whole whatever the Range asked.
func wholeOnly(archive []byte) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(archive)))
		w.Write(archive)
	}
}

// TestFailoverMidBody has the first mirror die in the middle of the archive: the fetch
// asks the second for the rest with a Range request, or, where that one cannot resume,
// takes the whole archive from it; either way the archive is cached, the first mirror is
// asked once and recorded as down, and the next fetch asks the second first.
func TestFailoverMidBody(t *testing.T) {
	archive, p := testArchive(t)
	for _, tt := range []struct {
		name   string
		second func(w http.ResponseWriter, r *http.Request)
		resume bool
	}{
		{"ranges", func(w http.ResponseWriter, r *http.Request) { serveArchive(w, r, archive) }, true},
		{"no ranges", wholeOnly(archive), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newServer(t, dying(archive))
			var sent atomic.Int64
			b := newServer(t, counted(&sent, tt.second))
			c := openCache(t)
			var n notes
			s := mirrored(t, nil, &n, a.URL, b.URL)
			if err := fetchWithin(t, time.Minute, c, s, p); err != nil {
				t.Fatal(err)
			}
			checkEntry(t, c, p, testFiles())
			if got := len(a.requests()); got != 1 {
				t.Errorf("%d requests to the mirror that died, want 1", got)
			}
			reqs := b.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests to the second mirror, want 1", len(reqs))
			}
			rng := reqs[0].Get("Range")
			first, _, _ := strings.Cut(strings.TrimPrefix(rng, "bytes="), "-")
			start, err := strconv.ParseInt(first, 10, 64)
			if err != nil || start <= 0 || start >= p.Size || rng != rangeFrom(start, p.Size) || reqs[0].Get("If-Range") != "" {
				t.Errorf("second mirror asked for Range %q, If-Range %q; want the rest of the archive, unconditionally", rng, reqs[0].Get("If-Range"))
			}
			switch got := sent.Load(); {
			case tt.resume && got != p.Size-start:
				t.Errorf("second mirror sent %d bytes, want the %d from %d on", got, p.Size-start, start)
			case !tt.resume && got != p.Size:
				t.Errorf("second mirror sent %d bytes, want the whole %d", got, p.Size)
			}
			if _, err := c.readDown(a.URL + "/"); err != nil {
				t.Errorf("no record of the mirror that died: %v", err)
			}
			if n.len() != 1 || n.to[0] != b.URL+"/" {
				t.Errorf("notes to %v (%v), want one, to %s", n.to, n.why, b.URL)
			}
			if order := mirrored(t, nil, &notes{}, a.URL, b.URL).m.order(c); order[0] != 1 {
				t.Errorf("the next command asks mirror %d first, want the second", order[0])
			}
		})
	}
}

// rangeFrom is the Range a fetch asks for the rest of an archive of size bytes with: from
// kept to its last byte.
func rangeFrom(kept, size int64) string {
	return "bytes=" + strconv.FormatInt(kept, 10) + "-" + strconv.FormatInt(size-1, 10)
}

// closedRanges serves archive as serveArchive does, but answers a range without an end
// with 416, as some registries do.
func closedRanges(archive []byte) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.Header.Get("Range"), "-") {
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
			return
		}
		serveArchive(w, r, archive)
	}
}

// partialPath is where c keeps the start of a cut download of the archive with sha.
func partialPath(c *Cache, sha string) string {
	return filepath.Join(c.dir, "tmp", partialPrefix+sha)
}

// TestResumeKilled kills a process in the middle of a download, as kill -9 does: the next
// fetch asks for the rest from the bytes the killed one kept, and what it kept is gone
// once the entry is in the cache.
func TestResumeKilled(t *testing.T) {
	archive, p := testArchive(t)
	if dir := os.Getenv("FETCH_TEST_KILLED_CACHE"); dir != "" {
		c, err := OpenCache(context.Background(), dir)
		if err == nil {
			_, err = c.Fetch(context.Background(), quick(t, os.Getenv("FETCH_TEST_KILLED_URL")), p, nil)
		}
		t.Fatal("the fetch to be killed ended: ", err)
	}
	hold := make(chan struct{})
	defer close(hold)
	half := len(archive) / 2
	srv := halfThenWhole(t, archive, func(*http.Request) { <-hold })
	open := cacheOpener(t)
	c := open()
	cmd := exec.Command(os.Args[0], "-test.run=^TestResumeKilled$")
	cmd.Env = append(os.Environ(), "FETCH_TEST_KILLED_CACHE="+c.dir, "FETCH_TEST_KILLED_URL="+srv.URL)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	path := partialPath(c, p.SHA256)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if info, err := os.Stat(path); err == nil && info.Size() == int64(half) {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no partial download of %d bytes at %s after a minute", half, path)
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	c.Close()

	c = open() // as the next command would, past the age of an orphan
	old := time.Now().Add(-2 * orphanAge)
	os.Chtimes(path, old, old)
	c.Close()
	c = open()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatalf("the partial download is gone at the next open: %v", err)
	}
	kept := info.Size()
	if err := fetchOne(c, quick(t, srv.URL), p); err != nil {
		t.Fatal(err)
	}
	checkEntry(t, c, p, testFiles())
	reqs := srv.requests()
	if want := rangeFrom(kept, p.Size); len(reqs) != 2 || reqs[1].Get("Range") != want {
		t.Errorf("requests %v, the second asking for Range %q; want two, the second for %q", len(reqs), reqs[len(reqs)-1].Get("Range"), want)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("partial download after the entry is cached: %v", err)
	}
}

// halfThenWhole serves the first request the first half of archive, announcing it whole,
// and holds it there until stall returns; later requests get it as serveArchive serves.
func halfThenWhole(t *testing.T, archive []byte, stall func(r *http.Request)) *server {
	return newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			w.Header().Set("Content-Length", strconv.Itoa(len(archive)))
			w.Write(archive[:len(archive)/2])
			http.NewResponseController(w).Flush()
			stall(r)
			return
		}
		serveArchive(w, r, archive)
	})
}

// cancelAt cancels a fetch once n bytes of its archive have arrived: a Ctrl-C.
type cancelAt struct {
	n      int
	cancel context.CancelFunc
}

func (w *cancelAt) Write(b []byte) (int, error) {
	if w.n -= len(b); w.n <= 0 {
		w.cancel()
	}
	return len(b), nil
}

// TestResumeInterrupted cancels a fetch (Ctrl-C) in the middle of the archive: the bytes
// received stay, as a killed fetch's do, and the next fetch asks for the rest alone.
func TestResumeInterrupted(t *testing.T) {
	archive, p := testArchive(t)
	half := len(archive) / 2
	srv := halfThenWhole(t, archive, func(r *http.Request) { <-r.Context().Done() })
	c := openCache(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if _, err := c.Fetch(ctx, quick(t, srv.URL), p, &cancelAt{n: half, cancel: cancel}); !errors.Is(err, context.Canceled) {
		t.Fatalf("fetch cancelled halfway: %v, want context.Canceled", err)
	}
	info, err := os.Stat(partialPath(c, p.SHA256))
	if err != nil || info.Size() != int64(half) {
		t.Fatalf("partial download after the fetch was cancelled: %v, %v; want %d bytes", info, err, half)
	}
	if err := fetchOne(c, quick(t, srv.URL), p); err != nil {
		t.Fatal(err)
	}
	checkEntry(t, c, p, testFiles())
	if reqs := srv.requests(); len(reqs) != 2 || reqs[1].Get("Range") != rangeFrom(int64(half), p.Size) {
		t.Errorf("%d requests, the last for Range %q; want two, the second for %q", len(reqs), reqs[len(reqs)-1].Get("Range"), rangeFrom(int64(half), p.Size))
	}
}

// TestResumeAfterFailure fails a download when the server dies, and again while it is down,
// then fetches again: from the bytes kept with a Range request, or, where the server now cannot resume, from the
// start, the partial file emptied; a partial download that does not match the archive is
// refused and removed.
func TestResumeAfterFailure(t *testing.T) {
	archive, p := testArchive(t)
	for _, tt := range []struct {
		name  string
		serve func(w http.ResponseWriter, r *http.Request)
		from  func(kept int64) string // the Range asked for
		sent  func(kept int64) int64  // the bytes served
	}{
		{"ranges", func(w http.ResponseWriter, r *http.Request) { serveArchive(w, r, archive) },
			func(kept int64) string { return rangeFrom(kept, p.Size) },
			func(kept int64) int64 { return p.Size - kept }},
		{"no ranges", wholeOnly(archive),
			func(kept int64) string { return rangeFrom(kept, p.Size) },
			func(int64) int64 { return p.Size }},
		{"closed ranges only", closedRanges(archive),
			func(kept int64) string { return rangeFrom(kept, p.Size) },
			func(kept int64) int64 { return p.Size - kept }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var up atomic.Bool
			var sent atomic.Int64
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if !up.Load() {
					dying(archive)(w, r, n)
				}
				counted(&sent, tt.serve)(w, r, n)
			})
			s := quick(t, srv.URL)
			open := cacheOpener(t)
			c := open()
			if err := fetchOne(c, s, p); !errors.Is(err, ErrUnreachable) {
				t.Fatalf("fetch from a server that died: %v, want ErrUnreachable", err)
			}
			c.Close()
			c = open()
			info, err := os.Stat(partialPath(c, p.SHA256))
			if err != nil || info.Size() != int64(len(archive)/2) {
				t.Fatalf("partial download after the failure: %v, %v; want %d bytes", info, err, len(archive)/2)
			}
			kept := info.Size()
			// Still down: no answer says nothing of the bytes kept, which stay.
			if err := fetchOne(c, s, p); !errors.Is(err, ErrUnreachable) {
				t.Fatalf("fetch from a server still down: %v, want ErrUnreachable", err)
			}
			if info, err := os.Stat(partialPath(c, p.SHA256)); err != nil || info.Size() != kept {
				t.Fatalf("partial download after a fetch that got no answer: %v, %v; want %d bytes", info, err, kept)
			}
			up.Store(true)
			before := len(srv.requests())
			if err := fetchOne(c, s, p); err != nil {
				t.Fatal(err)
			}
			checkEntry(t, c, p, testFiles())
			reqs := srv.requests()[before:]
			if len(reqs) != 1 || reqs[0].Get("Range") != tt.from(kept) {
				t.Errorf("%d requests, the first for Range %q; want one for %q", len(reqs), reqs[0].Get("Range"), tt.from(kept))
			}
			if got, want := sent.Load(), tt.sent(kept); got != want {
				t.Errorf("%d bytes sent, want %d", got, want)
			}
			if ents, err := os.ReadDir(filepath.Join(c.dir, "tmp")); err != nil || len(ents) != 0 {
				t.Errorf("tmp/ holds %d files (%v) once the entry is cached, want none", len(ents), err)
			}
		})
	}

	t.Run("damaged", func(t *testing.T) {
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) { serveArchive(w, r, archive) })
		c := openCache(t)
		bad := make([]byte, len(archive)/2)
		if err := os.WriteFile(partialPath(c, p.SHA256), bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := fetchOne(c, quick(t, srv.URL), p); err != nil {
			t.Fatalf("fetch after a damaged partial download: %v", err)
		}
		checkEntry(t, c, p, testFiles())
		reqs := srv.requests()
		if len(reqs) != 2 || reqs[0].Get("Range") != rangeFrom(int64(len(bad)), p.Size) || reqs[1].Get("Range") != "" {
			t.Errorf("%d requests (%v); want the rest after the damaged copy, then all of it", len(reqs), reqs)
		}
		if _, err := os.Stat(partialPath(c, p.SHA256)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("partial download after the entry is cached: %v", err)
		}
	})

	t.Run("refused", func(t *testing.T) {
		other := make([]byte, len(archive))
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) { serveArchive(w, r, other) })
		c := openCache(t)
		if err := os.WriteFile(partialPath(c, p.SHA256), archive[:len(archive)/2], 0o644); err != nil {
			t.Fatal(err)
		}
		if err := fetchOne(c, quick(t, srv.URL), p); !errors.Is(err, ErrMismatch) {
			t.Fatalf("fetch of another archive than the index names: %v, want ErrMismatch", err)
		}
		checkEmpty(t, c)
		if n := len(srv.requests()); n != 2 {
			t.Errorf("%d requests, want 2: the rest, then all of it", n)
		}
		if _, err := os.Stat(partialPath(c, p.SHA256)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("partial download after the archive is refused: %v", err)
		}
	})
}

// TestPartialRemoved removes a partial download at an open of the cache once nobody has
// written it for staleAge, and at any prune or clean (RemoveUnfinished), and never one a
// fetch is writing.
func TestPartialRemoved(t *testing.T) {
	_, p := testArchive(t)
	open := cacheOpener(t)
	c := open()
	path := partialPath(c, p.SHA256)
	if err := os.WriteFile(path, []byte("start"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-staleAge - time.Hour)
	os.Chtimes(path, old, old)
	c.Close()
	c = open()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("partial download untouched for %v, at the next open: %v", staleAge, err)
	}

	os.WriteFile(path, []byte("start"), 0o644)
	s := quick(t, "http://127.0.0.1:1/")
	held := c.openPartial(s, p)
	if held == nil {
		t.Fatal("openPartial of a remote archive: nil")
	}
	if err := c.Exclusive(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if other := c.openPartial(s, p); other != nil {
		t.Error("a second fetch opened the partial download a first one writes")
	}
	held.close(nil)
	os.WriteFile(path, []byte("start"), 0o644)
	if n := c.RemoveUnfinished(); n == 0 {
		t.Error("RemoveUnfinished freed nothing")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("partial download after RemoveUnfinished: %v", err)
	}
}

// TestPartialFast drops a partial download, and keeps no more, once the download has
// come faster than the fast rate past the probe; a slower one keeps it all.
func TestPartialFast(t *testing.T) {
	data := make([]byte, 4<<20)
	for _, tt := range []struct {
		name string
		fast float64
		want int64 // bytes kept
	}{
		{"fast", 1, 0},
		{"slow", 1 << 50, int64(len(data))},
	} {
		name := partialPrefix + strings.Repeat("0", 64)
		dir, err := os.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		defer dir.Close()
		f, err := os.Create(filepath.Join(dir.Name(), name))
		if err != nil {
			t.Fatal(err)
		}
		pt := &partial{f: f, dir: dir, name: name, probe: 1 << 20, fast: tt.fast}
		r := pt.reader(&localArchive{f: nopFile(t, data), ctx: t.Context()})
		buf := make([]byte, 64<<10)
		for {
			if _, err := r.Read(buf); err != nil {
				break
			}
		}
		info, _ := f.Stat()
		if info.Size() != tt.want || pt.n != tt.want {
			t.Errorf("%s: kept %d bytes (%d in the file), want %d", tt.name, pt.n, info.Size(), tt.want)
		}
		pt.cut = errors.New("cut")
		pt.close(pt.cut)
		if _, err := os.Stat(f.Name()); (err == nil) != (tt.want > 0) {
			t.Errorf("%s: after a cut, the file: %v", tt.name, err)
		}
	}
}

// nopFile returns a file holding data, open for reading.
func nopFile(t *testing.T, data []byte) *os.File {
	path := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestResumeDeclaredSize resumes the download of an archive whose sha256 is the one
// declared and whose size is not, from the first half kept: the server's answer to the
// Range names the archive's size, which is refused, and the archive is fetched again from
// its first byte, so that it is refused as a *SizeError, as a fetch without bytes kept
// refuses it, and not as a mirror's altered copy; nothing is kept.
func TestResumeDeclaredSize(t *testing.T) {
	archive, p := testArchive(t)
	for _, delta := range []int64{-1, 1} {
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) { serveArchive(w, r, archive) })
		c := openCache(t)
		if err := os.WriteFile(partialPath(c, p.SHA256), archive[:len(archive)/2], 0o644); err != nil {
			t.Fatal(err)
		}
		q := p
		q.Size += delta
		var se *SizeError
		if err := fetchOne(c, quick(t, srv.URL), q); !errors.As(err, &se) || *se != (SizeError{Name: p.Name, Version: p.Version, Declared: q.Size, Size: p.Size}) {
			t.Errorf("resumed fetch of the archive declared %d bytes: %v, want a SizeError of %d bytes", q.Size, err, p.Size)
		}
		// A body shorter than declared is asked for its rest once more (416).
		if reqs := srv.requests(); len(reqs) < 2 || reqs[0].Get("Range") == "" || reqs[1].Get("Range") != "" {
			t.Errorf("declared %d bytes: %d requests (%v); want the rest, then all of it", q.Size, len(reqs), reqs)
		}
		checkEmpty(t, c)
		if _, err := os.Stat(partialPath(c, p.SHA256)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("partial download after the archive is refused: %v", err)
		}
	}
}

// TestInterruptedPastDeclared cancels a fetch (Ctrl-C) while it reads on past the size
// declared, to tell whether the archive is the one declared (maxOverrun): the fetch is
// cancelled, as one cut short before that size is, not refused as larger than declared.
func TestInterruptedPastDeclared(t *testing.T) {
	archive, p := testArchive(t)
	sent := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Length", strconv.Itoa(2*len(archive)))
		w.Write(archive)
		http.NewResponseController(w).Flush()
		close(sent)
		<-r.Context().Done()
	})
	c := openCache(t)
	q := p
	q.Size--
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		<-sent
		time.Sleep(100 * time.Millisecond) // the fetch reads on, past the size declared
		cancel()
	}()
	if _, err := c.Fetch(ctx, quick(t, srv.URL), q, nil); !errors.Is(err, context.Canceled) || errors.Is(err, ErrMismatch) {
		t.Errorf("fetch cancelled past the size declared: %v, want context.Canceled", err)
	}
	if c.Has(p.SHA256) {
		t.Error("the archive is cached")
	}
}

package fetch

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pkg/trust"
)

// TestResumeAfterDrop drops the connection halfway through the body: the fetch asks for
// the rest with a Range request guarded by If-Range, and succeeds.
func TestResumeAfterDrop(t *testing.T) {
	archive, p := testArchive(t)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			w.Header().Set("ETag", `"v1"`)
			w.Header().Set("Content-Length", strconv.Itoa(len(archive)))
			w.Write(archive[:len(archive)/2])
			http.NewResponseController(w).Flush()
			panic(http.ErrAbortHandler) // closes the connection
		}
		serveArchive(w, r, archive)
	})
	c := openCache(t)
	if err := fetchOne(c, quick(t, srv.URL), p); err != nil {
		t.Fatal(err)
	}
	checkEntry(t, c, p, testFiles())
	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	rng, ifRange := reqs[1].Get("Range"), reqs[1].Get("If-Range")
	if !strings.HasPrefix(rng, "bytes=") || rng == "bytes=0-" || ifRange != `"v1"` {
		t.Errorf("second request: Range %q, If-Range %q; want the rest of the archive, if still \"v1\"", rng, ifRange)
	}
	if ua := reqs[0].Get("User-Agent"); !strings.HasPrefix(ua, "pkg/") {
		t.Errorf("User-Agent %q", ua)
	}
}

// TestResumeIgnored drops the connection, then answers the Range request with the whole
// archive: the fetch skips what it already had.
func TestResumeIgnored(t *testing.T) {
	archive, p := testArchive(t)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Length", strconv.Itoa(len(archive)))
		if n == 1 {
			w.Write(archive[:len(archive)/3])
			http.NewResponseController(w).Flush()
			panic(http.ErrAbortHandler)
		}
		w.Write(archive)
	})
	c := openCache(t)
	if err := fetchOne(c, quick(t, srv.URL), p); err != nil {
		t.Fatal(err)
	}
	checkEntry(t, c, p, testFiles())
	if reqs := srv.requests(); len(reqs) != 2 || reqs[1].Get("Range") == "" {
		t.Errorf("requests %v, want a second one with a Range", reqs)
	}
}

// TestRetry5xx answers 503 twice, then the archive.
func TestRetry5xx(t *testing.T) {
	archive, p := testArchive(t)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		serveArchive(w, r, archive)
	})
	c := openCache(t)
	if err := fetchOne(c, quick(t, srv.URL), p); err != nil {
		t.Fatal(err)
	}
	checkEntry(t, c, p, testFiles())
	if n := len(srv.requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

// TestGiveUp5xx answers 500 for ever: the fetch gives up after maxTries attempts.
func TestGiveUp5xx(t *testing.T) {
	_, p := testArchive(t)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		http.Error(w, "broken", http.StatusInternalServerError)
	})
	c := openCache(t)
	err := fetchOne(c, quick(t, srv.URL), p)
	var se *statusError
	if !errors.Is(err, ErrUnreachable) || !errors.As(err, &se) || se.code != http.StatusInternalServerError || se.where != srv.URL+"/demo.tar.gz" || !isPackage(err, "demo", "1.0") {
		t.Errorf("error %v, want ErrUnreachable naming the package, the URL and the 500", err)
	}
	if n := len(srv.requests()); n != maxTries {
		t.Errorf("%d requests, want %d", n, maxTries)
	}
	checkEmpty(t, c)
}

// TestRedirectedStatus: a refusal at the end of a redirect names where the redirect
// led (without its query, a signed URL's credential), as well as the URL asked for, for
// the archive and for the index.
func TestRedirectedStatus(t *testing.T) {
	_, p := testArchive(t)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		switch r.URL.Path {
		case "/demo.tar.gz", "/index.json", "/sub/index.json":
			http.Redirect(w, r, "/moved"+r.URL.Path+"?X-Amz-Signature=secret", http.StatusMovedPermanently)
		case "/moved/index.json":
			http.Error(w, "forbidden", http.StatusForbidden)
		default:
			http.NotFound(w, r)
		}
	})
	c := openCache(t)
	err := fetchOne(c, quick(t, srv.URL), p)
	var se *statusError
	if !errors.As(err, &se) || !errors.Is(err, ErrGone) || se.where != srv.URL+"/demo.tar.gz" || se.to != srv.URL+"/moved/demo.tar.gz" {
		t.Errorf("fetch redirected to a 404: %v, want a 404 naming the URL and where it led", err)
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("fetch redirected to a 404: %v names the redirect's query, a signed URL's credential", err)
	}
	_, _, err = c.VerifiedIndex(t.Context(), quick(t, srv.URL))
	if !errors.As(err, &se) || !errors.Is(err, ErrDenied) || se.where != srv.URL+"/index.json" || se.to != srv.URL+"/moved/index.json" {
		t.Errorf("index redirected to a 403: %v, want a 403 naming the URL and where it led", err)
	}
	_, _, err = c.VerifiedIndex(t.Context(), quick(t, srv.URL+"/sub/"))
	if nr := (*noRepository)(nil); !errors.As(err, &nr) || !strings.Contains(nr.why, srv.URL+"/moved/sub/index.json") {
		t.Errorf("index redirected to a 404: %v, want no repository, naming where it led", err)
	}
}

// TestNoRetry4xx answers 404: the fetch fails at once.
func TestNoRetry4xx(t *testing.T) {
	_, p := testArchive(t)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) { http.NotFound(w, r) })
	c := openCache(t)
	err := fetchOne(c, quick(t, srv.URL), p)
	var se *statusError
	if !errors.As(err, &se) || se.code != http.StatusNotFound || errors.Is(err, ErrUnreachable) || !errors.Is(err, ErrGone) ||
		se.where != srv.URL+"/demo.tar.gz" || !isPackage(err, "demo", "1.0") {
		t.Errorf("error %v, want a 404 (ErrGone) naming the package and the URL", err)
	}
	// A local repository without the archive is the same.
	s, err := NewSource(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := fetchOne(c, s, p); !errors.Is(err, ErrGone) {
		t.Errorf("local archive missing: %v, want ErrGone", err)
	}
	if n := len(srv.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	checkEmpty(t, c)
}

// TestOneByteMore sends one byte more than the index declares: the fetch fails and
// caches nothing.
func TestOneByteMore(t *testing.T) {
	archive, p := testArchive(t)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Write(append(archive, 0))
	})
	c := openCache(t)
	err := fetchOne(c, quick(t, srv.URL), p)
	if !errors.Is(err, ErrMismatch) {
		t.Errorf("error %v, want the archive refused as larger than declared", err)
	}
	checkEmpty(t, c)
}

// TestShortArchive ends the archive early for good: the fetch resumes, the server has
// nothing more (416), and the size mismatch is reported.
func TestShortArchive(t *testing.T) {
	archive, p := testArchive(t)
	short := archive[:len(archive)-10]
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		serveArchive(w, r, short)
	})
	c := openCache(t)
	err := fetchOne(c, quick(t, srv.URL), p)
	if !errors.Is(err, ErrMismatch) {
		t.Errorf("error %v, want a size mismatch", err)
	}
	checkEmpty(t, c)
}

// TestShortArchiveNoRanges does the same with a server that ignores ranges.
func TestShortArchiveNoRanges(t *testing.T) {
	archive, p := testArchive(t)
	short := archive[:len(archive)-10]
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Length", strconv.Itoa(len(short)))
		w.Write(short)
	})
	c := openCache(t)
	err := fetchOne(c, quick(t, srv.URL), p)
	if !errors.Is(err, ErrMismatch) {
		t.Errorf("error %v, want a size mismatch", err)
	}
	if n := len(srv.requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	checkEmpty(t, c)
}

// TestIdleTimeout stalls in the middle of the body for longer than the idle timeout: the
// fetch gives up on that connection and resumes.
func TestIdleTimeout(t *testing.T) {
	archive, p := testArchive(t)
	release := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			w.Header().Set("ETag", `"v1"`)
			w.Header().Set("Content-Length", strconv.Itoa(len(archive)))
			w.Write(archive[:len(archive)/2])
			http.NewResponseController(w).Flush()
			<-release
			return
		}
		serveArchive(w, r, archive)
	})
	defer close(release)
	s := quick(t, srv.URL)
	s.idle = 200 * time.Millisecond
	retries := recordRetries(s)
	c := openCache(t)
	if err := fetchOne(c, s, p); err != nil {
		t.Fatal(err)
	}
	checkEntry(t, c, p, testFiles())
	want := "GET " + srv.URL + "/demo.tar.gz: cut off after"
	if got := retries(); len(got) != 1 || !strings.HasPrefix(got[0], want) || !strings.HasSuffix(got[0], "no data for 0.2s; attempt 2 of 5") {
		t.Errorf("retries announced: %q, want one: %s ... no data for 0.2s; attempt 2 of 5", got, want)
	}
}

// recordRetries makes s record each retry it announces, as "err; attempt N of MAX".
func recordRetries(s *Source) func() []string {
	var mu sync.Mutex
	var got []string
	s.retrying = func(err error, wait time.Duration, attempt, max int) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, fmt.Sprintf("%v; attempt %d of %d", err, attempt, max))
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

// TestSilentServer reads an index from a server that accepts requests but never answers,
// or stops in the middle of the body: each attempt waits as long as the source allows, each
// retry is announced, and the error says how long it waited and that pkg gave up.
func TestSilentServer(t *testing.T) {
	// Each case makes only the timeout it tests short, so that a slow machine cannot make
	// the other one fire.
	for _, tt := range []struct {
		name         string
		answer, idle time.Duration
		handle       func(w http.ResponseWriter, r *http.Request)
		want         string
		stalled      idleError
	}{
		{"no response", 100 * time.Millisecond, time.Minute, func(w http.ResponseWriter, r *http.Request) {},
			"GET %s/index.json: no response for 0.1s", idleError{"response", 100 * time.Millisecond}},
		{"body stalls", time.Minute, 200 * time.Millisecond, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100")
			w.Write([]byte(`{"format":`))
			http.NewResponseController(w).Flush()
		}, "read %s/index.json: no data for 0.2s", idleError{"data", 200 * time.Millisecond}},
	} {
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			tt.handle(w, r)
			<-r.Context().Done() // the client gave up
		})
		s := quick(t, srv.URL)
		s.answer, s.idle = tt.answer, tt.idle
		retries := recordRetries(s)
		_, err := openCache(t).indexOnly(t.Context(), s)
		var gu *giveUpError
		var ie *idleError
		if !errors.Is(err, ErrUnreachable) || !errors.As(err, &gu) || gu.tries != maxTries || !errors.As(err, &ie) || *ie != tt.stalled ||
			!strings.Contains(err.Error(), srv.URL+"/index.json") {
			t.Errorf("%s: error %v, want ErrUnreachable: %s after %d attempts", tt.name, err, fmt.Sprintf(tt.want, srv.URL), maxTries)
		}
		var wantRetries []string
		for n := 2; n <= maxTries; n++ {
			wantRetries = append(wantRetries, fmt.Sprintf(tt.want+"; attempt %d of 5", srv.URL, n))
		}
		if got := retries(); !slices.Equal(got, wantRetries) {
			t.Errorf("%s: retries announced:\n%q\nwant\n%q", tt.name, got, wantRetries)
		}
		if n := srv.requestsSeen(maxTries); n != maxTries {
			t.Errorf("%s: %d requests, want %d", tt.name, n, maxTries)
		}
	}
}

// TestIndexUnreachable reads an index, then finds the server gone: the error is
// ErrUnreachable, and says when the copy kept was last current if an offline source would
// believe it.
func TestIndexUnreachable(t *testing.T) {
	srv, c, s := indexRead(t)
	read := time.Date(2026, 11, 30, 16, 2, 0, 0, time.Local)
	if err := os.Chtimes(c.indexPath(s), time.Time{}, read); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	signed := trusting(t, srv.URL, Options{Trust: trust.Policy{RequireSigned: true}})
	for _, tt := range []struct {
		name string
		c    *Cache
		s    *Source
		note bool
	}{
		{"copy kept", c, s, true},
		{"nothing kept", openCache(t), s, false},
		{"copy kept, unsigned but signatures required", c, signed, false},
	} {
		_, err := tt.c.indexOnly(t.Context(), tt.s)
		var op *net.OpError
		oc := (*offlineCopyError)(nil)
		if !errors.Is(err, ErrUnreachable) || !errors.As(err, &op) || op.Op != "dial" || !strings.Contains(err.Error(), srv.URL+"/index.json") ||
			errors.As(err, &oc) != tt.note || tt.note && !oc.read.Equal(read) {
			t.Errorf("%s: error %v, want ErrUnreachable: a dial of %s/index.json (the copy of %v usable offline: %v)", tt.name, err, srv.URL, read, tt.note)
		}
	}
}

// TestIndexNotFound asks for the index of a repository that is not there: the error says
// so at once, as an ErrNoRepository.
func TestIndexNotFound(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) { http.NotFound(w, r) })
	_, err := openCache(t).indexOnly(t.Context(), quick(t, srv.URL+"/nosuch"))
	if nr := (*noRepository)(nil); !errors.Is(err, ErrNoRepository) || !errors.As(err, &nr) || nr.where != srv.URL+"/nosuch/" {
		t.Errorf("error %v, want ErrNoRepository naming %s/nosuch/", err, srv.URL)
	}
	if n := len(srv.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// TestStatusEscapes answers with a status line carrying an escape sequence: the error
// shows it without the control characters.
func TestStatusEscapes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			bufio.NewReader(conn).ReadString('\n')
			conn.Write([]byte("HTTP/1.1 404 Not\x1b]0;OWNED\x07Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			conn.Close()
		}
	}()
	_, err = openCache(t).indexOnly(t.Context(), quick(t, "http://"+ln.Addr().String()+"/r"))
	if err == nil || strings.ContainsAny(err.Error(), "\x1b\x07") || !strings.Contains(err.Error(), "404 Not?]0;OWNED?Found") {
		t.Errorf("error %q, want the status without its control characters", err)
	}
}

// TestIndexConditional reads an index twice: the second request carries the cached
// copy's validators, and the server's 304 keeps that copy.
func TestIndexConditional(t *testing.T) {
	_, p := testArchive(t)
	index := writeIndex(t, p)
	modified := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC).Format(http.TimeFormat)
	for _, etag := range []string{`"i1"`, ""} {
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			switch {
			case strings.HasSuffix(r.URL.Path, ".sig"): // unsigned
				http.NotFound(w, r)
				return
			case n > 1:
				w.WriteHeader(http.StatusNotModified)
				return
			}
			if etag != "" {
				w.Header().Set("ETag", etag)
			}
			w.Header().Set("Last-Modified", modified)
			w.Write(index)
		})
		c := openCache(t)
		for range 2 {
			ix, err := c.indexOnly(t.Context(), quick(t, srv.URL))
			if err != nil || len(ix.Packages) != 1 || ix.Packages[0].SHA256 != p.SHA256 {
				t.Fatalf("Index: %v, %v", ix, err)
			}
		}
		reqs := srv.requests()
		if len(reqs) != 4 {
			t.Fatalf("%d requests, want 4: the index and its signature, twice", len(reqs))
		}
		inm, ims := reqs[2].Get("If-None-Match"), reqs[2].Get("If-Modified-Since")
		if inm != etag || ims != modified {
			t.Errorf("ETag %q: second request has If-None-Match %q, If-Modified-Since %q", etag, inm, ims)
		}
	}
}

// TestIndexOffline reads an index once online, then offline with the server gone.
func TestIndexOffline(t *testing.T) {
	_, p := testArchive(t)
	index := writeIndex(t, p)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) { w.Write(index) })
	c := openCache(t)
	if _, err := c.indexOnly(t.Context(), quick(t, srv.URL)); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	off, err := NewSource(srv.URL, Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	if ix, err := c.indexOnly(t.Context(), off); err != nil || len(ix.Packages) != 1 {
		t.Errorf("offline Index: %v, %v", ix, err)
	}
	// Each error names what the cache lacks, once, without the package's name of the sentinel.
	if err := fetchOne(c, off, p); !errors.Is(err, ErrOffline) || !strings.Contains(err.Error(), p.Name+" "+p.Version) || strings.Contains(err.Error(), "fetch:") {
		t.Errorf("offline Fetch of an uncached package: %v, want ErrOffline naming %s %s", err, p.Name, p.Version)
	}
	other, _ := NewSource(srv.URL+"/other", Options{Offline: true})
	if _, err := c.indexOnly(t.Context(), other); !errors.Is(err, ErrOffline) || !strings.Contains(err.Error(), srv.URL+"/other") || strings.Contains(err.Error(), "fetch:") {
		t.Errorf("offline Index of another repository: %v, want ErrOffline naming %s/other", err, srv.URL)
	}
}

// TestServersThatChangeTheBytes reads an index from servers that do not serve it as
// published: each is refused, saying how, and nothing is kept.
func TestServersThatChangeTheBytes(t *testing.T) {
	index := []byte(`{"format": 1, "packages": []}`)
	plain := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) { w.Write(index) })
	for _, tt := range []struct {
		name   string
		handle func(w http.ResponseWriter, r *http.Request, n int)
		want   func(err error, url string) bool
	}{
		{"gzip on the way", func(w http.ResponseWriter, r *http.Request, _ int) {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(index)
		}, func(err error, url string) bool {
			ee := (*encodingError)(nil)
			return errors.As(err, &ee) && *ee == encodingError{url + "/index.json", "gzip", "an index"}
		}},
		{"a captive portal", func(w http.ResponseWriter, r *http.Request, _ int) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte("<html><body>log in</body></html>"))
		}, func(err error, url string) bool {
			return errors.Is(err, ErrNoRepository) && strings.Contains(err.Error(), url+"/index.json")
		}},
		{"a web page served as JSON", func(w http.ResponseWriter, r *http.Request, _ int) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte("\n <!DOCTYPE html>\n<html><body>log in</body></html>"))
		}, func(err error, url string) bool {
			return errors.Is(err, ErrNoRepository) && strings.Contains(err.Error(), url+"/index.json")
		}},
		{"a header with a control character", func(w http.ResponseWriter, r *http.Request, _ int) {
			w.Header().Set("Content-Encoding", "gz\u009b31mip") // CSI, which net/http lets through
			w.Write(index)
		}, func(err error, url string) bool {
			ee := (*encodingError)(nil)
			return errors.As(err, &ee) && *ee == encodingError{url + "/index.json", "gz?31mip", "an index"}
		}},
		{"a web page's type with a control character", func(w http.ResponseWriter, r *http.Request, _ int) {
			w.Header().Set("Content-Type", "text/html\u009b31m")
			w.Write([]byte("<html><body>log in</body></html>"))
		}, func(err error, url string) bool {
			return errors.Is(err, ErrNoRepository) && !strings.ContainsRune(err.Error(), '\u009b')
		}},
		{"401", func(w http.ResponseWriter, r *http.Request, _ int) {
			http.Error(w, "who are you", http.StatusUnauthorized)
		}, func(err error, url string) bool {
			se := (*statusError)(nil)
			return errors.Is(err, ErrDenied) && errors.As(err, &se) && se.code == http.StatusUnauthorized && se.where == url+"/index.json"
		}},
		{"a redirect to ftp", func(w http.ResponseWriter, r *http.Request, _ int) {
			http.Redirect(w, r, "ftp://example.org/index.json", http.StatusFound)
		}, func(err error, url string) bool {
			re := (*redirectError)(nil)
			return errors.As(err, &re) && *re == redirectError{from: url + "/index.json", to: "ftp://example.org/index.json"}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.handle)
			c := openCache(t)
			s := quick(t, srv.URL)
			_, err := c.indexOnly(t.Context(), s)
			if !tt.want(err, srv.URL) {
				t.Errorf("Index: %v; want the refusal of %s", err, tt.name)
			}
			if savedBytes(c, s) != nil {
				t.Error("a refused index was kept")
			}
		})
	}

	// https that redirects to http.
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+r.URL.Path, http.StatusFound)
	}))
	t.Cleanup(tls.Close)
	s := quick(t, tls.URL)
	s.client().Transport.(authTransport).base.TLSClientConfig = tls.Client().Transport.(*http.Transport).TLSClientConfig
	re := (*redirectError)(nil)
	if _, err := openCache(t).indexOnly(t.Context(), s); !errors.As(err, &re) || *re != (redirectError{tls.URL + "/index.json", plain.URL + "/index.json", true}) {
		t.Errorf("Index from https redirected to http: %v", err)
	}
}

// TestResumeWrongRange drops the connection, then answers the Range request with bytes from
// the start of the archive, labelled so: the fetch asks for the whole archive again and
// skips what it had.
func TestResumeWrongRange(t *testing.T) {
	archive, p := testArchive(t)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		switch {
		case n == 1:
			w.Header().Set("Content-Length", strconv.Itoa(len(archive)))
			w.Write(archive[:len(archive)/3])
			http.NewResponseController(w).Flush()
			panic(http.ErrAbortHandler)
		case r.Header.Get("Range") != "":
			w.Header().Set("Content-Range", fmt.Sprintf("bytes 0-%d/%d", len(archive)-1, len(archive)))
			w.WriteHeader(http.StatusPartialContent)
			w.Write(archive)
		default:
			w.Write(archive)
		}
	})
	c := openCache(t)
	if err := fetchOne(c, quick(t, srv.URL), p); err != nil {
		t.Fatal(err)
	}
	checkEntry(t, c, p, testFiles())
	if reqs := srv.requests(); len(reqs) != 3 || reqs[2].Get("Range") != "" {
		t.Errorf("%d requests, the last with Range %q; want a third without", len(reqs), reqs[len(reqs)-1].Get("Range"))
	}
}

// TestLongerContentLength serves the archive with a Content-Length larger than it, then
// closes the connection: all the index declares has come, so the fetch checks it and is
// done, without asking again.
func TestLongerContentLength(t *testing.T) {
	archive, p := testArchive(t)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Length", strconv.Itoa(len(archive)+100))
		w.Write(archive)
		http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	})
	c := openCache(t)
	if err := fetchOne(c, quick(t, srv.URL), p); err != nil {
		t.Fatal(err)
	}
	checkEntry(t, c, p, testFiles())
	if n := len(srv.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// trickle sends data from start a few bytes at a time until it is all sent or the client
// gives up.
func trickle(w http.ResponseWriter, r *http.Request, data []byte, chunk int) {
	rc := http.NewResponseController(w)
	for len(data) > 0 {
		n := min(chunk, len(data))
		if _, err := w.Write(data[:n]); err != nil {
			return
		}
		rc.Flush()
		data = data[n:]
		select {
		case <-r.Context().Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// trickler serves an archive slower than a quick source's minimum rate, resuming ranges.
func trickler(archive []byte) func(w http.ResponseWriter, r *http.Request, n int) {
	return func(w http.ResponseWriter, r *http.Request, n int) {
		start := 0
		if v, ok := strings.CutPrefix(r.Header.Get("Range"), "bytes="); ok {
			first, _, _ := strings.Cut(v, "-")
			start, _ = strconv.Atoi(first)
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(archive)-start))
		if start > 0 {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, len(archive)-1, len(archive)))
			w.WriteHeader(http.StatusPartialContent)
		}
		trickle(w, r, archive[start:], 16)
	}
}

// TestSlowBodyFails sends the archive slower than the minimum rate: the fetch gives up
// after that one request, not after one per attempt each waiting out the rate window,
// naming the URL and the rate, and caches nothing but the start of the download.
func TestSlowBodyFails(t *testing.T) {
	archive, p := testArchive(t)
	srv := newServer(t, trickler(archive))
	s := quick(t, srv.URL)
	s.minRate, s.window = 64<<10, 100*time.Millisecond
	c := openCache(t)
	err := fetchWithin(t, time.Minute, c, s, p)
	var ce *cutError
	var se *slowError
	if !errors.Is(err, ErrUnreachable) || !errors.As(err, &ce) || ce.where != srv.URL+"/demo.tar.gz" || !errors.As(err, &se) || se.rate != 64<<10 {
		t.Errorf("error %v, want ErrUnreachable naming the URL and the minimum rate", err)
	}
	if n := len(srv.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	if c.Has(p.SHA256) {
		t.Error("the archive is cached")
	}
}

// TestSlowBodyFailover sends the archive slower than the minimum rate from the first
// mirror: the fetch asks the second for the rest, and records the first as down.
func TestSlowBodyFailover(t *testing.T) {
	archive, p := testArchive(t)
	slow := newServer(t, trickler(archive))
	good := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) { serveArchive(w, r, archive) })
	var n notes
	s := mirrored(t, nil, &n, slow.URL, good.URL)
	s.minRate, s.window = 64<<10, 100*time.Millisecond
	c := openCache(t)
	if err := fetchWithin(t, time.Minute, c, s, p); err != nil {
		t.Fatal(err)
	}
	checkEntry(t, c, p, testFiles())
	if got := len(slow.requests()); got != 1 {
		t.Errorf("%d requests to the slow mirror, want 1", got)
	}
	if reqs := good.requests(); len(reqs) != 1 || !strings.HasPrefix(reqs[0].Get("Range"), "bytes=") {
		t.Errorf("requests to the second mirror: %v, want one for the rest", reqs)
	}
	if _, err := c.readDown(slow.URL + "/"); err != nil {
		t.Errorf("no record of the slow mirror down: %v", err)
	}
	var se *slowError
	if n.len() != 1 || !errors.As(n.why[0], &se) {
		t.Errorf("notes %v, want one of the slow mirror", n.why)
	}
}

// TestArchiveDeadline sends an archive at a rate each window accepts, but slower than its
// deadline allows: the fetch fails with ErrUnreachable, naming the URL, the size and the
// deadline.
func TestArchiveDeadline(t *testing.T) {
	archive, p := testArchive(t)
	srv := newServer(t, trickler(archive))
	s := quick(t, srv.URL)
	s.minRate, s.window, s.slack = 1<<30, time.Hour, 200*time.Millisecond
	c := openCache(t)
	err := fetchWithin(t, time.Minute, c, s, p)
	var de *deadlineError
	if !errors.Is(err, ErrUnreachable) || !errors.As(err, &de) || de.where != srv.URL+"/demo.tar.gz" || de.size != p.Size || de.wait != s.deadline(p.Size) {
		t.Errorf("error %v, want a *deadlineError naming the URL, %d bytes and %v", err, p.Size, s.deadline(p.Size))
	}
	if c.Has(p.SHA256) {
		t.Error("the archive is cached")
	}
}

// TestSlowIndex sends an index slower than the minimum rate, then at a rate that passes
// but for longer than the index may take: the first is tried maxTries times, the second is
// not tried again; both errors name the URL, and the cache keeps no index.
func TestSlowIndex(t *testing.T) {
	_, p := testArchive(t)
	index := writeIndex(t, p)
	for _, tt := range []struct {
		name     string
		minRate  int64
		indexMax time.Duration
		tries    int
		want     func(err error, url string) bool
	}{
		{"too slow", 64 << 10, time.Hour, maxTries, func(err error, url string) bool {
			var gu *giveUpError
			var se *slowError
			return errors.As(err, &gu) && gu.tries == maxTries && errors.As(err, &se) && se.rate == 64<<10 && strings.Contains(err.Error(), url+"/index.json")
		}},
		{"too long", 1, 300 * time.Millisecond, 1, func(err error, url string) bool {
			te := (*timeoutError)(nil)
			return errors.As(err, &te) && *te == timeoutError{url + "/index.json", 300 * time.Millisecond}
		}},
	} {
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			w.Header().Set("Content-Length", strconv.Itoa(len(index)+1<<20))
			trickle(w, r, append(index, make([]byte, 1<<20)...), 8)
		})
		s := quick(t, srv.URL)
		s.minRate, s.window, s.indexMax = tt.minRate, 100*time.Millisecond, tt.indexMax
		c := openCache(t)
		_, err := c.indexOnly(t.Context(), s)
		if !errors.Is(err, ErrUnreachable) || !tt.want(err, srv.URL) {
			t.Errorf("%s: error %v, want ErrUnreachable: %s of %s/index.json", tt.name, err, tt.name, srv.URL)
		}
		if n := len(srv.requests()); n != tt.tries {
			t.Errorf("%s: %d requests, want %d", tt.name, n, tt.tries)
		}
		if _, ok := c.IndexTime(s); ok {
			t.Errorf("%s: the cache keeps an index", tt.name)
		}
	}
}

// isPackage reports whether err is the failure to fetch the archive of name version.
func isPackage(err error, name, version string) bool {
	pe := (*packageError)(nil)
	return errors.As(err, &pe) && pe.name == name && pe.version == version
}

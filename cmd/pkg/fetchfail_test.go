package main

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// countingWriter adds the bytes of the body written through it to n.
type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w countingWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.n.Add(int64(n))
	return n, err
}

// TestInstallMirrorDiesMidArchive installs from a repository with two URLs, the first
// serving the index and then dying in the middle of the archive: the install succeeds, the
// second URL is asked for the rest with a Range request and sends less than the whole
// archive, one note names the first, and the cache records it as down.
func TestInstallMirrorDiesMidArchive(t *testing.T) {
	good := newMultiRepo(t, "good", "hello 1.0")
	files := http.FileServer(http.Dir(good.dir))
	var dead atomic.Bool
	var size int
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if dead.Load() {
			panic(http.ErrAbortHandler)
		}
		if r.URL.Path == "/index.json" {
			files.ServeHTTP(w, r)
			return
		}
		data, err := os.ReadFile(filepath.Join(good.dir, filepath.FromSlash(r.URL.Path)))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		dead.Store(true)
		size = len(data)
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data[:len(data)/2])
		http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	}))
	t.Cleanup(first.Close)
	var mu sync.Mutex
	var ranges []string
	var sent atomic.Int64
	second := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/index.json" {
			files.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		ranges = append(ranges, r.Header.Get("Range"))
		mu.Unlock()
		files.ServeHTTP(countingWriter{w, &sent}, r)
	}))
	t.Cleanup(second.Close)

	conf := "[repo.main]\nurls = [\"" + first.URL + "/\", \"" + second.URL + "/\"]\n"
	userConfig(t, conf)
	e := newEnv(t, t.TempDir(), "")
	_, stderr := e.ok("install", "hello")
	if out, err := exec.Command(filepath.Join(e.root, "bin", "hello")).Output(); err != nil || string(out) != "hello 1.0 from good\n" {
		t.Errorf("hello says %q, %v", out, err)
	}
	if want := "bytes=" + strconv.Itoa(size/2) + "-" + strconv.Itoa(size-1); len(ranges) != 1 || ranges[0] != want {
		t.Errorf("archive requests to the second URL with Range %q; want one, %q", ranges, want)
	}
	if got := sent.Load(); got != int64(size-size/2) {
		t.Errorf("second URL sent %d bytes of the %d-byte archive, want the %d after the first's", got, size, size-size/2)
	}
	if !strings.Contains(stderr, "pkg: note: repository "+first.URL+"/: ") || !strings.Contains(stderr, "using "+second.URL+"/") {
		t.Errorf("stderr:\n%s\nwant a note of leaving %s for %s", stderr, first.URL, second.URL)
	}
	sum := sha256.Sum256([]byte(first.URL + "/"))
	if _, err := os.Stat(filepath.Join(e.cache, "index", hex.EncodeToString(sum[:])+".down")); err != nil {
		t.Errorf("no record of %s down: %v", first.URL, err)
	}
}

// TestInstallMirrorServesOtherBytes installs from a repository with two URLs, the first
// serving the index and another file as the archive: its bytes are refused, said in a note
// naming it, and the archive comes from the second.
func TestInstallMirrorServesOtherBytes(t *testing.T) {
	good := newMultiRepo(t, "good", "hello 1.0")
	files := http.FileServer(http.Dir(good.dir))
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/index.json" {
			files.ServeHTTP(w, r)
			return
		}
		w.Write([]byte("another file"))
	}))
	t.Cleanup(first.Close)
	second := httptest.NewServer(files)
	t.Cleanup(second.Close)

	userConfig(t, "[repo.main]\nurls = [\""+first.URL+"/\", \""+second.URL+"/\"]\n")
	e := newEnv(t, t.TempDir(), "")
	_, stderr := e.ok("install", "hello")
	if out, err := exec.Command(filepath.Join(e.root, "bin", "hello")).Output(); err != nil || string(out) != "hello 1.0 from good\n" {
		t.Errorf("hello says %q, %v", out, err)
	}
	if !strings.Contains(stderr, "pkg: note: repository "+first.URL+"/: ") || !strings.Contains(stderr, "using "+second.URL+"/") {
		t.Errorf("stderr:\n%s\nwant a note of refusing %s's archive for %s's", stderr, first.URL, second.URL)
	}
}

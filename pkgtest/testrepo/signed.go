package testrepo

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"pkg/repo"
	"pkg/trust"
)

// Signed is a repository directory signed with a key of its own and served over HTTP,
// whose index and signature a test may replace with ones a user must refuse.
type Signed struct {
	Dir, URL string // URL has no trailing slash
	Key      trust.PrivateKey
	Huge     atomic.Bool // serve an index.json one byte over repo.MaxIndexSize instead
	t        testing.TB
	puts     int
}

// NewSigned publishes each package "name version" of pkgs into a new repository
// directory named name, signs it as Sign does and serves it until the test ends.
func NewSigned(t testing.TB, name string, pkgs ...[2]string) *Signed {
	t.Helper()
	k, err := trust.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	r := &Signed{Dir: filepath.Join(t.TempDir(), name), Key: k, t: t}
	for _, p := range pkgs {
		if _, err := Publish(r.Dir, t.TempDir(), p[0], p[1]); err != nil {
			t.Fatal(err)
		}
	}
	files := http.FileServer(http.Dir(r.Dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.Huge.Load() && req.URL.Path == "/index.json" {
			chunk := bytes.Repeat([]byte(" "), 1<<20) // no length declared
			for n := 0; n <= repo.MaxIndexSize; n += len(chunk) {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
			return
		}
		files.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	r.Sign(time.Hour, "")
	return r
}

// Sign signs the repository's index again with its key (repo.Sign), a version newer,
// valid for expires (negative: expired already), as repository name ("" keeps the
// index's), and returns the index as signed.
func (r *Signed) Sign(expires time.Duration, name string) *repo.Index {
	r.t.Helper()
	ix, err := repo.Sign(context.Background(), r.Dir, &repo.Signer{Name: name, Expires: time.Now().Add(expires), Sign: func(b []byte) []byte { return trust.Sign(b, r.Key) }})
	if err != nil {
		r.t.Fatal(err)
	}
	r.touch()
	return ix
}

// Files returns the index and its signature (nil if none) as published.
func (r *Signed) Files() (index, sig []byte) {
	r.t.Helper()
	index, err := os.ReadFile(filepath.Join(r.Dir, "index.json"))
	if err != nil {
		r.t.Fatal(err)
	}
	sig, _ = os.ReadFile(filepath.Join(r.Dir, "index.json.sig"))
	return index, sig
}

// Put publishes index and sig (none if nil) as they are.
func (r *Signed) Put(index, sig []byte) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.Dir, "index.json"), index, 0o644); err != nil {
		r.t.Fatal(err)
	}
	sigPath := filepath.Join(r.Dir, "index.json.sig")
	os.Remove(sigPath)
	if sig != nil {
		if err := os.WriteFile(sigPath, sig, 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	r.touch()
}

// SignWith publishes index signed by k, as no publisher's command would sign it.
func (r *Signed) SignWith(index []byte, k trust.PrivateKey) { r.Put(index, trust.Sign(index, k)) }

// touch gives the index a modification time of its own: Last-Modified counts whole
// seconds, so the server would otherwise answer that an index replaced within a second
// of the last request has not changed.
func (r *Signed) touch() {
	r.t.Helper()
	r.puts++
	mtime := time.Now().Add(time.Duration(r.puts) * time.Minute)
	if err := os.Chtimes(filepath.Join(r.Dir, "index.json"), mtime, mtime); err != nil {
		r.t.Fatal(err)
	}
}

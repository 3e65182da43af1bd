package fetch

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pkg/repo"
	"pkg/trust"
)

// signedIndex returns an index of pkgs with the given meta, and its signature by k.
func signedIndex(t testing.TB, k trust.PrivateKey, version uint64, expires time.Time, pkgs ...repo.Package) (index, sig []byte) {
	t.Helper()
	ix := repo.Index{Format: 1, Meta: repo.Meta{Name: "demo", Version: version, Expires: expires}, Packages: pkgs}
	index, err := json.Marshal(ix)
	if err != nil {
		t.Fatal(err)
	}
	return index, trust.Sign(index, k)
}

// signedRepo serves an index and its signature, which the test may change.
type signedRepo struct {
	*server
	index, sig []byte // sig nil: 404
	sigStatus  int    // answer for the signature instead, if not 0
}

func newSignedRepo(t *testing.T) *signedRepo {
	r := &signedRepo{}
	r.server = newServer(t, func(w http.ResponseWriter, req *http.Request, _ int) {
		r.mu.Lock()
		index, sig, status := r.index, r.sig, r.sigStatus
		r.mu.Unlock()
		switch {
		case req.URL.Path == "/index.json":
			w.Write(index)
		case req.URL.Path != "/index.json.sig":
			http.NotFound(w, req)
		case status != 0:
			w.WriteHeader(status)
		case sig == nil:
			http.NotFound(w, req)
		default:
			w.Write(sig)
		}
	})
	return r
}

// trustedBy returns the options of a source that trusts key alone.
func trustedBy(key trust.PrivateKey) Options {
	return Options{Trust: trust.Policy{Keys: []trust.PublicKey{key.Public()}}}
}

// withUser returns the http:// URL u with userinfo ("alice:s3cret") in it.
func withUser(u, userinfo string) string {
	return strings.Replace(u, "http://", "http://"+userinfo+"@", 1)
}

func (r *signedRepo) set(index, sig []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.index, r.sig = index, sig
}

func trusting(t *testing.T, location string, o Options) *Source {
	t.Helper()
	s, err := NewSource(location, o)
	if err != nil {
		t.Fatal(err)
	}
	s.backoff = time.Millisecond
	return s
}

// savedBytes returns the cache's saved index of s, or nil.
func savedBytes(c *Cache, s *Source) []byte {
	b, _ := os.ReadFile(c.indexPath(s))
	return b
}

// TestVerifiedIndexRefusals accepts a signed index, then refuses each bad one the
// server sends instead, leaving the saved copy as it was, and accepts a good one after.
func TestVerifiedIndexRefusals(t *testing.T) {
	key, other := newTestKey(t), newTestKey(t)
	_, p := testArchive(t)
	later := time.Now().Add(time.Hour)
	v2, v2sig := signedIndex(t, key, 2, later, p)
	v1, v1sig := signedIndex(t, key, 1, later, p)
	v2b, v2bsig := signedIndex(t, key, 2, later.Add(time.Minute), p)
	expired, expiredSig := signedIndex(t, key, 3, time.Now().Add(-time.Minute), p)
	srv := newSignedRepo(t)
	srv.set(v2, v2sig)
	c := openCache(t)
	s := trusting(t, srv.URL, trustedBy(key))
	ix, res, err := c.VerifiedIndex(t.Context(), s)
	if err != nil || len(ix.Packages) != 1 || !res.Verified() || res.Version != 2 || res.Location != srv.URL+"/" {
		t.Fatalf("VerifiedIndex: %+v, %+v, %v", ix, res, err)
	}
	good := savedBytes(c, s)
	if !bytes.Contains(good, v2) {
		t.Fatal("the verified index was not saved")
	}
	tampered := bytes.Replace(v2, []byte(`"demo"`), []byte(`"demp"`), 1)
	for _, tt := range []struct {
		name       string
		index, sig []byte
		want       error
	}{
		{"rollback", v1, v1sig, trust.ErrRollback},
		{"same version, other bytes", v2b, v2bsig, trust.ErrReused},
		{"expired", expired, expiredSig, trust.ErrExpired},
		{"tampered index", tampered, v2sig, trust.ErrBadSignature},
		{"wrong key", v2, trust.Sign(v2, other), trust.ErrUntrusted},
		{"signature removed", v2, nil, trust.ErrUnsigned},
	} {
		srv.set(tt.index, tt.sig)
		te := (*trust.Error)(nil)
		if _, _, err := c.VerifiedIndex(t.Context(), s); !errors.Is(err, tt.want) || !errors.As(err, &te) || te.Repo != srv.URL+"/" {
			t.Errorf("%s: %v, want %v naming %s", tt.name, err, tt.want, srv.URL)
		}
		if !bytes.Equal(savedBytes(c, s), good) {
			t.Fatalf("%s: the saved index changed", tt.name)
		}
	}
	v3, v3sig := signedIndex(t, key, 3, later, p)
	srv.set(v3, v3sig)
	if _, res, err := c.VerifiedIndex(t.Context(), s); err != nil || res.Version != 3 {
		t.Errorf("a newer index after the refusals: %+v, %v", res, err)
	}
}

// TestVerifiedIndexMidPublish reads an index with the previous index's signature, as
// between the publisher's two renames: pkg reads both again once, and takes the pair then
// published; a pair still apart is refused.
func TestVerifiedIndexMidPublish(t *testing.T) {
	key := newTestKey(t)
	_, p := testArchive(t)
	later := time.Now().Add(time.Hour)
	_, v1sig := signedIndex(t, key, 1, later, p)
	v2, v2sig := signedIndex(t, key, 2, later, p)
	var sigReads atomic.Int32
	var stale atomic.Bool // every signature read is v1's, else only the first
	stale.Store(true)
	srv := newServer(t, func(w http.ResponseWriter, req *http.Request, _ int) {
		switch req.URL.Path {
		case "/index.json":
			w.Write(v2)
		case "/index.json.sig":
			if n := sigReads.Add(1); n == 1 || stale.Load() {
				w.Write(v1sig)
			} else {
				w.Write(v2sig)
			}
		}
	})
	c := openCache(t)
	s := trusting(t, srv.URL, trustedBy(key))
	if _, _, err := c.VerifiedIndex(t.Context(), s); !errors.Is(err, trust.ErrBadSignature) || sigReads.Load() != 2 {
		t.Errorf("VerifiedIndex of a pair apart on both reads: %v, %d signature reads", err, sigReads.Load())
	}
	stale.Store(false)
	sigReads.Store(0)
	if _, res, err := c.VerifiedIndex(t.Context(), s); err != nil || res.Version != 2 || sigReads.Load() != 2 {
		t.Errorf("VerifiedIndex mid-publish: %+v, %v, %d signature reads", res, err, sigReads.Load())
	}
}

// TestVerifiedIndexKnown refuses an index older than one the caller accepted before,
// though the cache never saw that one.
func TestVerifiedIndexKnown(t *testing.T) {
	key := newTestKey(t)
	_, p := testArchive(t)
	index, sig := signedIndex(t, key, 4, time.Now().Add(time.Hour), p)
	srv := newSignedRepo(t)
	srv.set(index, sig)
	c := openCache(t)
	s := trusting(t, srv.URL, trustedBy(key))
	known := trust.Record{Location: s.URL(), Name: "demo", Version: 5, SHA256: strings.Repeat("0", 64)}
	if _, _, err := c.VerifiedIndex(t.Context(), s, known); !errors.Is(err, trust.ErrRollback) {
		t.Errorf("VerifiedIndex: %v, want a rollback", err)
	}
	if savedBytes(c, s) != nil {
		t.Error("a refused index was saved")
	}
}

// TestVerifiedIndexExpiredFloor refuses an index older than the saved copy, though that
// copy has expired since: its version is still the publisher's.
func TestVerifiedIndexExpiredFloor(t *testing.T) {
	key := newTestKey(t)
	_, p := testArchive(t)
	saved, savedSig := signedIndex(t, key, 5, time.Now().Add(-time.Hour), p)
	older, olderSig := signedIndex(t, key, 4, time.Now().Add(time.Hour), p)
	srv := newSignedRepo(t)
	srv.set(older, olderSig)
	c := openCache(t)
	s := trusting(t, srv.URL, trustedBy(key))
	if err := c.saveIndex(indexName(s.indexLocation()), &savedIndex{Location: s.indexLocation(), Signature: savedSig, data: saved}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.VerifiedIndex(t.Context(), s); !errors.Is(err, trust.ErrRollback) {
		t.Errorf("VerifiedIndex of version 4 after an expired version 5: %v, want a rollback", err)
	}
}

// TestVerifiedIndexOffline verifies the saved copy again offline, accepting it past its
// expiry, and refuses it once its signature no longer matches.
func TestVerifiedIndexOffline(t *testing.T) {
	key := newTestKey(t)
	_, p := testArchive(t)
	expires := time.Now().Add(-time.Hour).Truncate(time.Second)
	index, sig := signedIndex(t, key, 7, expires, p)
	c := openCache(t)
	policy := trust.Policy{Keys: []trust.PublicKey{key.Public()}}
	off := trusting(t, "http://127.0.0.1:1/repo/", Options{Offline: true, Trust: policy})
	path := indexName(off.indexLocation())
	if err := c.saveIndex(path, &savedIndex{Location: off.indexLocation(), Signature: sig, data: index}); err != nil {
		t.Fatal(err)
	}
	ix, res, err := c.VerifiedIndex(t.Context(), off)
	if err != nil || len(ix.Packages) != 1 || !res.Verified() || !res.Expired || !res.Expires.Equal(expires) {
		t.Errorf("offline VerifiedIndex of an expired copy: %+v, %v", res, err)
	}
	on := trusting(t, "http://127.0.0.1:1/repo/", Options{Trust: policy})
	on.tries = 1
	if _, _, err := c.VerifiedIndex(t.Context(), on); err == nil {
		t.Error("online VerifiedIndex with the server gone: no error")
	}
	other := newTestKey(t)
	if err := c.saveIndex(path, &savedIndex{Location: off.indexLocation(), Signature: trust.Sign(index, other), data: index}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.VerifiedIndex(t.Context(), off); !errors.Is(err, trust.ErrUntrusted) {
		t.Errorf("offline VerifiedIndex of a copy signed by another key: %v", err)
	}
}

// TestSignatureStatus reads a missing signature as none, and fails on a server error
// only when the signature is needed.
func TestSignatureStatus(t *testing.T) {
	key := newTestKey(t)
	_, p := testArchive(t)
	index, sig := signedIndex(t, key, 1, time.Now().Add(time.Hour), p)
	srv := newSignedRepo(t)
	srv.set(index, sig)
	c := openCache(t)
	trusted := trustedBy(key)
	for _, tt := range []struct {
		status int
		o      Options
		want   error // nil for none, or with code
		code   int   // the status of a *statusError no sentinel names
	}{
		{http.StatusForbidden, Options{}, nil, 0},
		{http.StatusGone, trusted, trust.ErrUnsigned, 0},
		{http.StatusForbidden, trusted, trust.ErrUnsigned, 0},
		{http.StatusInternalServerError, Options{}, nil, 0},
		{http.StatusInternalServerError, trusted, ErrUnreachable, 0},
		{http.StatusTeapot, trusted, nil, http.StatusTeapot},
	} {
		srv.mu.Lock()
		srv.sigStatus = tt.status
		srv.mu.Unlock()
		_, res, err := c.VerifiedIndex(t.Context(), trusting(t, srv.URL, tt.o))
		refused := tt.want != nil || tt.code != 0
		var se *statusError
		if !refused && (err != nil || res.Verified()) || tt.want != nil && !errors.Is(err, tt.want) ||
			tt.code != 0 && (!errors.As(err, &se) || se.code != tt.code) {
			t.Errorf("signature answered %d, %d keys: %+v, %v; want error %v %d", tt.status, len(tt.o.Trust.Keys), res, err, tt.want, tt.code)
		}
	}
}

// TestIndexTooLarge refuses an index over the limit, whether its length is declared or not.
func TestIndexTooLarge(t *testing.T) {
	for _, declared := range []bool{true, false} {
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			if r.URL.Path != "/index.json" {
				http.NotFound(w, r)
				return
			}
			if declared {
				w.Header().Set("Content-Length", strconv.Itoa(repo.MaxIndexSize+1))
			}
			chunk := bytes.Repeat([]byte(" "), 1<<20)
			for n := 0; n <= repo.MaxIndexSize; n += len(chunk) {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		})
		c := openCache(t)
		s := quick(t, srv.URL)
		_, err := c.indexOnly(t.Context(), s)
		var tl *TooLargeError
		if !errors.As(err, &tl) || tl.URL != srv.URL+"/index.json" || tl.Name != "index.json" || tl.Limit != repo.MaxIndexSize {
			t.Errorf("declared %v: %v (%#v), want a *TooLargeError of %s/index.json and its limit", declared, err, tl, srv.URL)
		}
		if savedBytes(c, s) != nil {
			t.Errorf("declared %v: an index over the limit was saved", declared)
		}
	}
}

func newTestKey(t testing.TB) trust.PrivateKey {
	t.Helper()
	k, err := trust.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestIndexNotModifiedNewSignature has the server answer 304 to every conditional request
// for the index, as it does for one replaced within the second it was last read: a new
// signature makes pkg read the index again, unconditionally.
func TestIndexNotModifiedNewSignature(t *testing.T) {
	key := newTestKey(t)
	_, p := testArchive(t)
	v1, v1sig := signedIndex(t, key, 1, time.Now().Add(time.Hour), p)
	v2, v2sig := signedIndex(t, key, 2, time.Now().Add(time.Hour), p)
	index, sig := v1, v1sig
	modified := time.Now().UTC().Format(http.TimeFormat)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch {
		case r.URL.Path == "/index.json.sig":
			w.Write(sig)
		case r.Header.Get("If-Modified-Since") != "":
			w.WriteHeader(http.StatusNotModified)
		default:
			w.Header().Set("Last-Modified", modified)
			w.Write(index)
		}
	})
	c := openCache(t)
	s := trusting(t, srv.URL, trustedBy(key))
	if _, res, err := c.VerifiedIndex(t.Context(), s); err != nil || res.Version != 1 {
		t.Fatalf("first VerifiedIndex: %+v, %v", res, err)
	}
	index, sig = v2, v2sig
	if _, res, err := c.VerifiedIndex(t.Context(), s); err != nil || res.Version != 2 {
		t.Errorf("VerifiedIndex after the index and its signature changed: %+v, %v", res, err)
	}
	if n := len(srv.requests()); n != 5 {
		t.Errorf("%d requests, want 5: index and signature, then index (304), signature, index", n)
	}
}

// TestVerifiedCopyKept reads a signed index without its key, then an unsigned newer one:
// the unsigned one is used, and the signed copy stays in the cache, so that a later read
// with the key still refuses an older version.
func TestVerifiedCopyKept(t *testing.T) {
	key := newTestKey(t)
	_, p := testArchive(t)
	v5, sig5 := signedIndex(t, key, 5, time.Now().Add(time.Hour), p)
	srv := newSignedRepo(t)
	srv.set(v5, sig5)
	c := openCache(t)
	withKey, without := trusting(t, srv.URL, trustedBy(key)), trusting(t, srv.URL, Options{})
	if _, _, err := c.VerifiedIndex(t.Context(), without); err != nil {
		t.Fatal(err)
	}
	kept := savedBytes(c, withKey)

	v6, _ := signedIndex(t, key, 6, time.Now().Add(time.Hour), p)
	srv.set(v6, nil) // the signature stripped
	if ix, res, err := c.VerifiedIndex(t.Context(), without); err != nil || ix.Version != 6 || res.Verified() {
		t.Fatalf("unverified read: %v, %+v, %v", ix, res, err)
	}
	if got := savedBytes(c, withKey); !bytes.Equal(got, kept) {
		t.Errorf("an unverified read replaced the signed copy")
	}

	v4, sig4 := signedIndex(t, key, 4, time.Now().Add(time.Hour), p)
	srv.set(v4, sig4)
	if _, _, err := c.VerifiedIndex(t.Context(), withKey); !errors.Is(err, trust.ErrRollback) {
		t.Errorf("VerifiedIndex of version 4 after version 5 was kept: %v, want a rollback", err)
	}
}

// TestCachePins reads a signed index with its key, then, without a key, indexes no
// trusted key verifies: each is refused, naming the key that verified the copy, online
// and offline, and the copy stays. Once the copy is forgotten, an unsigned index passes.
func TestCachePins(t *testing.T) {
	key, other := newTestKey(t), newTestKey(t)
	_, p := testArchive(t)
	v5, sig5 := signedIndex(t, key, 5, time.Now().Add(time.Hour), p)
	srv := newSignedRepo(t)
	srv.set(v5, sig5)
	c := openCache(t)
	withKey, without := trusting(t, srv.URL, trustedBy(key)), trusting(t, srv.URL, Options{})
	if _, _, err := c.VerifiedIndex(t.Context(), withKey); err != nil {
		t.Fatal(err)
	}
	kept := savedBytes(c, withKey)
	v6, _ := signedIndex(t, key, 6, time.Now().Add(time.Hour), p)
	offline := trusting(t, srv.URL, Options{Offline: true})
	for _, tt := range []struct {
		name     string
		s        *Source
		sig      []byte
		signedBy []string
	}{
		{"unsigned", without, nil, nil},
		{"signed by another key", without, trust.Sign(v6, other), []string{other.Public().ID()}},
		{"the copy, offline", offline, nil, []string{key.Public().ID()}},
	} {
		srv.set(v6, tt.sig)
		_, _, err := c.VerifiedIndex(t.Context(), tt.s)
		var pe *trust.PinnedError
		if !errors.As(err, &pe) || pe.Repo != srv.URL+"/" || pe.Version != 5 || !slices.Equal(pe.KeyIDs, []string{key.Public().ID()}) ||
			!slices.Equal(pe.SignedBy, tt.signedBy) {
			t.Errorf("%s: %v (%+v), want a *trust.PinnedError naming key %s", tt.name, err, pe, key.Public().ID())
		}
		if !bytes.Equal(savedBytes(c, withKey), kept) {
			t.Errorf("%s: the copy changed", tt.name)
		}
	}
	srv.set(v5, sig5)
	if _, res, err := c.VerifiedIndex(t.Context(), trusting(t, srv.URL, Options{Offline: true, Trust: trustedBy(key).Trust})); err != nil || !res.Verified() {
		t.Errorf("offline with the key: %+v, %v", res, err)
	}
	if err := c.ForgetIndex(without); err != nil {
		t.Fatal(err)
	}
	srv.set(v6, nil)
	if _, res, err := c.VerifiedIndex(t.Context(), without); err != nil || res.Verified() {
		t.Errorf("unsigned index after ForgetIndex: %+v, %v", res, err)
	}
}

// TestIndexCopyNoCredentials reads an index from a URL with credentials: the cache's copy
// neither holds them nor depends on them, so a saved cache carries no secret and a new
// token finds the same copy.
func TestIndexCopyNoCredentials(t *testing.T) {
	key := newTestKey(t)
	_, p := testArchive(t)
	index, sig := signedIndex(t, key, 1, time.Now().Add(time.Hour), p)
	srv := newSignedRepo(t)
	srv.set(index, sig)
	c := openCache(t)
	withToken := withUser(srv.URL, "alice:s3cret")
	s := trusting(t, withToken, Options{})
	if _, _, err := c.VerifiedIndex(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	saved := savedBytes(c, s)
	if len(saved) == 0 || bytes.Contains(saved, []byte("s3cret")) {
		t.Errorf("the cache's copy of the index: %q", saved)
	}
	if other := savedBytes(c, trusting(t, strings.Replace(withToken, "s3cret", "other", 1), Options{})); !bytes.Equal(other, saved) {
		t.Error("another token does not find the same copy")
	}
}

// TestTooLargeErrorText checks the words of a *TooLargeError, which pkg prints.
func TestTooLargeErrorText(t *testing.T) {
	e := &TooLargeError{URL: "https://r.example/index.json", Name: "index.json", Limit: repo.MaxIndexSize}
	if got, want := e.Error(), "read https://r.example/index.json: index.json is over the 67108864-byte limit (no repository needs one this big: refusing it)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

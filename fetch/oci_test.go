package fetch

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pkg/internal/oci"
	"pkg/pkgtest/testregistry"
	"pkg/repo"
	"pkg/trust"
)

// pushTo stores index, its signature (if any) and archives in reg under tag latest, as
// pkg repo push lays them out.
func pushTo(t *testing.T, reg *testregistry.Registry, index, sig []byte, archives map[string][]byte) {
	t.Helper()
	layers := []oci.Descriptor{oci.NewLayer("index.json", oci.MediaTypeIndex, reg.Put(index), int64(len(index)))}
	if sig != nil {
		layers = append(layers, oci.NewLayer(repo.SignatureName, oci.MediaTypeSignature, reg.Put(sig), int64(len(sig))))
	}
	for name, b := range archives {
		layers = append(layers, oci.NewLayer(name, oci.MediaTypeArchive, reg.Put(b), int64(len(b))))
	}
	reg.Put([]byte("{}"))
	m, err := json.Marshal(oci.NewManifest(layers, nil))
	if err != nil {
		t.Fatal(err)
	}
	reg.Tag("latest", oci.MediaTypeManifest, m)
}

// TestOCI: a signed repository on a registry with token auth is read, believed and
// fetched from, its archive as the blob of its sha256; what the registry serves wrong is
// refused naming the registry and the digest.
func TestOCI(t *testing.T) {
	key := newTestKey(t)
	archive, p := testArchive(t)
	later := time.Now().Add(time.Hour)
	index, sig := signedIndex(t, key, 2, later, p)
	reg := testregistry.New(t)
	pushTo(t, reg, index, sig, map[string][]byte{p.Archive: archive})
	c := openCache(t)
	s := trusting(t, reg.URL(), trustedBy(key))
	if want := reg.URL() + ":latest/"; s.URL() != want {
		t.Errorf("URL() = %s, want %s", s.URL(), want)
	}
	ix, res, err := c.VerifiedIndex(t.Context(), s)
	if err != nil || !res.Verified() || len(ix.Packages) != 1 {
		t.Fatalf("VerifiedIndex: %+v, %v", res, err)
	}
	if err := fetchOne(c, s, p); err != nil {
		t.Fatal(err)
	}
	checkEntry(t, c, p, testFiles())
	if n := reg.TokenRequests(); n != 1 {
		t.Errorf("%d token requests, want 1 (pull, cached)", n)
	}
	// Read again: the index's digest is its validator, and the blob is not asked again.
	before := len(reg.Requests)
	if _, _, err := c.VerifiedIndex(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	for _, r := range reg.Requests[before:] {
		if strings.Contains(r, "/blobs/"+testregistry.Digest(index)) {
			t.Errorf("the unchanged index was read again: %s", r)
		}
	}

	digest := "sha256:" + p.SHA256
	reg.Blobs[digest] = bytes.Repeat([]byte{'x'}, len(archive))
	err = fetchOne(openCache(t), s, p)
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), reg.Reg.Listener.Addr().String()) || !strings.Contains(err.Error(), digest) {
		t.Errorf("tampered archive: %v, want ErrMismatch naming the registry and %s", err, digest)
	}
	delete(reg.Blobs, digest)
	if err = fetchOne(openCache(t), s, p); !errors.Is(err, ErrGone) || !strings.Contains(err.Error(), digest) {
		t.Errorf("missing archive: %v, want ErrGone naming %s", err, digest)
	}

	v3, v3sig := signedIndex(t, key, 3, later, p)
	pushTo(t, reg, v3, v3sig, nil)
	reg.Blobs[testregistry.Digest(v3)] = append(bytes.Clone(v3), ' ')
	_, _, err = c.VerifiedIndex(t.Context(), s)
	if !errors.Is(err, ErrDigest) || errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), testregistry.Digest(v3)) || !strings.Contains(err.Error(), "pkg/main") {
		t.Errorf("tampered index: %v, want ErrDigest, not an archive's ErrMismatch, naming the registry and the index's digest", err)
	}

	v1, v1sig := signedIndex(t, key, 1, later, p)
	pushTo(t, reg, v1, v1sig, nil)
	te := (*trust.Error)(nil)
	if _, _, err = c.VerifiedIndex(t.Context(), s); !errors.Is(err, trust.ErrRollback) || !errors.As(err, &te) || te.Repo != s.URL() {
		t.Errorf("rollback: %v, want trust.ErrRollback naming %s", err, s.URL())
	}
}

// TestOCIResume: a blob cut short is asked for the rest with Range.
func TestOCIResume(t *testing.T) {
	archive, p := testArchive(t)
	reg := testregistry.New(t)
	pushTo(t, reg, writeIndex(t, p), nil, map[string][]byte{p.Archive: archive})
	cut := int64(len(archive) / 2)
	reg.Cut = cut
	c := openCache(t)
	s := quick(t, reg.URL())
	if err := fetchOne(c, s, p); err != nil {
		t.Fatal(err)
	}
	checkEntry(t, c, p, testFiles())
	want := []string{"", "bytes=" + itoa(cut) + "-" + itoa(int64(len(archive))-1)}
	if got := reg.RangeHdr; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("blob requests' Range %q, want %q", got, want)
	}
}

// TestOCIDenied: a token realm refusing the credentials, or their absence, is a
// *DeniedError naming the registry, not the credentials (the user's name neither), saying
// whether they were the URL's; the right ones pass.
func TestOCIDenied(t *testing.T) {
	_, p := testArchive(t)
	reg := testregistry.New(t)
	pushTo(t, reg, writeIndex(t, p), nil, nil)
	reg.Users = map[string]string{"bob": "s3cret"}
	for _, user := range []string{"", "bob:wrong-pass@"} {
		u := strings.Replace(reg.URL(), "oci://", "oci://"+user, 1)
		_, _, err := openCache(t).VerifiedIndex(t.Context(), quick(t, u))
		de := (*DeniedError)(nil)
		if !errors.As(err, &de) || de.URL != (user != "") || !strings.Contains(err.Error(), "pkg/main") || strings.Contains(err.Error(), "bob") {
			t.Errorf("%q: %v, want a *DeniedError naming the registry and no credential", user, err)
		}
	}
	if _, _, err := openCache(t).VerifiedIndex(t.Context(), quick(t, strings.Replace(reg.URL(), "oci://", "oci://bob:s3cret@", 1))); err != nil {
		t.Errorf("right credentials: %v", err)
	}
}

// TestOCIMirror: a registry is a mirror of an HTTP repository as any location is: with the
// first location down, the index and the archive come from the registry.
func TestOCIMirror(t *testing.T) {
	key := newTestKey(t)
	archive, p := testArchive(t)
	index, sig := signedIndex(t, key, 1, time.Now().Add(time.Hour), p)
	reg := testregistry.New(t)
	pushTo(t, reg, index, sig, map[string][]byte{p.Archive: archive})
	down := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) { w.WriteHeader(http.StatusServiceUnavailable) })
	o := trustedBy(key)
	o.Mirrors = []string{reg.URL()}
	s := trusting(t, down.URL, o)
	c := openCache(t)
	if _, res, err := c.VerifiedIndex(t.Context(), s); err != nil || !res.Verified() {
		t.Fatalf("VerifiedIndex through the registry: %+v, %v", res, err)
	}
	if err := fetchOne(c, s, p); err != nil {
		t.Fatal(err)
	}
	checkEntry(t, c, p, testFiles())
}

// TestOCIArchiveElsewhere: an archive a lockfile names on another registry (its URL
// pointed at a mirror by hand) is that registry's blob, as an http URL is that server's,
// not the repository's.
func TestOCIArchiveElsewhere(t *testing.T) {
	key := newTestKey(t)
	archive, p := testArchive(t)
	index, sig := signedIndex(t, key, 1, time.Now().Add(time.Hour), p)
	reg := testregistry.New(t)
	pushTo(t, reg, index, sig, nil)
	other := testregistry.New(t)
	other.Put(archive)
	p.Archive = other.URL() + ":stable/" + p.Archive
	s := trusting(t, reg.URL(), trustedBy(key))
	c := openCache(t)
	if err := fetchOne(c, s, p); err != nil {
		t.Fatal(err)
	}
	checkEntry(t, c, p, testFiles())
	if got := other.Requests; len(got) == 0 || !strings.HasSuffix(got[len(got)-1], "/blobs/sha256:"+p.SHA256) {
		t.Errorf("other registry's requests %q, want the archive's blob", got)
	}
}

// TestOCIDigestMirror: a registry is a by-digest mirror as a directory is: each archive is
// its blob by sha256, whatever the repository's index names.
func TestOCIDigestMirror(t *testing.T) {
	archive, p := testArchive(t)
	reg := testregistry.New(t)
	reg.Put(archive)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.json"), writeIndex(t, p), 0o644); err != nil {
		t.Fatal(err)
	}
	s := trusting(t, dir, Options{DigestMirrors: []string{reg.URL()}})
	c := openCache(t)
	if err := fetchOne(c, s, p); err != nil {
		t.Fatal(err)
	}
	checkEntry(t, c, p, testFiles())
	if got := reg.Requests; len(got) == 0 || !strings.HasSuffix(got[len(got)-1], "/blobs/sha256:"+p.SHA256) {
		t.Errorf("registry requests %q, want the archive's blob", got)
	}
}

// TestRegistrySecret: a registry's credentials are the repository's own, else the URL's,
// else netrc's for the registry's host; none goes in cleartext to another machine but
// the URL's own, and the netrc default is then left out.
func TestRegistrySecret(t *testing.T) {
	netrc := filepath.Join(t.TempDir(), "netrc")
	if err := os.WriteFile(netrc, []byte("machine 203.0.113.5 login nora password n3trc\ndefault login dee password d3fault\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	realm, _ := url.Parse("https://198.51.100.7/token")
	plain, _ := url.Parse("http://198.51.100.7/token")
	local, _ := url.Parse("http://127.0.0.1:5001/token")
	repoToken := Credential{Token: "t0ken"}
	for _, tc := range []struct {
		name string
		loc  string
		o    Options
		to   *url.URL
		want oci.Secret
		err  bool
	}{
		{"repository's", "oci://bob:pw@203.0.113.5/a", Options{Credential: repoToken, Netrc: netrc}, realm, oci.Secret{Token: "t0ken"}, false},
		{"URL's", "oci://bob:pw@203.0.113.5/a", Options{Netrc: netrc}, realm, oci.Secret{User: "bob", Password: "pw"}, false},
		{"netrc's machine", "oci://203.0.113.5/a", Options{Netrc: netrc}, realm, oci.Secret{User: "nora", Password: "n3trc"}, false},
		{"netrc's default", "oci://203.0.113.9/a", Options{Netrc: netrc}, realm, oci.Secret{User: "dee", Password: "d3fault"}, false},
		{"none", "oci://203.0.113.9/a", Options{}, realm, oci.Secret{}, false},
		{"cleartext refused", "oci+http://203.0.113.5/a", Options{Credential: repoToken}, plain, oci.Secret{}, true},
		{"cleartext allowed", "oci+http://203.0.113.5/a", Options{Credential: repoToken, CleartextCredentials: true}, plain, oci.Secret{Token: "t0ken"}, false},
		{"cleartext to this machine", "oci://127.0.0.1:5000/a", Options{Credential: repoToken}, local, oci.Secret{Token: "t0ken"}, false},
		{"netrc default not in cleartext", "oci+http://203.0.113.9/a", Options{Netrc: netrc}, plain, oci.Secret{}, false},
	} {
		s, err := NewSource(tc.loc, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		l := s.t.(*ociLocation)
		u, _ := url.Parse(tc.loc)
		got, err := registrySecret(s.netConfig, l.ref.HTTPScheme(), u.User)(l.ref.Host, tc.to)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("%s: %v, %v; want %v, error %v", tc.name, got, err, tc.want, tc.err)
		}
		if ce := (*CleartextError)(nil); tc.err && !errors.As(err, &ce) {
			t.Errorf("%s: %v, want a *CleartextError", tc.name, err)
		}
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

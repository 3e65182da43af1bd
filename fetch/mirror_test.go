package fetch

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"pkg/trust"
)

// mirrorServer serves a repository's index, signature and archive, which the test may
// change, or a status in place of all of them, counting requests by path.
type mirrorServer struct {
	*server
	files  map[string][]byte // by path, without the leading slash; absent: 404
	status int               // answer to everything, if not 0
	counts map[string]int
}

func newMirrorServer(t *testing.T, files map[string][]byte) *mirrorServer {
	if files == nil {
		files = map[string][]byte{}
	}
	m := &mirrorServer{files: files, counts: map[string]int{}}
	m.server = newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		m.mu.Lock()
		path := strings.TrimPrefix(r.URL.Path, "/")
		m.counts[path]++
		data, ok := m.files[path]
		status := m.status
		m.mu.Unlock()
		switch {
		case status != 0:
			w.WriteHeader(status)
		case !ok:
			http.NotFound(w, r)
		default:
			serveArchive(w, r, data)
		}
	})
	return m
}

func (m *mirrorServer) count(path string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counts[path]
}

func (m *mirrorServer) answer(status int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.status = status
}

func (m *mirrorServer) set(path string, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[path] = data
}

// refusedURL returns the URL of a port on 127.0.0.1 that refuses connections: bound by a
// socket that never listens, held until t ends, so that no server the test starts next
// (a port closed at once could be handed to the next httptest server) answers there.
func refusedURL(t *testing.T) string {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("http://127.0.0.1:%d/", sa.(*unix.SockaddrInet4).Port)
}

// notes records what a source's Failover says.
type notes struct {
	mu  sync.Mutex
	to  []string
	why []error
}

func (n *notes) failover(to string, why error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.to = append(n.to, to)
	n.why = append(n.why, why)
}

func (n *notes) len() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.to)
}

// mirrored returns a source of first and mirrors that trusts key, if any, and retries
// without waiting long.
func mirrored(t *testing.T, key *trust.PrivateKey, n *notes, first string, mirrors ...string) *Source {
	t.Helper()
	o := Options{Mirrors: mirrors, Failover: n.failover}
	if key != nil {
		o.Trust = trust.Policy{Keys: []trust.PublicKey{key.Public()}}
	}
	return trusting(t, first, o)
}

// TestFailover reads a signed index and its archive from the third of three URLs, the
// first refusing connections and the second answering 503, with one note that names both,
// one request to the second, and the first URL kept as the repository's identity; the
// next command asks the third first, and the second again once its record has expired.
func TestFailover(t *testing.T) {
	key := newTestKey(t)
	archive, p := testArchive(t)
	index, sig := signedIndex(t, key, 2, time.Now().Add(time.Hour), p)
	refused := refusedURL(t)
	busy := newMirrorServer(t, nil)
	busy.answer(http.StatusServiceUnavailable)
	good := newMirrorServer(t, map[string][]byte{"index.json": index, "index.json.sig": sig, p.Archive: archive})
	open := cacheOpener(t)
	c := open()
	var n notes
	s := mirrored(t, &key, &n, refused, busy.URL, good.URL)

	ix, res, err := c.VerifiedIndex(t.Context(), s)
	if err != nil || len(ix.Packages) != 1 || !res.Verified() {
		t.Fatalf("VerifiedIndex: %v", err)
	}
	if res.Location != refused {
		t.Errorf("verified as %s, want the first URL %s", res.Location, refused)
	}
	if !bytes.Contains(savedBytes(c, s), index) {
		t.Error("the index is not kept under the first URL")
	}
	if _, err := c.Fetch(t.Context(), s, p, nil); err != nil {
		t.Fatal(err)
	}
	checkEntry(t, c, p, testFiles())
	if n.len() != 1 {
		t.Fatalf("%d notes, want 1: %v", n.len(), n.why)
	}
	if n.to[0] != good.URL+"/" {
		t.Errorf("note says it uses %s, want %s", n.to[0], good.URL+"/")
	}
	why := n.why[0]
	if msg := why.Error(); !errors.Is(why, syscall.ECONNREFUSED) || !strings.Contains(msg, refused+":") ||
		!strings.Contains(msg, busy.URL+"/:") || !strings.Contains(msg, "503") {
		t.Errorf("note: %v; want both locations named, with connection refused and 503", why)
	}
	var roles []string
	for _, err := range why.(mirrorErrors) {
		if me := (*mirrorError)(nil); errors.As(err, &me) {
			roles = append(roles, me.Role)
		}
	}
	if want := []string{roleRepository, roleMirror}; !slices.Equal(roles, want) {
		t.Errorf("note's locations are a %q, want the repository's URL, then its mirror: %q", roles, want)
	}
	if got := busy.count("index.json") + busy.count(p.Archive); got != 1 {
		t.Errorf("%d requests to the mirror answering 503, want 1", got)
	}

	// The next command.
	var n2 notes
	s2 := mirrored(t, &key, &n2, refused, busy.URL, good.URL)
	if _, _, err := open().VerifiedIndex(t.Context(), s2); err != nil {
		t.Fatal(err)
	}
	if got := busy.count("index.json"); got != 1 {
		t.Errorf("the next command asked the mirror found down first: %d requests, want 1", got)
	}
	if n2.len() != 0 {
		t.Errorf("the next command said %v", n2.why)
	}

	// Once the record has expired, the mirror is asked in its turn again.
	if err := c.writeDown(downRecord{URL: busy.URL + "/", Until: time.Now().Add(-time.Second)}); err != nil {
		t.Fatal(err)
	}
	s3 := mirrored(t, &key, &notes{}, busy.URL, good.URL)
	if _, _, err := open().VerifiedIndex(t.Context(), s3); err != nil {
		t.Fatal(err)
	}
	if got := busy.count("index.json"); got != 2 {
		t.Errorf("%d requests to the mirror whose record expired, want 2", got)
	}
}

// TestFailoverRefusesIndex refuses each bad index a first mirror serves, naming it, and
// believes the next mirror's; when every mirror serves a bad one, the error names each and
// the cache keeps its copy.
func TestFailoverRefusesIndex(t *testing.T) {
	key, other := newTestKey(t), newTestKey(t)
	_, p := testArchive(t)
	later := time.Now().Add(time.Hour)
	v2, v2sig := signedIndex(t, key, 2, later, p)
	v1, v1sig := signedIndex(t, key, 1, later, p)
	foreign, foreignSig := func() ([]byte, []byte) {
		b := bytes.Replace(v2, []byte(`"name":"demo"`), []byte(`"name":"other"`), 1)
		return b, trust.Sign(b, key)
	}()
	tampered := bytes.Replace(v2, []byte(`"version":"1.0"`), []byte(`"version":"6.6"`), 1)
	for _, tt := range []struct {
		name       string
		index, sig []byte
		want       error
	}{
		{"older", v1, v1sig, trust.ErrRollback},
		{"another repository's", foreign, foreignSig, trust.ErrWrongName},
		{"tampered", tampered, v2sig, trust.ErrBadSignature},
		{"signed by another key", v2, trust.Sign(v2, other), trust.ErrUntrusted},
		{"unsigned", v2, nil, trust.ErrUnsigned},
	} {
		t.Run(tt.name, func(t *testing.T) {
			first := newMirrorServer(t, map[string][]byte{"index.json": v2, "index.json.sig": v2sig})
			bad := newMirrorServer(t, map[string][]byte{"index.json": tt.index})
			if tt.sig != nil {
				bad.set("index.json.sig", tt.sig)
			}
			good := newMirrorServer(t, map[string][]byte{"index.json": v2, "index.json.sig": v2sig})
			open := cacheOpener(t)
			c := open()
			if _, _, err := c.VerifiedIndex(t.Context(), trusting(t, first.URL, trustedBy(key))); err != nil {
				t.Fatal(err)
			}
			first.answer(http.StatusBadGateway)

			// The first URL is down, the next mirror serves a bad index, the last the
			// one the cache holds.
			var n notes
			s := mirrored(t, &key, &n, first.URL, bad.URL, good.URL)
			kept := savedBytes(c, s)
			ix, res, err := c.VerifiedIndex(t.Context(), s)
			if err != nil || res.Version != 2 || ix.Packages[0].Version != "1.0" {
				t.Fatalf("VerifiedIndex: %+v, %v", res, err)
			}
			if n.len() != 1 || !errors.Is(mirrorErr(n.why[0], bad.URL+"/"), tt.want) || !errors.As(mirrorErr(n.why[0], bad.URL+"/"), new(*trust.Error)) {
				t.Errorf("notes %v; want one, %v naming %s", n.why, tt.want, bad.URL)
			}
			if _, err := c.readDown(bad.URL + "/"); err == nil {
				t.Error("a mirror serving a bad index is recorded as down")
			}

			// No mirror serves a good one: refused, naming the bad one.
			good.answer(http.StatusBadGateway)
			_, _, err = open().VerifiedIndex(t.Context(), mirrored(t, &key, &notes{}, first.URL, bad.URL, good.URL))
			if !errors.Is(mirrorErr(err, bad.URL+"/"), tt.want) || !errors.As(mirrorErr(err, bad.URL+"/"), new(*trust.Error)) {
				t.Errorf("VerifiedIndex: %v; want %v naming %s", err, tt.want, bad.URL)
			}
			if !bytes.Equal(savedBytes(c, s), kept) {
				t.Error("a refused index changed the cache's copy")
			}
		})
	}
}

// TestFailoverArchive fetches an archive a stale mirror lacks from the next, without
// recording the stale one as down; one whose bytes do not match is refused, said in a note
// naming the mirror, and asked of the next from its first byte; when every mirror's is
// refused, the error names each, and the cache is left as it was.
func TestFailoverArchive(t *testing.T) {
	archive, p := testArchive(t)
	index := writeIndex(t, p)
	stale := newMirrorServer(t, map[string][]byte{"index.json": index})
	good := newMirrorServer(t, map[string][]byte{"index.json": index, p.Archive: archive})
	c := openCache(t)
	var n notes
	s := mirrored(t, nil, &n, stale.URL, good.URL)
	if _, _, err := c.VerifiedIndex(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Fetch(t.Context(), s, p, nil); err != nil {
		t.Fatal(err)
	}
	checkEntry(t, c, p, testFiles())
	if n.len() != 1 || !errors.Is(n.why[0], ErrGone) {
		t.Errorf("notes %v, want one of the archive missing", n.why)
	}
	if _, err := c.readDown(stale.URL + "/"); err == nil {
		t.Error("a mirror lacking an archive is recorded as down")
	}

	corrupt := bytes.Clone(archive)
	corrupt[len(corrupt)/2] ^= 1
	bad := newMirrorServer(t, map[string][]byte{"index.json": index, p.Archive: corrupt})
	c = openCache(t)
	n = notes{}
	s = mirrored(t, nil, &n, bad.URL, good.URL)
	if _, _, err := c.VerifiedIndex(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Fetch(t.Context(), s, p, nil); err != nil {
		t.Fatalf("Fetch with a mirror serving other bytes before a good one: %v", err)
	}
	checkEntry(t, c, p, testFiles())
	if n.len() != 1 || !errors.Is(n.why[0], ErrMismatch) || !slices.Equal(mirrorsOf(n.why[0]), []string{bad.URL + "/"}) || n.to[0] != good.URL+"/" {
		t.Errorf("notes %v to %q; want one of %s's bytes refused, using %s", n.why, n.to, bad.URL, good.URL)
	}
	if _, err := c.readDown(bad.URL + "/"); err == nil {
		t.Error("a mirror serving other bytes is recorded as down")
	}

	longer := append(bytes.Clone(archive), 0)
	worse := newMirrorServer(t, map[string][]byte{"index.json": index, p.Archive: longer})
	c = openCache(t)
	s = mirrored(t, nil, &notes{}, bad.URL, worse.URL)
	if _, _, err := c.VerifiedIndex(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	_, err := c.Fetch(t.Context(), s, p, nil)
	if !errors.Is(err, ErrMismatch) || !slices.Equal(mirrorsOf(err), []string{bad.URL + "/", worse.URL + "/"}) {
		t.Errorf("Fetch: %v; want ErrMismatch naming %s and %s", err, bad.URL, worse.URL)
	}
	if got := []int{bad.count(p.Archive), worse.count(p.Archive)}; got[0] != 2 || got[1] != 1 {
		t.Errorf("archive requests %v, want one more to each", got)
	}
	checkEmpty(t, c)
}

// TestFailoverEveryMirror fails, naming every mirror, when none serves; the last is
// retried as a source without mirrors is, the others asked once.
func TestFailoverEveryMirror(t *testing.T) {
	a := newMirrorServer(t, nil)
	b := newMirrorServer(t, nil)
	a.answer(http.StatusInternalServerError)
	b.answer(http.StatusServiceUnavailable)
	c := openCache(t)
	n := notes{}
	s := mirrored(t, nil, &n, a.URL, b.URL)
	_, _, err := c.VerifiedIndex(t.Context(), s)
	if !errors.Is(err, ErrUnreachable) || !slices.Equal(mirrorsOf(err), []string{a.URL + "/", b.URL + "/"}) {
		t.Errorf("VerifiedIndex: %v; want ErrUnreachable naming both mirrors", err)
	}
	if got, want := []int{a.count("index.json"), b.count("index.json")}, []int{1, maxTries}; got[0] != want[0] || got[1] != want[1] {
		t.Errorf("requests %v, want %v", got, want)
	}
	if n.len() != 0 {
		t.Errorf("notes %v with no mirror serving", n.why)
	}
	for _, m := range []*mirrorServer{a, b} {
		if _, err := c.readDown(m.URL + "/"); err != nil {
			t.Errorf("no record of %s down: %v", m.URL, err)
		}
	}

	// Once one serves again, its record goes.
	b.set("index.json", writeIndex(t))
	b.answer(0)
	if _, _, err := c.VerifiedIndex(t.Context(), mirrored(t, nil, &notes{}, a.URL, b.URL)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.readDown(b.URL + "/"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("record of %s after it served: %v", b.URL, err)
	}
}

// mirrorsOf returns the URLs of the mirrors whose failures err holds, in order.
func mirrorsOf(err error) []string {
	var ms mirrorErrors
	if !errors.As(err, &ms) {
		ms = mirrorErrors{err}
	}
	var urls []string
	for _, e := range ms {
		var m *mirrorError
		if errors.As(e, &m) {
			urls = append(urls, m.URL)
		}
	}
	return urls
}

// mirrorErr returns the failure err holds of the mirror at url, or nil.
func mirrorErr(err error, url string) error {
	var ms mirrorErrors
	if !errors.As(err, &ms) {
		ms = mirrorErrors{err}
	}
	for _, e := range ms {
		var m *mirrorError
		if errors.As(e, &m) && m.URL == url {
			return m.Err
		}
	}
	return nil
}

// TestMirrorsRefusedLocation refuses a mirror pkg cannot read, naming it.
func TestMirrorsRefusedLocation(t *testing.T) {
	_, err := NewSource("https://example.com/repo/", Options{Mirrors: []string{"ftp://mirror.example.com/repo/"}})
	le, se := (*locationError)(nil), (*schemeError)(nil)
	if !errors.As(err, &le) || le.loc != "ftp://mirror.example.com/repo/" || !errors.As(err, &se) || se.scheme != "ftp" {
		t.Errorf("NewSource: %v; want an error naming the mirror", err)
	}
}

// TestMirrorLocal reads from a local mirror when the first location is down.
func TestMirrorLocal(t *testing.T) {
	dir, p := localRepo(t)
	if err := os.WriteFile(dir+"/index.json", writeIndex(t, p), 0o644); err != nil {
		t.Fatal(err)
	}
	c := openCache(t)
	s := mirrored(t, nil, &notes{}, refusedURL(t), dir)
	ix, err := c.indexOnly(t.Context(), s)
	if err != nil || len(ix.Packages) != 1 {
		t.Fatalf("Index: %v", err)
	}
	if err := fetchOne(c, s, p); err != nil {
		t.Fatal(err)
	}
	checkEntry(t, c, p, testFiles())
}

// TestFailoverWebPage: a mirror answering with a web page in place of index.json, whatever
// its type, is passed over as one serving a bad index is, not recorded as down.
func TestFailoverWebPage(t *testing.T) {
	index := writeIndex(t)
	good := newMirrorServer(t, map[string][]byte{"index.json": index})
	for _, ct := range []string{"text/html; charset=utf-8", "application/json"} {
		page := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			w.Header().Set("Content-Type", ct)
			w.Write([]byte("<html><body>log in</body></html>"))
		})
		c := openCache(t)
		var n notes
		if _, _, err := c.VerifiedIndex(t.Context(), mirrored(t, nil, &n, page.URL, good.URL)); err != nil {
			t.Fatalf("%s: %v", ct, err)
		}
		if n.len() != 1 || !errors.Is(n.why[0], ErrNoRepository) {
			t.Errorf("%s: notes %v, want one of a web page", ct, n.why)
		}
		if _, err := c.readDown(page.URL + "/"); err == nil {
			t.Errorf("%s: a mirror serving a web page is recorded as down", ct)
		}
	}
}

// TestFailoverResumedMismatch: an archive cut on a mirror with the right bytes and
// resumed on one with other bytes fails its check; neither is refused for bytes that
// were the other's: each is read again whole, and the first's serve the install.
func TestFailoverResumedMismatch(t *testing.T) {
	archive, p := testArchive(t)
	index := writeIndex(t, p)
	var cuts atomic.Int32
	right := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch {
		case r.URL.Path == "/index.json":
			w.Write(index)
		case r.URL.Path == "/"+p.Archive && cuts.Add(1) == 1:
			w.Header().Set("Content-Length", strconv.Itoa(len(archive)))
			w.Write(archive[:len(archive)/2])
			panic(http.ErrAbortHandler) // the connection is closed mid-body
		case r.URL.Path == "/"+p.Archive:
			serveArchive(w, r, archive)
		default:
			http.NotFound(w, r)
		}
	})
	corrupt := bytes.Clone(archive)
	corrupt[len(corrupt)-len(corrupt)/4] ^= 1
	bad := newMirrorServer(t, map[string][]byte{"index.json": index, p.Archive: corrupt})
	c := openCache(t)
	s := mirrored(t, nil, &notes{}, right.URL, bad.URL)
	if _, _, err := c.VerifiedIndex(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Fetch(t.Context(), s, p, nil); err != nil {
		t.Fatalf("Fetch of an archive cut on the right mirror and resumed on a corrupt one: %v", err)
	}
	checkEntry(t, c, p, testFiles())
	if cuts.Load() < 2 {
		t.Errorf("%d requests of the archive to the right mirror, want it asked again", cuts.Load())
	}
}

// unknownHostTransport fails the requests to host as a resolver that knows no such host
// would, counting them, and sends the others.
type unknownHostTransport struct {
	host string
	dns  dnsTransport
}

func (u *unknownHostTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Hostname() == u.host {
		return u.dns.RoundTrip(req)
	}
	return http.DefaultTransport.RoundTrip(req)
}

// TestFailoverUnknownHost reads an index from the second of two mirrors, the first on a
// host DNS does not know: that mirror is recorded down, and the next command asks the
// second first, and the first not at all.
func TestFailoverUnknownHost(t *testing.T) {
	key := newTestKey(t)
	index, sig := signedIndex(t, key, 1, time.Now().Add(time.Hour))
	good := newMirrorServer(t, map[string][]byte{"index.json": index, "index.json.sig": sig})
	unknown := "https://repo.exmaple.org/"
	tr := &unknownHostTransport{host: "repo.exmaple.org", dns: dnsTransport{err: &net.DNSError{Err: "no such host", IsNotFound: true}}}
	open := cacheOpener(t)
	c := open()
	s := mirrored(t, &key, &notes{}, unknown, good.URL)
	s.client = func() *http.Client { return &http.Client{Transport: tr} }
	if _, _, err := c.VerifiedIndex(t.Context(), s); err != nil {
		t.Fatalf("VerifiedIndex: %v", err)
	}
	if r, err := c.readDown(unknown); err != nil || !time.Now().Before(r.Until) {
		t.Errorf("record of the unknown host's mirror: %+v, %v; want it down", r, err)
	}

	// The next command.
	tries := tr.dns.tries
	s2 := mirrored(t, &key, &notes{}, unknown, good.URL)
	s2.client = func() *http.Client { return &http.Client{Transport: tr} }
	if _, _, err := open().VerifiedIndex(t.Context(), s2); err != nil {
		t.Fatal(err)
	}
	if tr.dns.tries != tries {
		t.Errorf("the next command asked the mirror on an unknown host %d times, want 0", tr.dns.tries-tries)
	}
}

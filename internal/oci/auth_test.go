package oci

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"pkg/pkgtest/testregistry"
)

func TestParseChallenges(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []challenge
	}{
		{[]string{`Bearer realm="http://127.0.0.1:5056/token",service="pkg-test-registry",scope="repository:pkg/main:pull"`},
			[]challenge{{"bearer", map[string]string{"realm": "http://127.0.0.1:5056/token", "service": "pkg-test-registry", "scope": "repository:pkg/main:pull"}}}},
		{[]string{`Basic realm="Registry Realm"`, `bearer Realm = "https://a/t" , scope=repository:x:pull,error="insufficient_scope"`},
			[]challenge{{"basic", map[string]string{"realm": "Registry Realm"}},
				{"bearer", map[string]string{"realm": "https://a/t", "scope": "repository:x:pull", "error": "insufficient_scope"}}}},
		{[]string{`Basic realm="a", Bearer realm="b\"c"`},
			[]challenge{{"basic", map[string]string{"realm": "a"}}, {"bearer", map[string]string{"realm": `b"c`}}}},
		{[]string{`Bearer realm="unterminated`}, []challenge{{"bearer", map[string]string{}}}},
		{[]string{``, `,,`}, nil},
	} {
		if got := parseChallenges(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseChallenges(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestHugeChallenge: a WWW-Authenticate header as large as net/http reads (10 MiB) of
// challenges or parameters without end keeps a few of each, where it allocated 972 MiB.
func TestHugeChallenge(t *testing.T) {
	var params strings.Builder
	params.WriteString("Bearer realm=\"https://a/t\"")
	for i := 0; params.Len() < 10<<20; i++ {
		fmt.Fprintf(&params, ",p%d=x", i)
	}
	for _, h := range []string{strings.Repeat("a ", 5<<20), params.String()} {
		var cs []challenge
		allocs := testing.AllocsPerRun(1, func() { cs = parseChallenges([]string{h}) })
		if len(cs) > maxChallenges || len(cs[0].params) > maxParams || allocs > 100 {
			t.Errorf("%.20q...: %d challenges, %d parameters in the first, %.0f allocations", h, len(cs), len(cs[0].params), allocs)
		}
	}
	if cs := parseChallenges([]string{params.String()}); cs[0].params["realm"] != "https://a/t" {
		t.Errorf("realm %q, want the first parameter's", cs[0].params["realm"])
	}
}

func FuzzParseChallenges(f *testing.F) {
	f.Add(`Bearer realm="http://127.0.0.1:5056/token",service="s",scope="repository:pkg/main:pull"`)
	f.Add(`Basic realm="x", Bearer realm="b\"c",error=insufficient_scope`)
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range parseChallenges([]string{s}) {
			if c.scheme == "" || c.scheme != strings.ToLower(c.scheme) {
				t.Errorf("scheme %q", c.scheme)
			}
		}
	})
}

func TestParseRef(t *testing.T) {
	for _, tc := range []struct {
		in, want, scheme string
	}{
		{"oci://127.0.0.1:5000/pkg/main", "oci://127.0.0.1:5000/pkg/main:latest/", "http"},
		{"oci://localhost/pkg/main:v1/", "oci://localhost/pkg/main:v1/", "http"},
		{"oci://ghcr.io/org/repo:stable", "oci://ghcr.io/org/repo:stable/", "https"},
		{"oci+http://reg.lan:5000/a/b/c", "oci+http://reg.lan:5000/a/b/c:latest/", "http"},
		{"oci+https://127.0.0.1:5000/a", "oci+https://127.0.0.1:5000/a:latest/", "https"},
	} {
		u, _ := url.Parse(tc.in)
		r, err := ParseRef(u)
		if err != nil {
			t.Errorf("ParseRef(%s): %v", tc.in, err)
			continue
		}
		if r.String() != tc.want || r.HTTPScheme() != tc.scheme {
			t.Errorf("ParseRef(%s) = %s over %s, want %s over %s", tc.in, r, r.HTTPScheme(), tc.want, tc.scheme)
		}
	}
	for _, bad := range []string{"oci://host", "oci:///a/b", "oci://h/A/b", "oci://h/a//b", "oci://h/a:b:c", "oci://h/a?x=1", "oci://h/a:-x", "docker://h/a", "http://h/a/b"} {
		u, _ := url.Parse(bad)
		_, err := ParseRef(u)
		if re := (*RefError)(nil); !errors.Is(err, ErrRef) || !errors.As(err, &re) || re.Ref != bad || re.Why == "" {
			t.Errorf("ParseRef(%s): %v, want a RefError (ErrRef) naming it and why", bad, err)
		}
	}
	u, _ := url.Parse("oci://u:secret@h/A")
	if _, err := ParseRef(u); !errors.Is(err, ErrRef) || strings.Contains(err.Error(), "secret") {
		t.Errorf("ParseRef(oci://u:secret@h/A): %v, want ErrRef without the password", err)
	}
	digest := "oci://127.0.0.1:5000/pkg/main@sha256:" + strings.Repeat("e4", 32)
	for _, ref := range []string{digest, digest + "/"} {
		u, _ := url.Parse(ref)
		if _, err := ParseRef(u); !errors.Is(err, ErrRef) || !errors.Is(err, ErrDigestRef) || !ByDigest(u) {
			t.Errorf("ParseRef(%s): %v, want ErrDigestRef", ref, err)
		}
	}
	for ref, want := range map[string]string{
		"oci://h/pkg/main:v1@sha256:" + strings.Repeat("e4", 32):        "oci://h/pkg/main:v1",
		"oci://h/pkg/main@sha256:" + strings.Repeat("e4", 32):           "oci://h/pkg/main:TAG",
		"oci://h/main@sha256:" + strings.Repeat("e4", 32):               "oci://h/main:TAG",
		"oci://u:p@h/pkg/main@sha256:" + strings.Repeat("e4", 32):       "oci://h/pkg/main:TAG",
		"oci+https://tok@h/pkg/main@sha256:" + strings.Repeat("e4", 32): "oci+https://h/pkg/main:TAG",
	} {
		u, _ := url.Parse(ref)
		_, err := ParseRef(u)
		if de := (*digestRefError)(nil); !ByDigest(u) || !errors.As(err, &de) || de.tagged != want {
			t.Errorf("ParseRef(%s): %v, want ErrDigestRef suggesting %s", ref, err, want)
		}
	}
}

// refOf returns the reference of reg's repository.
func refOf(t *testing.T, reg *testregistry.Registry) Ref {
	u, _ := url.Parse(reg.URL())
	r, err := ParseRef(u)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// clock is a time tests move.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) get() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newTestClient(r Ref, creds Credentials) (*Client, *clock) {
	c := NewClient(r, Options{Credentials: creds})
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	c.now = clk.get
	return c, clk
}

func get(t *testing.T, c *Client, u *url.URL) *http.Response {
	t.Helper()
	resp, err := (&http.Client{Transport: c}).Get(u.String())
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestTokenCache: a token is asked for once per scope and used for its lifetime, and
// again after it expires or a 401.
func TestTokenCache(t *testing.T) {
	reg := testregistry.New(t)
	reg.Blobs[Digest([]byte("x"))] = []byte("x")
	reg.Life = 0 // the spec's default: 60 s
	c, clk := newTestClient(refOf(t, reg), nil)
	blob := refOf(t, reg).BlobURL(Digest([]byte("x")))
	for i, step := range []struct {
		before func()
		tokens int
	}{
		{func() {}, 1},
		{func() { clk.add(59 * time.Second) }, 1},
		{func() { clk.add(2 * time.Second) }, 2},
		{reg.Revoke, 3},
	} {
		step.before()
		if resp := get(t, c, blob); resp.StatusCode != http.StatusOK {
			t.Fatalf("step %d: %s", i, resp.Status)
		}
		if got := reg.TokenRequests(); got != step.tokens {
			t.Errorf("step %d: %d token requests, want %d", i, got, step.tokens)
		}
	}
	if q := reg.Asked[0]; q.Get("service") != "test-registry" || q.Get("scope") != "repository:pkg/main:pull" {
		t.Errorf("token request %v, want the challenge's service and scope", q)
	}
	if reg.AuthHdr[0] != "" {
		t.Errorf("anonymous token request sent Authorization %q", reg.AuthHdr[0])
	}
}

// TestTokenParallel: requests that meet the same challenge at once ask for one token.
func TestTokenParallel(t *testing.T) {
	reg := testregistry.New(t)
	reg.Blobs[Digest([]byte("x"))] = []byte("x")
	c, _ := newTestClient(refOf(t, reg), nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			resp, err := (&http.Client{Transport: c}).Get(refOf(t, reg).BlobURL(Digest([]byte("x"))).String())
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Errorf("GET: %v, %v", resp, err)
			}
			if err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	if n := reg.TokenRequests(); n != 1 {
		t.Errorf("%d token requests, want 1", n)
	}
}

// TestTokenScopes: pulling and pushing are separate scopes, each cached.
func TestTokenScopes(t *testing.T) {
	reg := testregistry.New(t)
	c, _ := newTestClient(refOf(t, reg), nil)
	ctx := context.Background()
	for range 2 {
		if _, err := c.HasBlob(ctx, Digest([]byte("x"))); err != nil {
			t.Fatal(err)
		}
		if err := c.PutManifest(ctx, "latest", MediaTypeManifest, []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	var scopes []string
	for _, q := range reg.Asked {
		scopes = append(scopes, q.Get("scope"))
	}
	if want := []string{"repository:pkg/main:pull", "repository:pkg/main:pull,push"}; !reflect.DeepEqual(scopes, want) {
		t.Errorf("token scopes %q, want %q", scopes, want)
	}
}

// fakeNet answers for hosts given as IP literals, recording the hosts asked: registries
// and realms pkg must or must not reach, without a network.
type fakeNet struct {
	mu    sync.Mutex
	hosts []string
	realm string // the challenge's realm
	to    string // where the realm redirects, if not ""
}

func (f *fakeNet) RoundTrip(req *http.Request) (*http.Response, error) {
	f.mu.Lock()
	f.hosts = append(f.hosts, req.URL.Host)
	f.mu.Unlock()
	h := http.Header{}
	code := http.StatusOK
	body := `{"token":"t"}`
	if strings.HasPrefix(req.URL.Path, "/v2/") && req.Header.Get("Authorization") == "" {
		h.Set("WWW-Authenticate", `Bearer realm="`+f.realm+`",service="s"`)
		code, body = http.StatusUnauthorized, ""
	} else if f.to != "" && !strings.HasPrefix(req.URL.Path, "/v2/") {
		h.Set("Location", f.to)
		code, body = http.StatusFound, ""
	}
	return &http.Response{StatusCode: code, Status: http.StatusText(code), Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

// TestRealm: a challenge's realm in plain http from a registry over https, or on a
// loopback or link-local address the registry is not on, is refused before any request
// goes there; other realms, another host's included (Docker Hub's auth.docker.io), are
// asked.
func TestRealm(t *testing.T) {
	for _, tc := range []struct {
		registry, realm string
		refused         bool
	}{
		{"oci://203.0.113.5/pkg/main", "https://198.51.100.7/token", false},
		{"oci://203.0.113.5/pkg/main", "http://198.51.100.7/token", true},
		{"oci://203.0.113.5/pkg/main", "https://127.0.0.1/token", true},
		{"oci://203.0.113.5/pkg/main", "https://localhost:8443/token", true},
		{"oci://203.0.113.5/pkg/main", "https://169.254.169.254/latest/meta-data", true},
		{"oci://203.0.113.5/pkg/main", "https://[::1]/token", true},
		{"oci://203.0.113.5/pkg/main", "https://0.0.0.0/token", true},
		{"oci://203.0.113.5/pkg/main", "ftp://198.51.100.7/token", true},
		{"oci://203.0.113.5/pkg/main", "https://user:pw@198.51.100.7/token", true},
		{"oci://127.0.0.1:5000/pkg/main", "http://127.0.0.1:5001/token", false},
		{"oci://127.0.0.1:5000/pkg/main", "http://169.254.169.254/token", true},
		{"oci+http://203.0.113.5/pkg/main", "http://198.51.100.7/token", false},
		{"oci+http://169.254.1.1/pkg/main", "http://169.254.169.254/token", false},
	} {
		u, _ := url.Parse(tc.registry)
		ref, err := ParseRef(u)
		if err != nil {
			t.Fatal(err)
		}
		f := &fakeNet{realm: tc.realm}
		c := NewClient(ref, Options{Transport: f})
		_, err = (&http.Client{Transport: c}).Get(ref.BlobURL(Digest(nil)).String())
		var re *RealmError
		realmHost := ""
		if ru, perr := url.Parse(tc.realm); perr == nil {
			realmHost = ru.Host
		}
		asked := len(f.hosts) > 1 && f.hosts[1] == realmHost
		switch {
		case tc.refused && (!errors.As(err, &re) || asked):
			t.Errorf("%s with realm %s: %v, asked the realm %v; want a *RealmError and no request", tc.registry, tc.realm, err, asked)
		case tc.refused && !strings.Contains(err.Error(), ref.Registry()):
			t.Errorf("%s with realm %s: %v does not name the registry", tc.registry, tc.realm, err)
		case !tc.refused && (err != nil || !asked):
			t.Errorf("%s with realm %s: %v, asked the realm %v; want it asked", tc.registry, tc.realm, err, asked)
		}
	}
}

// TestRealmRedirect: a realm's redirect is checked as the realm is: one to a loopback or
// link-local address the registry is not on, or to plain http, is refused unasked; a
// realm redirecting to itself is left after 10 redirects.
func TestRealmRedirect(t *testing.T) {
	u, _ := url.Parse("oci://203.0.113.5/pkg/main")
	ref, err := ParseRef(u)
	if err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{"https://169.254.169.254/latest/meta-data", "https://127.0.0.1:8443/token", "http://198.51.100.8/token"} {
		f := &fakeNet{realm: "https://198.51.100.7/token", to: to}
		c := NewClient(ref, Options{Transport: f})
		_, err := (&http.Client{Transport: c}).Get(ref.BlobURL(Digest(nil)).String())
		var re *RealmError
		if !errors.As(err, &re) || len(f.hosts) != 2 {
			t.Errorf("realm redirecting to %s: %v, hosts asked %q; want a *RealmError, %s unasked", to, err, f.hosts, to)
		}
	}
	f := &fakeNet{realm: "https://198.51.100.7/token", to: "https://198.51.100.7/token"}
	_, err = (&http.Client{Transport: NewClient(ref, Options{Transport: f})}).Get(ref.BlobURL(Digest(nil)).String())
	if err == nil || len(f.hosts) > 12 {
		t.Errorf("realm redirecting to itself: %v after %d requests, want an error after at most 12", err, len(f.hosts))
	}
}

// TestCredentialsOnlyToTheirHost: the registry's basic credentials go to its token realm
// alone, never to the registry, a CDN a blob is redirected to, or another host the realm
// redirects to; the registry's token goes to no other host either.
func TestCredentialsOnlyToTheirHost(t *testing.T) {
	reg := testregistry.New(t)
	reg.Users = map[string]string{"bob": "s3cret"}
	var mu sync.Mutex
	var cdnAuth, elsewhereAuth []string
	cdn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cdnAuth = append(cdnAuth, r.Header.Get("Authorization"))
		mu.Unlock()
		io.WriteString(w, "x")
	}))
	defer cdn.Close()
	// The CDN on another host name than the registry's 127.0.0.1.
	cdnURL := strings.Replace(cdn.URL, "127.0.0.1", "localhost", 1)
	d := Digest([]byte("x"))
	reg.Reg.Config.Handler = redirectBlob(reg.Reg.Config.Handler, reg, cdnURL+"/blob")
	c, _ := newTestClient(refOf(t, reg), func(host string, to *url.URL) (Secret, error) {
		if host != refOf(t, reg).Host {
			t.Errorf("credentials asked for %s", host)
		}
		return Secret{User: "bob", Password: "s3cret"}, nil
	})
	if resp := get(t, c, refOf(t, reg).BlobURL(d)); resp.StatusCode != http.StatusOK {
		t.Fatalf("blob through the CDN: %s", resp.Status)
	}
	if len(reg.AuthHdr) != 1 || !strings.HasPrefix(reg.AuthHdr[0], "Basic ") {
		t.Errorf("token requests' Authorization %q, want one Basic", reg.AuthHdr)
	}
	for _, h := range reg.Seen {
		if a := h.Get("Authorization"); strings.HasPrefix(a, "Basic") {
			t.Errorf("the registry was sent %q", a)
		}
	}
	if len(cdnAuth) != 1 || cdnAuth[0] != "" {
		t.Errorf("the CDN was sent Authorization %q, want none", cdnAuth)
	}

	// A realm redirecting to another host: net/http drops Authorization there.
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		elsewhereAuth = append(elsewhereAuth, r.Header.Get("Authorization"))
		mu.Unlock()
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	defer elsewhere.Close()
	reg.Auth.Config.Handler = http.RedirectHandler(strings.Replace(elsewhere.URL, "127.0.0.1", "localhost", 1)+"/token", http.StatusFound)
	c2, _ := newTestClient(refOf(t, reg), func(string, *url.URL) (Secret, error) { return Secret{User: "bob", Password: "s3cret"}, nil })
	_, err := (&http.Client{Transport: c2}).Get(refOf(t, reg).BlobURL(d).String())
	var te *TokenError
	if !errors.As(err, &te) || !te.Denied() {
		t.Errorf("token realm redirected elsewhere: %v, want a *TokenError denied", err)
	}
	if len(elsewhereAuth) != 1 || elsewhereAuth[0] != "" {
		t.Errorf("the host the realm redirected to was sent Authorization %q, want none", elsewhereAuth)
	}
}

// redirectBlob redirects blob GETs that carry a token to cdn, as hosted registries send
// blobs from object stores.
func redirectBlob(h http.Handler, reg *testregistry.Registry, cdn string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reg.Mu.Lock()
		_, ok := reg.Tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		reg.Mu.Unlock()
		if ok && strings.Contains(r.URL.Path, "/blobs/") {
			http.Redirect(w, r, cdn, http.StatusTemporaryRedirect)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// TestBadCredentials: a realm refusing the credentials is a *TokenError naming the
// registry and the realm, and not the credentials.
func TestBadCredentials(t *testing.T) {
	reg := testregistry.New(t)
	reg.Users = map[string]string{"bob": "s3cret"}
	c, _ := newTestClient(refOf(t, reg), func(string, *url.URL) (Secret, error) { return Secret{User: "bob", Password: "wrong-pass"}, nil })
	_, err := (&http.Client{Transport: c}).Get(refOf(t, reg).ManifestURL("latest").String())
	var te *TokenError
	if !errors.As(err, &te) || !te.Denied() || te.Registry != refOf(t, reg).Registry() {
		t.Fatalf("bad credentials: %v, want a *TokenError denied", err)
	}
	if msg := err.Error(); strings.Contains(msg, "wrong-pass") || strings.Contains(msg, "bob") || !strings.Contains(msg, reg.Auth.URL) {
		t.Errorf("error %q names the credentials or not the realm", msg)
	}
}

// TestStaticToken: a token of the credentials' goes to the registry as its bearer token,
// and no token is asked of the realm; refused, its 401 stands.
func TestStaticToken(t *testing.T) {
	reg := testregistry.New(t)
	reg.Blobs[Digest([]byte("x"))] = []byte("x")
	reg.Tokens["static"] = "repository:pkg/main:pull"
	for _, tc := range []struct {
		token string
		code  int
	}{{"static", http.StatusOK}, {"revoked", http.StatusUnauthorized}} {
		c, _ := newTestClient(refOf(t, reg), func(string, *url.URL) (Secret, error) { return Secret{Token: tc.token}, nil })
		if resp := get(t, c, refOf(t, reg).BlobURL(Digest([]byte("x")))); resp.StatusCode != tc.code {
			t.Errorf("token %s: %s, want %d", tc.token, resp.Status, tc.code)
		}
	}
	if n := reg.TokenRequests(); n != 0 {
		t.Errorf("%d token requests, want none", n)
	}
}

// TestBasicChallenge: a registry whose challenge is Basic gets the credentials on its own
// requests; without credentials its 401 stands.
func TestBasicChallenge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, pass, ok := r.BasicAuth(); !ok || user != "bob" || pass != "pw" {
			w.Header().Set("WWW-Authenticate", `Basic realm="registry"`)
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer srv.Close()
	u, _ := url.Parse("oci://" + srv.Listener.Addr().String() + "/pkg/main")
	ref, err := ParseRef(u)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		s    Secret
		code int
	}{{Secret{User: "bob", Password: "pw"}, http.StatusOK}, {Secret{}, http.StatusUnauthorized}} {
		c, _ := newTestClient(ref, func(string, *url.URL) (Secret, error) { return tc.s, nil })
		for range 2 {
			if resp := get(t, c, ref.BlobURL(Digest(nil))); resp.StatusCode != tc.code {
				t.Errorf("%v: %s, want %d", tc.s.User, resp.Status, tc.code)
			}
		}
	}
}

package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pkg/internal/oci"
	"pkg/repo"
)

// authServer serves the test archive's repository only to requests with the
// Authorization header want, answering 401 to others, and records what each request sent.
func authServer(t *testing.T, want string) (*server, repo.Package) {
	archive, p := testArchive(t)
	index := writeIndex(t, p)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		if r.Header.Get("Authorization") != want {
			w.Header().Set("WWW-Authenticate", `Basic realm="pkg"`)
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/index.json":
			w.Write(index)
		case "/" + p.Archive:
			serveArchive(w, r, archive)
		default:
			http.NotFound(w, r)
		}
	})
	return srv, p
}

// writeNetrc writes a netrc file of text, mode 0600, and returns its name.
func writeNetrc(t *testing.T, text string) string {
	name := filepath.Join(t.TempDir(), "netrc")
	if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestCredentialSources fetches the index and the archive of a repository that requires
// credentials, given each way pkg takes them, and checks that a request without them is
// refused as ErrDenied.
func TestCredentialSources(t *testing.T) {
	basic := "Basic " + "dTpzZWNyZXQ=" // u:secret
	for _, tc := range []struct {
		name, want string
		o          func(t *testing.T, u *url.URL) (string, Options)
	}{
		{"token", "Bearer tok-123", func(t *testing.T, u *url.URL) (string, Options) {
			return u.String(), Options{Credential: Credential{Token: "tok-123"}}
		}},
		{"password", basic, func(t *testing.T, u *url.URL) (string, Options) {
			return u.String(), Options{Credential: Credential{Username: "u", Password: "secret"}}
		}},
		{"netrc", basic, func(t *testing.T, u *url.URL) (string, Options) {
			return u.String(), Options{Netrc: writeNetrc(t, "machine other login x password y\nmachine "+u.Hostname()+" login u password secret\n")}
		}},
		{"netrc default", basic, func(t *testing.T, u *url.URL) (string, Options) {
			return u.String(), Options{Netrc: writeNetrc(t, "default login u password secret\n")}
		}},
		{"userinfo before netrc", basic, func(t *testing.T, u *url.URL) (string, Options) {
			u.User = url.UserPassword("u", "secret")
			return u.String(), Options{Netrc: writeNetrc(t, "machine "+u.Hostname()+" login u password wrong\n")}
		}},
		{"repository's before userinfo", "Bearer tok-123", func(t *testing.T, u *url.URL) (string, Options) {
			u.User = url.UserPassword("u", "wrong")
			return u.String(), Options{Credential: Credential{Token: "tok-123"}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, p := authServer(t, tc.want)
			u, _ := url.Parse(srv.URL)
			loc, o := tc.o(t, u)
			s, err := NewSource(loc, o)
			if err != nil {
				t.Fatal(err)
			}
			c := openCache(t)
			if _, err := c.indexOnly(t.Context(), s); err != nil {
				t.Fatalf("index: %v", err)
			}
			if err := fetchOne(c, s, p); err != nil {
				t.Fatalf("archive: %v", err)
			}
			for i, h := range srv.requests() {
				if h.Get("Authorization") != tc.want {
					t.Errorf("request %d: Authorization %q, want %q", i, h.Get("Authorization"), tc.want)
				}
			}
		})
	}
	t.Run("none", func(t *testing.T) {
		srv, _ := authServer(t, "Bearer tok-123")
		_, err := openCache(t).indexOnly(t.Context(), quick(t, srv.URL))
		if !errors.Is(err, ErrDenied) {
			t.Fatalf("index without credentials: %v, want ErrDenied", err)
		}
	})
}

// TestCredentialNotRedirected serves a repository that redirects its archive to another
// host, a subdomain of its own (to which net/http would copy an Authorization header it was
// given), and back to itself: the repository's credential goes to its own host alone.
func TestCredentialNotRedirected(t *testing.T) {
	archive, p := testArchive(t)
	hosts := make(chan string, 10)
	var port string
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		hosts <- r.Host + " " + r.Header.Get("Authorization")
		switch {
		case r.URL.Path == "/index.json":
			w.Write(writeIndex(t, p))
		case strings.HasPrefix(r.Host, "cdn."):
			http.Redirect(w, r, "http://pkg.example:"+port+"/final/"+p.Archive, http.StatusFound)
		case r.URL.Path == "/"+p.Archive:
			http.Redirect(w, r, "http://cdn.pkg.example:"+port+"/"+p.Archive, http.StatusFound)
		default:
			serveArchive(w, r, archive)
		}
	})
	_, port, _ = net.SplitHostPort(srv.Listener.Addr().String())
	s, err := NewSource("http://pkg.example:"+port+"/", Options{Credential: Credential{Token: "tok"}, CleartextCredentials: true})
	if err != nil {
		t.Fatal(err)
	}
	s.client().Transport.(authTransport).base.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
	}
	if err := fetchOne(openCache(t), s, p); err != nil {
		t.Fatal(err)
	}
	close(hosts)
	var got []string
	for h := range hosts {
		got = append(got, h)
	}
	want := []string{"pkg.example:" + port + " Bearer tok", "cdn.pkg.example:" + port + " ", "pkg.example:" + port + " Bearer tok"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests (host, Authorization):\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCredentialCleartext checks that credentials go over plain http only to this machine
// or where the user allows it, and that the netrc default is then left out.
func TestCredentialCleartext(t *testing.T) {
	netrc := writeNetrc(t, "machine files.example login u password p\ndefault login anonymous password guest\n")
	for _, tc := range []struct {
		loc, get  string
		cleartext bool
		want      string // the Authorization header sent, or "refused"
	}{
		{"https://pkg.example/", "https://pkg.example/index.json", false, "Bearer tok"},
		{"http://pkg.example/", "http://pkg.example/index.json", false, "refused"},
		{"http://pkg.example/", "http://pkg.example/index.json", true, "Bearer tok"},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080/index.json", false, "Bearer tok"},
		{"http://localhost:8080/", "http://localhost:8080/index.json", false, "Bearer tok"},
		{"http://[::1]:8080/", "http://[::1]:8080/index.json", false, "Bearer tok"},
		{"https://pkg.example/", "http://files.example/a.tar", false, "refused"},
		{"https://pkg.example/", "https://files.example/a.tar", false, "Basic dTpw"},
		{"https://pkg.example/", "https://elsewhere.example/a.tar", false, "Basic YW5vbnltb3VzOmd1ZXN0"},
		{"https://pkg.example/", "http://elsewhere.example/a.tar", false, ""},
		{"https://pkg.example:8443/", "https://pkg.example/index.json", false, "Basic YW5vbnltb3VzOmd1ZXN0"},
	} {
		s, err := NewSource(tc.loc, Options{Credential: Credential{Token: "tok"}, Netrc: netrc, CleartextCredentials: tc.cleartext})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodGet, tc.get, nil)
		r, err := s.creds.authorize(req)
		got := "refused"
		if err == nil {
			got = r.Header.Get("Authorization")
		} else if ce := (*CleartextError)(nil); !errors.As(err, &ce) {
			t.Errorf("%s from %s: %v, want a *CleartextError", tc.get, tc.loc, err)
		}
		if got != tc.want {
			t.Errorf("%s from %s (cleartext %v): %q, want %q", tc.get, tc.loc, tc.cleartext, got, tc.want)
		}
		if req.Header.Get("Authorization") != "" {
			t.Errorf("%s: the caller's request was changed", tc.get)
		}
	}
}

// TestCredentialHidden checks that a credential does not print itself.
func TestCredentialHidden(t *testing.T) {
	c := Credential{Username: "user", Password: "pass-123", Token: "tok-123"}
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v %#v %s", c, c, c), fmt.Sprint(Options{Credential: c})} {
		if strings.Contains(s, "pass-123") || strings.Contains(s, "tok-123") || strings.Contains(s, "user") {
			t.Errorf("printed as %q", s)
		}
	}
}

// TestNetrcReadWhenAsked gives a source a netrc file pkg refuses (passwords other users
// can read): a local repository, which sends no credential, installs all the same, and a
// request over HTTP, which asks the file for its host, fails naming it.
func TestNetrcReadWhenAsked(t *testing.T) {
	open := writeNetrc(t, "machine example.org login u password secret\n")
	if err := os.Chmod(open, 0o644); err != nil {
		t.Fatal(err)
	}
	dir, p := localRepo(t)
	if err := os.WriteFile(filepath.Join(dir, "index.json"), writeIndex(t, p), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := NewSource(dir, Options{Netrc: open})
	if err != nil {
		t.Fatal(err)
	}
	c := openCache(t)
	if _, err := c.indexOnly(t.Context(), s); err != nil {
		t.Fatalf("index of a local repository: %v", err)
	}
	if err := fetchOne(c, s, p); err != nil {
		t.Fatalf("archive of a local repository: %v", err)
	}

	srv, _ := authServer(t, "")
	s, err = NewSource(srv.URL, Options{Netrc: open})
	if err != nil {
		t.Fatalf("a source over HTTP: %v, want the netrc read by its first request", err)
	}
	_, err = openCache(t).indexOnly(t.Context(), s)
	ne := (*NetrcError)(nil)
	if !errors.Is(err, ErrNetrcOpen) || !errors.As(err, &ne) || ne.File != open {
		t.Fatalf("index over HTTP: %v, want a *NetrcError of ErrNetrcOpen naming %s", err, open)
	}
	if len(srv.requests()) != 0 {
		t.Errorf("%d requests sent, want none", len(srv.requests()))
	}
}

// TestURLCredentialDenied: a repository that refuses the user information of its URL (a
// user and password, or a token written as the user, https://TOKEN@host/, as GitHub takes
// one) is a *DeniedError that says so, naming the repository and its location without
// any of it, and its message shows the URL without any of it, the user's name too. A
// repository credential is sent in its place, and so refused.
func TestURLCredentialDenied(t *testing.T) {
	srv, _ := authServer(t, "Bearer other")
	repoToken := Options{Credential: Credential{Token: "tok-123"}, CredentialFrom: "PKG_REPO_TEAM_TOKEN", Repo: "team"}
	for _, tc := range []struct {
		user     *url.Userinfo
		o        Options
		inURL    bool
		credFrom string
	}{
		{url.User("tok-123"), Options{}, true, ""},
		{url.UserPassword("alice", "wrongPW2"), Options{}, true, ""},
		{nil, Options{}, false, ""},
		{url.UserPassword("alice", "wrongPW2"), repoToken, false, "PKG_REPO_TEAM_TOKEN"},
	} {
		u, _ := url.Parse(srv.URL)
		u.User = tc.user
		s, err := NewSource(u.String(), tc.o)
		if err != nil {
			t.Fatal(err)
		}
		_, err = openCache(t).indexOnly(t.Context(), s)
		de := (*DeniedError)(nil)
		if !errors.As(err, &de) || de.URL != tc.inURL || de.Credential != tc.credFrom || de.Repo != tc.o.Repo || de.Location != srv.URL {
			t.Errorf("%s: %v (%+v), want a *DeniedError with URL %v, Credential %q, of %q at %s", u.Redacted(), err, de, tc.inURL, tc.credFrom, tc.o.Repo, srv.URL)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "tok-123") || strings.Contains(msg, "alice") || !strings.Contains(msg, srv.URL+"/index.json") {
			t.Errorf("%s: %q, want %s/index.json named without user information", u.Redacted(), msg, srv.URL)
		}
	}
}

// TestNetrcCredentialDenied: a repository that refuses the netrc entry of its host, or the
// netrc default, is a *DeniedError whose Credential names that entry and the file, so that
// the advice is to check it, not to add one; an entry of another host sent nothing, nor
// did the default over plain http to another machine without cleartext credentials.
func TestNetrcCredentialDenied(t *testing.T) {
	srv, _ := authServer(t, "Bearer other")
	host := strings.TrimPrefix(srv.URL, "http://")
	host = host[:strings.LastIndexByte(host, ':')]
	for _, tc := range []struct {
		text, want string
	}{
		{"machine " + host + " login u password wrongPW2\n", "machine " + host + " in "},
		{"default login u password wrongPW2\n", "the default entry of "},
		{"machine example.org login u password wrongPW2\n", ""},
	} {
		netrc := writeNetrc(t, tc.text)
		s, err := NewSource(srv.URL, Options{Netrc: netrc, Repo: "team"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = openCache(t).indexOnly(t.Context(), s)
		want := ""
		if tc.want != "" {
			want = tc.want + netrc
		}
		de := (*DeniedError)(nil)
		if !errors.As(err, &de) || de.Credential != want || de.URL {
			t.Errorf("netrc %q: %v (%+v), want a *DeniedError with Credential %q", tc.text, err, de, want)
			continue
		}
		if strings.Contains(err.Error(), "wrongPW2") {
			t.Errorf("netrc %q: %q shows the password", tc.text, err)
		}
	}
	// The default entry goes in plain http to another machine only where cleartext
	// credentials are allowed: else it was not sent, and is not named.
	netrc := writeNetrc(t, "default login u password wrongPW2\n")
	d := DeniedError{netrc: netrc, locs: []string{"http://203.0.113.5/repo/"}}
	if got := d.netrcEntry(); got != "" {
		t.Errorf("the default entry over plain http to another machine: %q, want none", got)
	}
	d.cleartext = true
	if got, want := d.netrcEntry(), "the default entry of "+netrc; got != want {
		t.Errorf("the default entry over plain http, cleartext allowed: %q, want %q", got, want)
	}
}

// TestRegistrySecretCleartext: a registry's credentials, its URL's user information too,
// go to a token realm over plain http only where the realm is on this machine: a registry
// on 127.0.0.1 (plain http) whose challenge names an http realm elsewhere is refused. The
// URL's user information goes over plain http to the host and port written in it, as an
// http:// URL's does (oci+http://u:secret@203.0.113.5/a), and to no other: not to the
// plain http of a host written as https.
func TestRegistrySecretCleartext(t *testing.T) {
	n := newNetConfig(nil)
	user := url.UserPassword("u", "secret")
	for _, tc := range []struct {
		scheme   string // the registry's
		registry string
		realm    string
		ok       bool
	}{
		{"http", "127.0.0.1:5000", "http://realm.example.com/token", false},
		{"http", "127.0.0.1:5000", "https://realm.example.com/token", true},
		{"http", "127.0.0.1:5000", "http://127.0.0.1:5001/token", true},
		{"http", "203.0.113.5", "http://203.0.113.5/v2/a/manifests/latest", true},
		{"http", "Registry.example.com:5000", "http://registry.example.com:5000/token", true},
		{"http", "203.0.113.5", "http://203.0.113.5:5001/token", false},
		{"http", "203.0.113.5", "http://realm.example.com/token", false},
		{"https", "registry.example.com", "https://registry.example.com/token", true},
		{"https", "registry.example.com", "http://registry.example.com/token", false},
	} {
		to, _ := url.Parse(tc.realm)
		s, err := registrySecret(n, tc.scheme, user)(tc.registry, to)
		ce := (*CleartextError)(nil)
		switch {
		case tc.ok && (err != nil || s.User != "u" || s.Password != "secret"):
			t.Errorf("realm %s: %v, want the URL's user and password", tc.realm, err)
		case !tc.ok && (!errors.As(err, &ce) || ce.Host != to.Host || s.Password != ""):
			t.Errorf("realm %s: %v, want a *CleartextError naming %s", tc.realm, err, to.Host)
		}
	}
}

// TestLocationByDigest refuses an OCI reference by digest as such, not as a URL whose
// user information pkg cannot read, naming the reference.
func TestLocationByDigest(t *testing.T) {
	loc := "oci://127.0.0.1:5055/team/tools@sha256:" + strings.Repeat("e4", 32)
	_, err := NewSource(loc, Options{})
	if le := (*locationError)(nil); !errors.Is(err, oci.ErrDigestRef) || errors.Is(err, errLocation) || !errors.As(err, &le) || le.loc != loc {
		t.Errorf("NewSource(%q): %v; want oci.ErrDigestRef naming it", loc, err)
	}
	withUser := strings.Replace(loc, "oci://", "oci://u:S3cret@", 1)
	if _, err := NewSource(withUser, Options{}); !errors.Is(err, oci.ErrDigestRef) || errors.Is(err, errLocation) || strings.Contains(err.Error(), "S3cret") {
		t.Errorf("NewSource(%q): %v; want oci.ErrDigestRef, without the password", withUser, err)
	}
}

// TestLocationUnreadableURL: a URL net/url cannot read, whose password holds "#", "?" or
// "/" unescaped, is refused as a location, its user information left out of the error,
// not read as a directory's path and printed whole.
func TestLocationUnreadableURL(t *testing.T) {
	for _, loc := range []string{"https://u:S3c#ret@h.invalid/", "team://u:S3c?ret@h.invalid/", "https://u:S3c/ret@h.invalid/x",
		"https://ci:2024S3c#Xy@h.invalid/", "https://ci:2024/S3c@h.invalid/r/", "https://ci:S3c@ss/wd@h.invalid/"} {
		_, err := NewSource(loc, Options{})
		if !errors.Is(err, errLocation) || strings.Contains(err.Error(), "S3c") || strings.Contains(err.Error(), "wd") {
			t.Errorf("NewSource(%q): %v; want errLocation, without the password", loc, err)
		}
	}
}

package fetch

import (
	"encoding/base64"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// Credential is what requests to a repository authenticate with: a bearer token, or else
// a user name and password (HTTP basic). Its String never shows them.
type Credential struct {
	Username, Password string
	Token              string
}

func (c Credential) String() string   { return "fetch.Credential{redacted}" }
func (c Credential) GoString() string { return c.String() }

// IsZero reports whether c holds nothing to send.
func (c Credential) IsZero() bool { return c == Credential{} }

// header is the Authorization header c makes.
func (c Credential) header() string {
	if c.Token != "" {
		return "Bearer " + c.Token
	}
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(c.Username+":"+c.Password))
}

// credentials are what a Source's requests authenticate with, by host. Each request gets
// the first of: the repository's own credential, for the hosts of its location and
// mirrors alone; the user information of the URL asked for (net/http sends it); the
// netrc machine of the host; the netrc default. A redirect is a request of its own, so
// credentials never follow one to another host, as net/http's copy of a header would to a
// subdomain (its shouldCopyHeaderOnRedirect).
type credentials struct {
	repo      Credential
	hosts     map[string]bool // host[:port] of each location, lower case
	cleartext bool            // sent over http to any host, not only to a loopback one

	// The netrc file is read when a request first asks for a credential, so that a
	// command that sends none (a local repository, an offline install) never fails on
	// a netrc file it does not need.
	netrcFile string // "": none
	netrcOnce sync.Once
	netrc     *netrc // nil: none, or not read yet
	netrcErr  error
}

// credSource is where a credential comes from.
type credSource int

const (
	fromNone    credSource = iota
	fromRepo               // the repository's own (Options.Credential)
	fromNetrc              // the netrc machine of the host
	fromDefault            // the netrc default, for no host in particular
	fromURL                // the user information of a registry's URL, for its token realm
)

// credential returns the credential for requests to host, host[:port] as in a URL,
// without the user information a URL may hold, and where it comes from. It fails where
// the netrc file it must read cannot be used (a *NetrcError).
func (c *credentials) credential(host string) (Credential, credSource, error) {
	if c == nil {
		return Credential{}, fromNone, nil
	}
	host = strings.ToLower(host)
	if !c.repo.IsZero() && c.hosts[host] {
		return c.repo, fromRepo, nil
	}
	if err := c.readNetrc(); err != nil || c.netrc == nil {
		return Credential{}, fromNone, err
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	cr, from := c.netrc.credential(strings.Trim(host, "[]"))
	return cr, from, nil
}

// readNetrc reads c's netrc file once; one that does not exist has no entries.
func (c *credentials) readNetrc() error {
	c.netrcOnce.Do(func() {
		if c.netrcFile == "" {
			return
		}
		nr, err := readNetrc(c.netrcFile)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			c.netrcErr = err
			return
		}
		c.netrc = nr
	})
	return c.netrcErr
}

// authorize adds to r, a request about to be sent, the credential for its host, and
// refuses one that would go in cleartext to a host that is not on this machine. The
// netrc default is not sent in cleartext at all.
func (c *credentials) authorize(r *http.Request) (*http.Request, error) {
	cr, from, err := c.credential(r.URL.Host)
	if err != nil {
		return nil, err
	}
	switch h := r.Header.Get("Authorization"); {
	case from == fromNone:
		return r, nil
	case h != "" && (from != fromRepo || h != userinfo(r.URL)):
		return r, nil // the caller's, or the URL's own before the netrc's
	case r.URL.Scheme != "https" && !c.cleartext && !loopback(r.URL.Hostname()):
		if from == fromDefault {
			return r, nil
		}
		return nil, &CleartextError{Host: r.URL.Host}
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", cr.header())
	return r, nil
}

// userinfo is the Authorization header net/http makes of u's user information, which the
// repository's credential replaces.
func userinfo(u *url.URL) string {
	if u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return Credential{Username: u.User.Username(), Password: p}.header()
}

// CleartextError refuses a request that would send credentials over plain http to a host
// that is not on this machine.
type CleartextError struct{ Host string }

func (e *CleartextError) Error() string {
	return "credentials for " + e.Host + " are not sent over plain http"
}

// loopback reports whether host, a name or an address, is this machine.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// authTransport adds credentials to each request, redirects included.
type authTransport struct {
	base  *http.Transport
	creds **credentials // the netConfig's, set after the client is made
}

func (t authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if *t.creds == nil {
		return t.base.RoundTrip(r)
	}
	r2, err := (*t.creds).authorize(r)
	if err != nil {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, err
	}
	return t.base.RoundTrip(r2)
}

// setCredentials makes n's requests authenticate with o's credentials: the repository's
// for the hosts of locs, netrc's for any (its file read by the first request that asks).
func (n *netConfig) setCredentials(o Options, locs []location) {
	c := &credentials{repo: o.Credential, hosts: make(map[string]bool), cleartext: o.CleartextCredentials, netrcFile: o.Netrc}
	for _, l := range locs {
		if u, err := url.Parse(l.t.url()); err == nil && u.Host != "" {
			c.hosts[strings.ToLower(u.Host)] = true
		}
	}
	if c.repo.IsZero() && c.netrcFile == "" {
		return
	}
	n.creds = c
}

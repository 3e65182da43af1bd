package oci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"pkg/internal/termtext"
)

// How a Client keeps tokens (distribution's docs/spec/auth/token.md): a token is used for
// its expires_in seconds from when it came, 60 if the server says less or nothing (the
// spec's floor), never past a 401, after which one is asked for again once. issued_at is
// not read: it is the server's clock.
const (
	minTokenLife     = 60 * time.Second
	tokenTimeout     = 30 * time.Second // a token request, from its start to its last byte
	maxTokenResponse = 1 << 20          // 1 MiB: a token server's answer
	maxRedirects     = 10               // of a token request, without Options.CheckRedirect: net/http's own limit
)

// Credentials returns what authenticates requests for the registry at host
// ("host[:port]") about to go to to: the token realm its challenge named, or the registry
// itself. The zero Secret is none (anonymous tokens); an error refuses the request, as
// credentials that must not go there.
type Credentials func(host string, to *url.URL) (Secret, error)

// Secret is a user and password, sent as HTTP basic to the token realm (or to a registry
// whose challenge is Basic), or a token, sent to the registry itself as its bearer token
// (an access token a registry takes directly), never to a realm.
type Secret struct{ User, Password, Token string }

func (s Secret) String() string { return "oci.Secret{redacted}" }

// basic reports whether s is a user and password.
func (s Secret) basic() bool { return s.Token == "" && (s.User != "" || s.Password != "") }

// Options are what a Client is made with.
type Options struct {
	// Transport sends the requests: the caller's proxies, TLS roots and timeouts. Nil is
	// http.DefaultTransport.
	Transport http.RoundTripper
	// CheckRedirect is the redirect policy of token requests and of the Client's own
	// requests (uploads); whatever it allows, a token request's redirect is checked as its
	// realm is (checkRealm), and never goes from https to http. Nil is net/http's.
	CheckRedirect func(req *http.Request, via []*http.Request) error
	Credentials   Credentials
	UserAgent     string
	// Again, if not nil, waits before a request of the Client's own (a push's) that may
	// pass sent again is: one whose answer, the registry's (a *RequestError) or its token
	// realm's (a *TokenError), err, was 429 Too Many Requests, 500, 502, 503 or 504 (Busy),
	// after its attempt-th answer. It returns nil to send it again, or the error that ends
	// the request. Nil sends none again.
	Again func(ctx context.Context, err error, attempt int) error
}

// Client authorizes the requests to one repository of a registry, as an
// http.RoundTripper: each is sent with the token cached for its scope, and a 401 with a
// challenge is answered (a token from the challenge's realm, or basic credentials where
// the registry asks for them) and the request sent once more. Requests to any other host
// (a blob redirected to a CDN) are sent as they are: the registry's credentials and tokens
// go to it and its token realm alone. Its own methods (upload.go) push.
type Client struct {
	ref   Ref
	base  http.RoundTripper
	auth  *http.Client // for token requests: no Authorization from here but the basic credentials
	http  *http.Client // for the Client's own requests, through the Client itself
	creds Credentials
	agent string
	again func(ctx context.Context, err error, attempt int) error
	now   func() time.Time

	mu     sync.Mutex
	tokens map[string]token // by scope
	basic  bool             // the registry answered with a Basic challenge

	asking sync.Mutex // held while a token is asked for: parallel downloads ask once
}

// secret returns the credentials for a request to to, if any.
func (c *Client) secret(to *url.URL) (Secret, error) {
	if c.creds == nil {
		return Secret{}, nil
	}
	return c.creds(c.ref.Host, to)
}

var _ http.RoundTripper = (*Client)(nil)

type token struct {
	value   string
	expires time.Time
}

// NewClient returns the client of the repository r names.
func NewClient(r Ref, o Options) *Client {
	base := o.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c := &Client{ref: r, base: base, creds: o.Credentials, agent: o.UserAgent, again: o.Again, now: time.Now, tokens: map[string]token{}}
	c.auth = &http.Client{Transport: base, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if _, err := c.checkRealm(req.Context(), req.URL.String()); err != nil {
			return err
		}
		switch {
		case via[0].URL.Scheme == "https" && req.URL.Scheme != "https":
			return &RealmError{Registry: r.Registry(), Realm: req.URL.Redacted(), Reason: "redirects from https to plain http"}
		case o.CheckRedirect != nil:
			return o.CheckRedirect(req, via)
		case len(via) >= maxRedirects:
			return fmt.Errorf("registry %s: token realm stopped after %d redirects", r.Registry(), maxRedirects)
		}
		return nil
	}}
	c.http = &http.Client{Transport: c, CheckRedirect: o.CheckRedirect}
	return c
}

// Ref returns the repository the client is for.
func (c *Client) Ref() Ref { return c.ref }

// ours reports whether u is on the registry: the host and the scheme the reference names.
func (c *Client) ours(u *url.URL) bool {
	return u.Host == c.ref.Host && u.Scheme == c.ref.HTTPScheme()
}

// scopeOf is the scope a request to the registry needs: pull to read the repository,
// pull and push to write it, none for the API root.
func (c *Client) scopeOf(req *http.Request) string {
	if !strings.HasPrefix(req.URL.Path, "/v2/"+c.ref.Name+"/") {
		return ""
	}
	if req.Method == http.MethodGet || req.Method == http.MethodHead {
		return "repository:" + c.ref.Name + ":pull"
	}
	return "repository:" + c.ref.Name + ":pull,push"
}

// RoundTrip sends req, authorized if it is the registry's.
func (c *Client) RoundTrip(req *http.Request) (*http.Response, error) {
	if !c.ours(req.URL) {
		return c.base.RoundTrip(req)
	}
	scope := c.scopeOf(req)
	r, err := c.authorized(req, scope)
	if err != nil {
		return nil, err
	}
	resp, err := c.base.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	ch, ok := pick(parseChallenges(resp.Header.Values("Www-Authenticate")))
	if !ok {
		return resp, nil
	}
	again, err := rewind(req)
	if err != nil {
		return resp, nil // a body that cannot be sent twice: the 401 stands
	}
	retry, err := c.answer(req.Context(), ch, scope, r.Header.Get("Authorization"))
	switch {
	case err != nil:
		drain(resp)
		return nil, err
	case !retry:
		return resp, nil
	}
	drain(resp)
	if r, err = c.authorized(again, scope); err != nil {
		return nil, err
	}
	return c.base.RoundTrip(r)
}

// authorized returns req with the token cached for scope, or the basic credentials once
// the registry asked for them, or else a token of the credentials'.
func (c *Client) authorized(req *http.Request, scope string) (*http.Request, error) {
	r := req.Clone(req.Context())
	if c.agent != "" {
		r.Header.Set("User-Agent", c.agent)
	}
	c.mu.Lock()
	basic := c.basic
	c.mu.Unlock()
	if t, ok := c.token(scope); ok {
		r.Header.Set("Authorization", "Bearer "+t)
		return r, nil
	}
	s, err := c.secret(r.URL)
	switch {
	case err != nil:
		return nil, err
	case s.Token != "":
		r.Header.Set("Authorization", "Bearer "+s.Token)
	case basic && s.basic():
		r.SetBasicAuth(s.User, s.Password)
	}
	return r, nil
}

// token returns the token cached for scope, if it has not expired.
func (c *Client) token(scope string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.tokens[scope]
	return t.value, ok && c.now().Before(t.expires)
}

// answer takes up challenge ch to a request needing scope, sent with the Authorization
// header sent: it asks the realm for a token, unless another request got one meanwhile,
// or notes that the registry takes basic credentials. retry says whether the request may
// now pass.
func (c *Client) answer(ctx context.Context, ch challenge, scope, sent string) (retry bool, err error) {
	s, err := c.secret(c.ref.base())
	switch {
	case err != nil || s.Token != "":
		return false, err // a token of the credentials' was refused: the 401 stands
	case ch.scheme == "basic":
		c.mu.Lock()
		c.basic = s.basic()
		c.mu.Unlock()
		return s.basic(), nil
	}
	c.asking.Lock()
	defer c.asking.Unlock()
	if t, ok := c.token(scope); ok && "Bearer "+t != sent {
		return true, nil
	}
	realm, err := c.checkRealm(ctx, ch.params["realm"])
	if err != nil {
		return false, err
	}
	t, err := c.fetchToken(ctx, realm, ch, scope)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	c.tokens[scope] = t
	c.mu.Unlock()
	return true, nil
}

// RealmError refuses the token realm a registry's challenge names, or a redirect of it.
type RealmError struct {
	Registry string // host/name
	Realm    string // the realm URL, printable
	Reason   string
}

func (e *RealmError) Error() string {
	return fmt.Sprintf("registry %s: token realm %s: %s", e.Registry, e.Realm, e.Reason)
}

// checkRealm refuses a realm that is not an absolute http(s) URL, one in plain http for a
// registry spoken to over https (the token, and the credentials sent for it, would travel
// in cleartext), and one on a loopback or link-local address (this machine's services, a
// cloud's metadata server) unless the registry is on such an address too.
func (c *Client) checkRealm(ctx context.Context, realm string) (*url.URL, error) {
	u, err := url.Parse(realm)
	refuse := func(reason string) (*url.URL, error) {
		return nil, &RealmError{Registry: c.ref.Registry(), Realm: termtext.Quote(realm), Reason: reason}
	}
	switch {
	case realm == "":
		return refuse("the challenge names none")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil:
		return refuse("not an absolute http(s) URL without user information")
	case c.ref.HTTPScheme() == "https" && u.Scheme != "https":
		return refuse("plain http, for a registry spoken to over https")
	}
	want, got := addrKind(ctx, c.ref.Host), addrKind(ctx, u.Host)
	if got != public && got != want {
		return refuse(fmt.Sprintf("on a %s address, which the registry is not", got))
	}
	return u, nil
}

// kind is what sort of address a host has, for checkRealm.
type kind string

const (
	public    kind = "public"
	loopback  kind = "loopback"
	linkLocal kind = "link-local"
)

// addrKind returns the kind of host[:port]: loopback (localhost, an unspecified address
// too, which reaches this machine) or link-local if its address or any address it
// resolves to is, else public (a name that does not resolve too: nothing is sent there).
func addrKind(ctx context.Context, hostport string) kind {
	if loopbackHost(hostport) {
		return loopback
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	var ips []net.IP
	if ip := net.ParseIP(host); ip != nil {
		ips = []net.IP{ip}
	} else if addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host); err == nil {
		for _, a := range addrs {
			ips = append(ips, a.IP)
		}
	}
	k := public
	for _, ip := range ips {
		switch {
		case ip.IsLoopback() || ip.IsUnspecified():
			return loopback
		case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
			k = linkLocal
		}
	}
	return k
}

// TokenError is a token realm's refusal to give a token, or an answer that holds none.
type TokenError struct {
	Registry   string // host/name
	Realm      string // the realm URL, without its query
	Status     string // the realm's, printable; "" for an answer that holds no token
	Code       int
	RetryAfter string // the answer's Retry-After header, as sent (not printable); may be ""
	Err        error  // why an answer was not read
}

func (e *TokenError) Error() string {
	if e.Status != "" {
		return fmt.Sprintf("registry %s: token from %s: %s", e.Registry, e.Realm, e.Status)
	}
	return fmt.Sprintf("registry %s: token from %s: %v", e.Registry, e.Realm, e.Err)
}

func (e *TokenError) Unwrap() error { return e.Err }

// Denied reports whether the realm refused the credentials, or their absence.
func (e *TokenError) Denied() bool {
	return e.Code == http.StatusUnauthorized || e.Code == http.StatusForbidden
}

// fetchToken asks realm for a token for ch's service and scope (scope, where ch names
// none), with the registry's basic credentials if there are any.
func (c *Client) fetchToken(ctx context.Context, realm *url.URL, ch challenge, scope string) (token, error) {
	u := *realm
	q := u.Query()
	if s := ch.params["service"]; s != "" {
		q.Set("service", s)
	}
	if s := ch.params["scope"]; s != "" {
		scope = s
	}
	for s := range strings.FieldsSeq(scope) {
		q.Add("scope", s)
	}
	u.RawQuery = q.Encode()
	where := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	fail := func(err error) (token, error) {
		return token{}, &TokenError{Registry: c.ref.Registry(), Realm: termtext.Quote(where), Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, tokenTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fail(err)
	}
	if c.agent != "" {
		req.Header.Set("User-Agent", c.agent)
	}
	s, err := c.secret(&u)
	if err != nil {
		return token{}, err
	}
	if s.basic() {
		req.SetBasicAuth(s.User, s.Password)
	}
	start := c.now()
	resp, err := c.auth.Do(req)
	if err != nil {
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err
		}
		return fail(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return token{}, &TokenError{Registry: c.ref.Registry(), Realm: termtext.Quote(where), Status: termtext.Printable(resp.Status), Code: resp.StatusCode,
			RetryAfter: resp.Header.Get("Retry-After")}
	}
	var ans struct {
		Token       string `json:"token"`
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxTokenResponse)).Decode(&ans); err != nil {
		return fail(fmt.Errorf("answer is not a token: %w", err))
	}
	t := token{value: ans.Token, expires: start.Add(max(time.Duration(ans.ExpiresIn)*time.Second, minTokenLife))}
	if t.value == "" {
		t.value = ans.AccessToken
	}
	if t.value == "" || strings.ContainsAny(t.value, "\r\n") {
		return fail(errors.New("answer holds no token"))
	}
	return t, nil
}

// rewind returns req to be sent again: its body, if any, from the start.
func rewind(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.Body == nil || req.Body == http.NoBody {
		return r, nil
	}
	if req.GetBody == nil {
		return nil, errors.New("request body cannot be sent again")
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	r.Body = body
	return r, nil
}

// drain reads a little of a response body that is not used, so that its connection may
// serve the next request, and closes it.
func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

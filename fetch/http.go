package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"pkg/internal/oci"
	"pkg/internal/termtext"
	"pkg/repo"
	"pkg/trust"
)

// userAgent is sent with every HTTP request.
var userAgent = "pkg/0.1 (" + runtime.GOOS + "/" + runtime.GOARCH + "; " + runtime.Version() + ")"

// How pkg talks HTTP. A static server answers in milliseconds: one silent for answerTimeout
// about an index is hung (the kernel accepts connections for a hung process) or overloaded,
// and is asked again after a backoff rather than waited for; five silent attempts take
// about 80s, each announced (Options.Retrying). An archive may take idleTimeout to answer,
// as from a proxy that fetches a large one upstream before it sends its headers, and a body
// may pause as long, while a proxy or a busy disk catches up; resuming keeps what arrived.
// A body must also average minRate over each rateWindow, twice idleTimeout so that a pause
// it allows costs only a body slower than 2 KiB/s: without a floor, a server sending a byte
// a minute would take days over an archive. An index and its signature must come within
// indexTimeout in all, retries included. A body that comes slower than minRate is not asked
// of the same server again: the next mirror is, or the download fails, so that a trickling
// server holds a command for one rateWindow, not one per attempt. A whole archive download,
// every mirror, attempt and backoff included, must end within archiveSlack + size/minRate
// (Source.deadline): 5 min for a small archive, 5 min + 17 min per MiB, so that a server
// that cuts each body after a little, each resume forgiven by the bytes it brought, cannot
// hold a command for ever.
const (
	answerTimeout = 15 * time.Second // from starting a request (connecting included) to its response's headers
	idleTimeout   = 60 * time.Second // between two reads of a body that return data
	minRate       = 1 << 10          // 1 KiB/s: bytes per second of a body, averaged over rateWindow
	rateWindow    = 2 * idleTimeout
	archiveSlack  = 5 * time.Minute // of an archive's deadline, for answers, retries and backoffs
	indexTimeout  = 5 * time.Minute // reading an index and its signature, every attempt included
	maxTries      = 5               // attempts at a request, and at resuming without progress
	firstBackoff  = 500 * time.Millisecond
	maxBackoff    = 15 * time.Second
	maxRetryAfter = 60 * time.Second // longest wait a Retry-After may ask for; a longer one fails the request
)

// httpLocation is a repository at an http(s) URL.
type httpLocation struct {
	base *url.URL // the repository's directory, with a trailing slash
	*netConfig
}

var _ transport = (*httpLocation)(nil)

// newHTTPLocation returns the repository at u, or in the directory of u if it names
// index.json.
func newHTTPLocation(u *url.URL, n *netConfig) (transport, error) {
	u.Path = strings.TrimSuffix(u.Path, "index.json")
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return &httpLocation{u, n}, nil
}

func (h *httpLocation) url() string {
	return termtext.WithoutUser(h.base)
}

func (h *httpLocation) indexLocation() string { return h.archiveURL("index.json") }

func (h *httpLocation) archiveURL(rel string) string {
	return termtext.WithoutUser(h.base.JoinPath(rel))
}

func (h *httpLocation) remote() bool { return true }

func (h *httpLocation) checkRepository() error { return nil }

// readIndex asks only for an index newer than saved's, by its ETag and Last-Modified.
func (h *httpLocation) readIndex(ctx context.Context, saved *savedIndex, tries int) (*savedIndex, string, error) {
	where := h.indexLocation()
	fresh := &savedIndex{Location: where}
	hd := http.Header{}
	if saved != nil && saved.Location == where {
		if saved.ETag != "" {
			hd.Set("If-None-Match", saved.ETag)
		}
		if saved.LastModified != "" {
			hd.Set("If-Modified-Since", saved.LastModified)
		}
	}
	u := h.base.JoinPath("index.json")
	notModified := false
	err := h.retry(ctx, tries, func() error {
		var err error
		notModified, err = h.getIndex(ctx, u, hd, fresh)
		return err
	})
	switch {
	case notModified && saved == nil:
		return nil, where, fmt.Errorf("GET %s: %s to a request without validators", termtext.WithoutUser(u), http.StatusText(http.StatusNotModified))
	case notModified:
		kept := *saved
		return &kept, termtext.WithoutUser(u), nil
	}
	return fresh, termtext.WithoutUser(u), err
}

// getIndex requests the index once and reads it into fresh, unless the server answers
// that it has not changed.
func (h *httpLocation) getIndex(ctx context.Context, u *url.URL, hd http.Header, fresh *savedIndex) (notModified bool, err error) {
	resp, err := h.send(ctx, u, hd, h.answer)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusNotModified:
		return true, nil
	case http.StatusOK:
	case http.StatusNotFound, http.StatusGone:
		why := "index.json: " + resp.Status
		if se := newStatusError(u, resp); se.to != "" {
			why = se.Error()
		}
		return false, &noRepository{termtext.WithoutUser(h.base), why}
	default:
		return false, newStatusError(u, resp)
	}
	if err := encoded(u, resp.Header, "an index"); err != nil {
		return false, err
	}
	fresh.ETag, fresh.LastModified = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if resp.ContentLength > repo.MaxIndexSize {
		return false, &TooLargeError{URL: termtext.WithoutUser(u), Name: "index.json", Limit: repo.MaxIndexSize}
	}
	fresh.data, err = readLimited(resp.Body, repo.MaxIndexSize, termtext.WithoutUser(u), "index.json")
	return false, err
}

func (h *httpLocation) readSignature(ctx context.Context, tries int) ([]byte, error) {
	u := h.base.JoinPath(repo.SignatureName)
	var sig []byte
	err := h.retry(ctx, tries, func() error {
		var err error
		sig, err = h.getSignature(ctx, u)
		return err
	})
	return sig, err
}

// getSignature requests the signature once. A repository without one answers 404 or
// 410, or 403 from object stores that hide which objects exist (S3 without list rights).
func (h *httpLocation) getSignature(ctx context.Context, u *url.URL) ([]byte, error) {
	resp, err := h.send(ctx, u, nil, h.answer)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound, http.StatusGone, http.StatusForbidden:
		return nil, nil
	default:
		return nil, newStatusError(u, resp)
	}
	return readLimited(resp.Body, trust.MaxSignatureSize, termtext.WithoutUser(u), repo.SignatureName)
}

// open downloads the archive, resuming a body cut short (download).
func (h *httpLocation) open(ctx context.Context, rel, _ string, size, off int64, restart bool, tries int) (body, error) {
	u := h.base.JoinPath(rel)
	if r, ok := strings.CutPrefix(u.Path, h.base.Path); !ok || !filepath.IsLocal(r) {
		return nil, &outsideError{rel, h.url()}
	}
	return h.openDownload(ctx, u, size, off, restart, tries)
}

// idleError reports a connection that brought nothing for as long as pkg waits.
type idleError struct {
	what string // "response" before the headers, "data" in a body
	wait time.Duration
}

func (e *idleError) Error() string { return fmt.Sprintf("no %s for %gs", e.what, e.wait.Seconds()) }

// slowError reports a body that came slower than the source's minimum rate.
type slowError struct {
	n    int64         // bytes that came in d
	d    time.Duration // at least the source's rate window
	rate int64         // the minimum, in bytes per second
}

func (e *slowError) Error() string {
	return fmt.Sprintf("%.0f bytes/s over %.1fs, under the minimum of %d bytes/s", float64(e.n)/e.d.Seconds(), e.d.Seconds(), e.rate)
}

// timeoutError reports an index and its signature that did not all come in time; it is
// ErrUnreachable.
type timeoutError struct {
	where string
	wait  time.Duration
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("read %s: index and signature not read within %v", e.where, e.wait)
}

func (e *timeoutError) Is(target error) bool { return target == ErrUnreachable }

// giveUpError is the last error of a request that failed on every attempt in a way that
// may pass later; it is ErrUnreachable.
type giveUpError struct {
	err   error
	tries int
}

func (e *giveUpError) Error() string {
	if e.tries == 1 {
		return e.err.Error()
	}
	return fmt.Sprintf("%v (gave up after %d attempts)", e.err, e.tries)
}

func (e *giveUpError) Unwrap() error { return e.err }

func (e *giveUpError) Is(target error) bool { return target == ErrUnreachable }

// netConfig is how a Source talks to servers, shared by its locations: the client, how
// long it waits and how often it tries.
type netConfig struct {
	client   func() *http.Client // made at the first request: a directory or an offline command sends none
	tries    int                 // attempts at a request
	backoff  time.Duration       // wait after the first failure, doubled after each next one
	answer   time.Duration       // longest wait for the headers of an index's response
	idle     time.Duration       // longest wait for a body's next bytes
	minRate  int64               // bytes per second a body must average over each window
	window   time.Duration
	slack    time.Duration // of an archive's deadline, beyond its size at minRate
	indexMax time.Duration // longest wait for an index and its signature, retries included
	retrying func(err error, wait time.Duration, attempt, max int)
	creds    *credentials // nil: none but the user information of URLs
}

func newNetConfig(retrying func(err error, wait time.Duration, attempt, max int)) *netConfig {
	n := &netConfig{tries: maxTries, backoff: firstBackoff, answer: answerTimeout, idle: idleTimeout,
		minRate: minRate, window: rateWindow, slack: archiveSlack, indexMax: indexTimeout, retrying: retrying}
	n.client = sync.OnceValue(func() *http.Client { return newClient(&n.creds) })
	return n
}

// newClient returns a Source's client, which authenticates each request with *creds
// (authTransport); send, not the transport, bounds the wait for an answer.
func newClient(creds **credentials) *http.Client {
	return &http.Client{Transport: authTransport{newTransport(), creds}, CheckRedirect: checkRedirect}
}

// newTransport returns the transport of a Source's requests.
func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 16
	// pkg counts, hashes and resumes the bytes as published: no transparent gzip.
	t.DisableCompression = true
	return t
}

// redirectError refuses a redirect from from to to: to a scheme other than http and https,
// or, cleartext, from https to http.
type redirectError struct {
	from, to  string
	cleartext bool
}

func (e *redirectError) Error() string {
	if e.cleartext {
		return fmt.Sprintf("%s redirects from https to %s, which pkg refuses: the repository would be read in cleartext", e.from, e.to)
	}
	return fmt.Sprintf("%s redirects to %s, which pkg does not follow (only http and https)", e.from, e.to)
}

// checkRedirect follows at most 10 redirects, to http(s) only, and none from https to
// http: an unsigned repository read over TLS would be read in cleartext, and nothing would
// vouch for its archives.
func checkRedirect(req *http.Request, via []*http.Request) error {
	from := termtext.WithoutUser(via[len(via)-1].URL)
	switch {
	case len(via) >= 10:
		return fmt.Errorf("stopped after 10 redirects, the last from %s to %s", from, termtext.WithoutUser(req.URL))
	case req.URL.Scheme != "http" && req.URL.Scheme != "https":
		return &redirectError{from: from, to: termtext.WithoutUser(req.URL)}
	case via[0].URL.Scheme == "https" && req.URL.Scheme != "https":
		return &redirectError{from: from, to: termtext.WithoutUser(req.URL), cleartext: true}
	}
	return nil
}

// encoded refuses a response whose body is not the bytes as published (a server or CDN
// compressing on the way), naming the header.
func encoded(u *url.URL, h http.Header, what string) error {
	if ce := h.Get("Content-Encoding"); ce != "" && ce != "identity" {
		return &encodingError{termtext.WithoutUser(u), termtext.Printable(ce), what}
	}
	return nil
}

// encodingError refuses a body a server or CDN encoded on the way.
type encodingError struct {
	where    string // the URL
	encoding string // the Content-Encoding header, printable
	what     string // what the body is ("an index", "an archive")
}

func (e *encodingError) Error() string {
	return fmt.Sprintf("GET %s: served with Content-Encoding: %s, which pkg does not undo for %s: serve the file as it is (on an object store, remove the object's Content-Encoding)", e.where, e.encoding, e.what)
}

// cutError is a body cut short, after off bytes, by err.
type cutError struct {
	where string // the URL
	off   int64
	err   error
}

func (e *cutError) Error() string {
	return fmt.Sprintf("GET %s: cut off after %d bytes: %v", e.where, e.off, e.err)
}

func (e *cutError) Unwrap() error { return e.err }

// statusError is an HTTP response pkg cannot use.
type statusError struct {
	where  string
	to     string // where a redirect led, if anywhere
	status string
	code   int
	after  time.Duration // the wait its Retry-After asks for before a retry; 0 for none
}

// newStatusError is the refusal resp of a GET of u, naming where a redirect led without
// its query, which for a CDN's signed URL (S3's X-Amz-Signature) is a credential.
func newStatusError(u *url.URL, resp *http.Response) *statusError {
	e := &statusError{where: termtext.WithoutUser(u), status: resp.Status, code: resp.StatusCode,
		after: retryAfter(resp.Header.Get("Retry-After"), time.Now())}
	if resp.Request != nil && resp.Request.URL.String() != u.String() {
		to := *resp.Request.URL
		to.RawQuery, to.ForceQuery, to.Fragment, to.RawFragment = "", false, "", ""
		e.to = termtext.WithoutUser(&to)
	}
	return e
}

func (e *statusError) Error() string {
	if e.to != "" {
		return "GET " + e.where + " (redirected to " + e.to + "): " + e.status
	}
	return "GET " + e.where + ": " + e.status
}

// Is makes a 401 or 403 ErrDenied, a 404 or 410 ErrGone.
func (e *statusError) Is(target error) bool {
	switch target {
	case ErrDenied:
		return e.code == http.StatusUnauthorized || e.code == http.StatusForbidden
	case ErrGone:
		return e.code == http.StatusNotFound || e.code == http.StatusGone
	}
	return false
}

// retryAfter is the wait a Retry-After header asks for (RFC 9110, section 10.2.3), in
// seconds or until an HTTP date, from now; 0 for none, one in the past or one unreadable.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseUint(v, 10, 32); err == nil {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// laterError is a response that asks for a retry only after longer than maxRetryAfter; it
// is ErrUnreachable.
type laterError struct {
	err   error         // the response's
	after time.Duration // the wait it asks for
	at    time.Time     // when the server asks to be asked again
}

func (e *laterError) Error() string {
	return fmt.Sprintf("%v: the server asks to be asked again in %s, at %s, longer than pkg waits (%s)",
		e.err, e.after.Round(time.Second), e.at.Format(time.RFC1123), maxRetryAfter)
}

func (e *laterError) Unwrap() error { return e.err }

func (e *laterError) Is(target error) bool { return target == ErrUnreachable }

// ErrGone is what an archive the repository does not have is (404, 410, or no such file),
// although its index or a lockfile names it.
var ErrGone = errors.New("fetch: archive not in the repository")

// gone is a missing local archive's error, which is ErrGone.
type gone struct{ error }

func (g gone) Is(target error) bool { return target == ErrGone }
func (g gone) Unwrap() error        { return g.error }

// ErrDenied is what a request the server refused to authorize (401, 403) is.
var ErrDenied = errors.New("fetch: access denied")

// unknownHost reports whether err says that DNS knows no address for the host asked for
// (a mistyped host, or one known only on another network, such as a VPN's).
func unknownHost(err error) bool {
	var dns *net.DNSError
	return errors.As(err, &dns) && dns.IsNotFound
}

// retryable reports whether a failed request or body read may succeed if tried again:
// a network error but a host DNS does not know, a connection closed early, an idle
// connection, a 5xx or 429 status, a registry's token realm refusing for now (oci.Busy).
func retryable(err error) bool {
	var op *net.OpError
	var ne net.Error
	var se *statusError
	var te *oci.TokenError
	switch {
	case errors.As(err, &se):
		return se.code >= 500 || se.code == http.StatusTooManyRequests
	case errors.As(err, &te):
		return oci.Busy(te)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	case unknownHost(err):
		return false // a mistyped host, or one of another network: asking again cannot find it
	}
	var ie *idleError
	var slow *slowError
	return errors.As(err, &op) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.As(err, &ie) || errors.As(err, &slow) || errors.As(err, &ne) && ne.Timeout()
}

// backoffFor is the wait before attempt n+1, after n failures: it doubles from the source's
// first backoff up to maxBackoff.
func (s *netConfig) backoffFor(n int) time.Duration {
	d := s.backoff << (n - 1)
	if d > maxBackoff || d <= 0 {
		d = maxBackoff
	}
	return d
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// send makes one GET request. It fails with an *idleError when the response's headers do
// not arrive within answer, and so does its body when no byte arrives for the source's idle
// timeout; the body fails with a *slowError once it comes slower than the source's minimum
// rate. Its errors name the URL.
func (s *netConfig) send(ctx context.Context, u *url.URL, h http.Header, answer time.Duration) (*http.Response, error) {
	rctx, cancel := context.WithCancel(ctx)
	body := &idleBody{idle: s.idle, cancel: cancel, rate: s.minRate, window: s.window}
	body.timer = time.AfterFunc(answer, body.expire)
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u.String(), nil)
	if err != nil {
		body.Close()
		return nil, err
	}
	maps.Copy(req.Header, h)
	req.Header.Set("User-Agent", userAgent)
	resp, err := s.client().Do(req)
	if err != nil {
		body.Close()
		var ue *url.Error
		switch {
		case body.expired.Load():
			err = &idleError{"response", answer}
		case errors.As(err, &ue):
			err = ue.Err // named below, without quoting the URL again
		}
		return nil, fmt.Errorf("GET %s: %w", termtext.WithoutUser(u), err)
	}
	resp.Status = termtext.Printable(resp.Status) // the server's words, printed in errors
	body.timer.Reset(s.idle)
	body.since = time.Now()
	body.rc = resp.Body
	resp.Body = body
	if resp.StatusCode >= 500 {
		resp.Body.Close()
		return nil, newStatusError(u, resp)
	}
	return resp, nil
}

// retry calls try, again after a backoff while it fails in a way that may pass, at most
// tries times.
func (s *netConfig) retry(ctx context.Context, tries int, try func() error) error {
	for n := 1; ; n++ {
		err := try()
		switch {
		case err == nil || !retryable(err) || ctx.Err() != nil:
			return err
		case n >= tries:
			return &giveUpError{err, n}
		}
		if err := s.pause(ctx, err, n); err != nil {
			return err
		}
	}
}

// pause announces attempt n+1, after n failed with err, and waits before it: the backoff,
// or longer where the response's Retry-After asks, unless it asks for longer than
// maxRetryAfter.
func (s *netConfig) pause(ctx context.Context, err error, n int) error {
	after := askedWait(err)
	if after > maxRetryAfter {
		return &laterError{err, after, time.Now().Add(after)}
	}
	d := max(s.backoffFor(n), after)
	if s.retrying != nil {
		s.retrying(err, d, n+1, s.tries)
	}
	return sleep(ctx, d)
}

// askedWait is the wait the answer that failed err asks for before a retry (its
// Retry-After); 0 for none.
func askedWait(err error) time.Duration {
	var se *statusError
	var re *oci.RequestError
	var te *oci.TokenError
	switch {
	case errors.As(err, &se):
		return se.after
	case errors.As(err, &re):
		return retryAfter(re.RetryAfter, time.Now())
	case errors.As(err, &te):
		return retryAfter(te.RetryAfter, time.Now())
	}
	return 0
}

// idleBody is a response body whose request is cancelled when a read waits too long, and
// which fails once it has come slower than rate over a window. A silence is the timer's to
// find; a trickle is found by the first read after each window.
type idleBody struct {
	rc      io.ReadCloser
	idle    time.Duration
	timer   *time.Timer
	cancel  context.CancelFunc
	expired atomic.Bool

	rate   int64         // bytes per second the body must average over each window
	window time.Duration // how long each window lasts, at least
	since  time.Time     // the start of the current window
	n      int64         // bytes read in it
	slow   error         // a *slowError, sticky
}

func (b *idleBody) expire() {
	b.expired.Store(true)
	b.cancel()
}

func (b *idleBody) Read(p []byte) (int, error) {
	if b.slow != nil {
		return 0, b.slow
	}
	n, err := b.rc.Read(p)
	if n > 0 {
		b.timer.Reset(b.idle)
	}
	if err != nil && err != io.EOF && b.expired.Load() {
		err = &idleError{"data", b.idle}
	}
	if err == nil {
		err = b.checkRate(n)
	}
	return n, err
}

// checkRate counts n bytes read and, once the window has passed, fails if the body came
// slower than its rate in it, or else starts the next window.
func (b *idleBody) checkRate(n int) error {
	b.n += int64(n)
	d := time.Since(b.since)
	switch {
	case d < b.window:
		return nil
	case float64(b.n) < float64(b.rate)*d.Seconds():
		b.slow = &slowError{b.n, d, b.rate}
		b.cancel()
		return b.slow
	}
	b.since, b.n = time.Now(), 0
	return nil
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	b.cancel()
	if b.rc == nil {
		return nil
	}
	return b.rc.Close()
}

// download is the body of an archive over HTTP that survives dropped connections: it
// asks for the rest with a Range request guarded by If-Range, and when the server sends
// the whole archive instead, skips what it already returned. A body that comes slower
// than the source's minimum rate is not asked for again.
type download struct {
	s         *netConfig
	tries     int // attempts at a request, and at resuming without progress
	ctx       context.Context
	u         *url.URL
	size      int64 // declared: a body that ends before it was cut short
	body      io.ReadCloser
	off       int64  // position of the next byte returned
	begin     int64  // of the first byte returned
	skip      int64  // bytes of body to drop, returned from an earlier one
	restart   bool   // until a body is accepted: the bytes before off are the caller's to drop
	validator string // strong ETag or Last-Modified of the first response, for If-Range
	fails     int    // failed attempts since bytes last arrived
	last      error  // why the last attempt failed
	done      bool   // the server has nothing past off
	noRange   bool   // the server got a Range wrong: ask for all of it, and skip
	err       error
}

var _ body = (*download)(nil)

// openDownload requests u from byte off on, the caller holding the bytes before, at most
// tries times, and returns its body once the server has answered. With restart, a server
// that sends the whole archive makes the body start at 0 (start), the caller dropping
// what it held; without, those bytes are skipped.
func (s *netConfig) openDownload(ctx context.Context, u *url.URL, size, off int64, restart bool, tries int) (*download, error) {
	d := &download{s: s, tries: tries, ctx: ctx, u: u, size: size, off: off, restart: restart, done: off > 0 && off >= size}
	for d.body == nil && !d.done {
		if d.fails >= tries {
			return nil, &giveUpError{d.last, d.fails}
		}
		if err := d.connect(); err != nil {
			return nil, err
		}
	}
	d.begin = d.off
	return d, nil
}

func (d *download) start() int64 { return d.begin }

func (d *download) from() string { return termtext.WithoutUser(d.u) }

func (d *download) Read(p []byte) (int, error) {
	for d.err == nil {
		if d.done {
			return 0, io.EOF
		}
		if d.body == nil {
			d.err = d.connect()
			continue
		}
		n, err := d.body.Read(p)
		n = d.drop(p, n)
		d.off += int64(n)
		if n > 0 {
			d.fails = 0
		}
		switch {
		case err == nil:
			if n > 0 {
				return n, nil
			}
		case (err == io.EOF || err == io.ErrUnexpectedEOF) && d.off >= d.size:
			// All the index declares has come: whether the server then ended cleanly or
			// broke off short of a Content-Length larger than the archive, the archive is
			// checked as it is.
			return n, io.EOF
		case d.ctx.Err() != nil:
			return n, err
		default: // cut short: resume on the next call, unless the server trickles
			d.body.Close()
			d.body = nil
			d.last = &cutError{termtext.WithoutUser(d.u), d.off, err}
			d.fails++
			if se := (*slowError)(nil); errors.As(err, &se) {
				d.err = &giveUpError{d.last, 1}
			}
			if n > 0 {
				return n, nil
			}
		}
	}
	return 0, d.err
}

// drop removes from the n bytes read into p those to skip, and returns how many remain.
func (d *download) drop(p []byte, n int) int {
	if d.skip == 0 {
		return n
	}
	k := int(min(d.skip, int64(n)))
	d.skip -= int64(k)
	return copy(p, p[k:n])
}

func (d *download) Close() error {
	if d.body != nil {
		return d.body.Close()
	}
	return nil
}

// connect waits after a failure, then asks for the bytes from off on. A failure that may
// pass is counted and leaves body nil, for the caller to try again.
func (d *download) connect() error {
	if d.fails >= d.tries {
		return &giveUpError{d.last, d.fails}
	}
	if d.fails > 0 {
		if err := d.s.pause(d.ctx, d.last, d.fails); err != nil {
			return err
		}
	}
	resp, err := d.s.send(d.ctx, d.u, d.header(), d.s.idle)
	if err == nil {
		err = d.accept(resp)
	}
	if err != nil {
		if !retryable(err) || d.ctx.Err() != nil {
			return err
		}
		d.fails++
		d.last = err
	}
	return nil
}

func (d *download) header() http.Header {
	h := http.Header{}
	if d.off > 0 && !d.noRange {
		h.Set("Range", byteRange(d.off, d.size))
		if d.validator != "" {
			h.Set("If-Range", d.validator)
		}
	}
	return h
}

// byteRange is the Range header asking for the bytes of an archive of size bytes from off
// on: closed where the size is known, as some servers answer an open-ended range with 416.
func byteRange(off, size int64) string {
	r := "bytes=" + strconv.FormatInt(off, 10) + "-"
	if size > off {
		r += strconv.FormatInt(size-1, 10)
	}
	return r
}

// accept takes the response to a request from off on.
func (d *download) accept(resp *http.Response) error {
	switch {
	case resp.StatusCode == http.StatusOK && d.off > 0 && resp.ContentLength == d.off:
		d.done = true // a server that ignores ranges says the archive is that short
		resp.Body.Close()
		return nil
	case resp.StatusCode == http.StatusOK:
		// The server ignored the range, or the archive changed: start over.
		d.validator = validator(resp.Header)
		if d.restart {
			d.off = 0
		} else {
			d.skip = d.off
		}
	case resp.StatusCode == http.StatusPartialContent && rangeStart(resp.Header) == d.off:
		// Another object than the one the index names, as a mirror or a new process may
		// find, which If-Range cannot tell without the first response's validator.
		if total := rangeTotal(resp.Header); total >= 0 && total != d.size {
			resp.Body.Close()
			return mismatch(fmt.Sprintf("GET %s: %s of an archive of %d bytes, index declares %d", termtext.WithoutUser(d.u), resp.Status, total, d.size))
		}
	case resp.StatusCode == http.StatusPartialContent && !d.noRange:
		// Bytes from elsewhere than asked (or a range not asked for): ask for the whole
		// archive, once, and skip what arrived before.
		resp.Body.Close()
		d.noRange = true
		d.fails++
		d.last = fmt.Errorf("GET %s: %s starting at byte %d, asked for %d", termtext.WithoutUser(d.u), resp.Status, rangeStart(resp.Header), d.off)
		return nil
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && d.off > 0:
		d.done = true // nothing past off: the archive is shorter than declared
		resp.Body.Close()
		return nil
	default:
		resp.Body.Close()
		return newStatusError(d.u, resp)
	}
	if err := encoded(d.u, resp.Header, "an archive"); err != nil {
		resp.Body.Close()
		return err
	}
	d.body = resp.Body
	d.restart = false
	return nil
}

// validator returns what If-Range may name: a strong ETag, else the Last-Modified date.
func validator(h http.Header) string {
	if etag := h.Get("ETag"); etag != "" && !strings.HasPrefix(etag, "W/") {
		return etag
	}
	return h.Get("Last-Modified")
}

// rangeTotal returns the complete length of a Content-Range, or -1 where it is not given.
func rangeTotal(h http.Header) int64 {
	_, total, ok := strings.Cut(h.Get("Content-Range"), "/")
	if !ok {
		return -1
	}
	n, err := strconv.ParseInt(total, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// rangeStart returns the first byte position of a Content-Range, or -1.
func rangeStart(h http.Header) int64 {
	v, ok := strings.CutPrefix(h.Get("Content-Range"), "bytes ")
	if !ok {
		return -1
	}
	first, _, _ := strings.Cut(v, "-")
	n, err := strconv.ParseInt(first, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

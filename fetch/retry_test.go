package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pkg/internal/oci"
	"pkg/pkgtest/testregistry"
)

// TestRetry429 answers 429 Too Many Requests twice, then the archive (and the index): each
// 429 is retried and announced as any failure that may pass, a Retry-After of 0 seconds or
// of a date gone by leaving the backoff as it is.
func TestRetry429(t *testing.T) {
	archive, p := testArchive(t)
	index := writeIndex(t, p)
	for _, after := range []string{"", "0", time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)} {
		var mu sync.Mutex
		asked := map[string]int{}
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			mu.Lock()
			asked[r.URL.Path]++
			n := asked[r.URL.Path]
			mu.Unlock()
			switch {
			case r.URL.Path == "/index.json.sig":
				http.NotFound(w, r)
				return
			case n < 3:
				w.Header().Set("Retry-After", after)
				http.Error(w, "slow down", http.StatusTooManyRequests)
				return
			case r.URL.Path == "/index.json":
				w.Write(index)
				return
			}
			serveArchive(w, r, archive)
		})
		s := quick(t, srv.URL)
		var waits []time.Duration
		s.retrying = func(err error, wait time.Duration, attempt, max int) {
			if se := (*statusError)(nil); !errors.As(err, &se) || se.code != http.StatusTooManyRequests || !strings.Contains(err.Error(), srv.URL) {
				t.Errorf("Retry-After %q: retry announced for %v, want the 429 naming the URL", after, err)
			}
			waits = append(waits, wait)
		}
		c := openCache(t)
		if _, err := c.indexOnly(t.Context(), s); err != nil {
			t.Fatalf("Retry-After %q: index: %v", after, err)
		}
		if err := fetchOne(c, s, p); err != nil {
			t.Fatalf("Retry-After %q: archive: %v", after, err)
		}
		checkEntry(t, c, p, testFiles())
		if n := len(srv.requests()); n != 7 {
			t.Errorf("Retry-After %q: %d requests, want 7 (3 of the index, 1 of its signature, 3 of the archive)", after, n)
		}
		want := []time.Duration{s.backoffFor(1), s.backoffFor(2), s.backoffFor(1), s.backoffFor(2)}
		if len(waits) != len(want) || waits[0] != want[0] || waits[1] != want[1] || waits[2] != want[2] || waits[3] != want[3] {
			t.Errorf("Retry-After %q: waits %v, want the backoffs %v", after, waits, want)
		}
	}
}

// TestRetryAfter answers 429 asking for a wait longer than the backoff: the retry waits
// that long, and the caller's cancellation (Ctrl-C) stops the wait. A wait longer than
// maxRetryAfter fails the request at once, naming the URL, as ErrUnreachable.
func TestRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		after string
		wait  time.Duration // announced; 0 for a request that fails at once
	}{
		{"7", 7 * time.Second},
		{"60", 60 * time.Second},
		{"61", 0},
		{"3600", 0},
		{time.Now().Add(2 * time.Hour).UTC().Format(http.TimeFormat), 0},
	} {
		for _, archive := range []bool{false, true} {
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				w.Header().Set("Retry-After", tt.after)
				http.Error(w, "slow down", http.StatusTooManyRequests)
			})
			s := quick(t, srv.URL)
			ctx, cancel := context.WithCancel(t.Context())
			var waits []time.Duration
			s.retrying = func(err error, wait time.Duration, attempt, max int) {
				waits = append(waits, wait)
				cancel() // Ctrl-C during the wait
			}
			var err error
			if archive {
				_, p := testArchive(t)
				_, err = openCache(t).Fetch(ctx, s, p, nil)
			} else {
				_, err = openCache(t).indexOnly(ctx, s)
			}
			cancel()
			if n := len(srv.requests()); n != 1 {
				t.Errorf("Retry-After %s, archive %v: %d requests, want 1", tt.after, archive, n)
			}
			le := (*laterError)(nil)
			switch {
			case tt.wait != 0 && (len(waits) != 1 || waits[0] != tt.wait || !errors.Is(err, context.Canceled)):
				t.Errorf("Retry-After %s, archive %v: waits %v, error %v; want a wait of %v cut short by the cancellation", tt.after, archive, waits, err, tt.wait)
			case tt.wait == 0 && (len(waits) != 0 || !errors.As(err, &le) || !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), srv.URL) || le.after <= maxRetryAfter):
				t.Errorf("Retry-After %s, archive %v: waits %v, error %v; want none, and ErrUnreachable naming the URL and when to ask again", tt.after, archive, waits, err)
			}
		}
	}
}

// TestRetryAfterHeader reads the waits a Retry-After header asks for.
func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		v    string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"120", 2 * time.Minute},
		{"-5", 0},
		{"1.5", 0},
		{"soon", 0},
		{"Sun, 06 Dec 2026 12:00:30 GMT", 30 * time.Second},
		{"Sunday, 06-Dec-26 12:01:00 GMT", time.Minute},
		{"Sun, 06 Dec 2026 11:00:00 GMT", 0},
	} {
		if got := retryAfter(tt.v, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

// dnsTransport fails every request as a resolver would with err.
type dnsTransport struct {
	err   *net.DNSError
	tries int
}

func (d *dnsTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	d.tries++
	e := *d.err
	e.Name = req.URL.Hostname()
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &e}
}

// TestUnknownHost reads from a host DNS does not know: the request fails at once naming the
// URL and the host, while a temporary DNS failure is retried.
func TestUnknownHost(t *testing.T) {
	for _, tt := range []struct {
		name  string
		err   net.DNSError
		tries int
	}{
		{"not found", net.DNSError{Err: "no such host", IsNotFound: true}, 1},
		{"temporary", net.DNSError{Err: "server misbehaving", IsTemporary: true}, maxTries},
		{"timeout", net.DNSError{Err: "i/o timeout", IsTimeout: true}, maxTries},
	} {
		s := quick(t, "https://repo.exmaple.org/pkgs/")
		tr := &dnsTransport{err: &tt.err}
		s.client = func() *http.Client { return &http.Client{Transport: tr} }
		_, err := openCache(t).indexOnly(t.Context(), s)
		dns := (*net.DNSError)(nil)
		if !errors.As(err, &dns) || dns.Name != "repo.exmaple.org" || !strings.Contains(err.Error(), "https://repo.exmaple.org/pkgs/index.json") {
			t.Errorf("%s: error %v, want the DNS error naming the URL and the host", tt.name, err)
		}
		if tr.tries != tt.tries {
			t.Errorf("%s: %d attempts, want %d", tt.name, tr.tries, tt.tries)
		}
	}
}

// TestUnknownHostOfflineCopy reads an index, then finds its host unknown to DNS (a host of
// a network this machine has left, such as a VPN's): the error, not retried, still says
// that the cache holds a copy usable offline.
func TestUnknownHostOfflineCopy(t *testing.T) {
	_, c, s := indexRead(t)
	tr := &dnsTransport{err: &net.DNSError{Err: "no such host", IsNotFound: true}}
	s.client = func() *http.Client { return &http.Client{Transport: tr} }
	_, err := c.indexOnly(t.Context(), s)
	dns, oc := (*net.DNSError)(nil), (*offlineCopyError)(nil)
	if !errors.As(err, &dns) || !errors.As(err, &oc) || tr.tries != 1 {
		t.Errorf("error %v after %d attempts, want the DNS error, once, with the copy usable offline", err, tr.tries)
	}
}

// TestRegistryAgain answers a push's manifest PUT 429 Too Many Requests: it is sent again
// after the backoff, or the longer wait Retry-After asks for, each wait announced, as a
// read's retry; it gives up after as many attempts, or at once where Retry-After asks for
// longer than maxRetryAfter, as ErrUnreachable naming the request; a cancellation (Ctrl-C)
// ends the wait.
func TestRegistryAgain(t *testing.T) {
	reg := testregistry.New(t)
	u, _ := url.Parse(reg.URL())
	ref, err := oci.ParseRef(u)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		busy    int
		after   string
		waits   []time.Duration // announced
		refused int             // requests answered 429
		ok      bool
	}{
		{2, "", []time.Duration{time.Millisecond, 2 * time.Millisecond}, 2, true},
		{2, time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat), []time.Duration{time.Millisecond, 2 * time.Millisecond}, 2, true},
		{maxTries, "0", []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond, 8 * time.Millisecond}, maxTries, false},
		{1, "61", nil, 1, false},
		{1, "7", []time.Duration{7 * time.Second}, 1, false},
	} {
		reg.Busy, reg.RetryAfter, reg.Refused = map[string]int{"PUT manifests": tt.busy}, tt.after, nil
		ctx, cancel := context.WithCancel(t.Context())
		var waits []time.Duration
		n := newNetConfig(func(err error, wait time.Duration, attempt, max int) {
			if re := (*oci.RequestError)(nil); !errors.As(err, &re) || re.Code != http.StatusTooManyRequests || attempt != len(waits)+2 || max != maxTries {
				t.Errorf("busy %d, Retry-After %q: announced %v, attempt %d of %d", tt.busy, tt.after, err, attempt, max)
			}
			waits = append(waits, wait)
			if wait > time.Second {
				cancel() // Ctrl-C during a long wait
			}
		})
		n.backoff = time.Millisecond
		err := newRegistryClient(ref, nil, n).PutManifest(ctx, "latest", oci.MediaTypeManifest, []byte("{}"))
		cancel()
		if !slices.Equal(waits, tt.waits) || len(reg.Refused) != tt.refused {
			t.Errorf("busy %d, Retry-After %q: waits %v, %d refused; want %v, %d", tt.busy, tt.after, waits, len(reg.Refused), tt.waits, tt.refused)
		}
		le := (*laterError)(nil)
		switch {
		case tt.ok && err != nil:
			t.Errorf("busy %d, Retry-After %q: %v", tt.busy, tt.after, err)
		case tt.after == "7" && !errors.Is(err, context.Canceled):
			t.Errorf("Retry-After 7, cancelled: %v, want context.Canceled", err)
		case tt.after == "61" && (!errors.As(err, &le) || !errors.Is(err, ErrUnreachable) || le.after != 61*time.Second):
			t.Errorf("Retry-After 61: %v, want ErrUnreachable saying when to ask again", err)
		case tt.busy == maxTries && (!errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "PUT "+reg.Reg.URL+"/v2/pkg/main/manifests/latest: 429 Too Many Requests")):
			t.Errorf("busy on every attempt: %v, want ErrUnreachable naming the request", err)
		}
	}
}

// TestRegistryUnavailable: a push's request the registry answers 500, 502, 503 or 504, or
// whose token the token realm refuses so or with 429, is sent again after the backoff,
// each wait announced as a read's retry is; a 501 is not.
func TestRegistryUnavailable(t *testing.T) {
	for _, code := range []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout, http.StatusTooManyRequests, http.StatusNotImplemented} {
		for _, realm := range []bool{false, true} {
			reg := testregistry.New(t)
			u, _ := url.Parse(reg.URL())
			ref, err := oci.ParseRef(u)
			if err != nil {
				t.Fatal(err)
			}
			reg.BusyStatus = code
			if realm {
				reg.TokenBusy = 2
			} else {
				reg.Busy = map[string]int{"PUT manifests": 2}
			}
			var heard []string
			n := newNetConfig(func(err error, wait time.Duration, attempt, max int) {
				heard = append(heard, fmt.Sprintf("%d of %d: %v", attempt, max, err))
			})
			n.backoff = time.Millisecond
			err = newRegistryClient(ref, nil, n).PutManifest(t.Context(), "latest", oci.MediaTypeManifest, []byte("{}"))
			switch {
			case code == http.StatusNotImplemented && (err == nil || len(heard) != 0):
				t.Errorf("%d (token realm %v): %v, retries %q; want the refusal, not sent again", code, realm, err, heard)
			case code != http.StatusNotImplemented && (err != nil || len(heard) != 2 || !strings.HasPrefix(heard[1], "3 of 5: ") ||
				!strings.Contains(heard[0], strconv.Itoa(code))):
				t.Errorf("%d (token realm %v): %v, retries %q; want the manifest pushed after two retries, each announced", code, realm, err, heard)
			}
		}
	}
}

// TestTaggedIndexRetries: the read of the index a tag names before a push retries a
// registry's 5xx, and its token realm's, as a Source's read does, each retry announced to
// Options.Retrying.
func TestTaggedIndexRetries(t *testing.T) {
	_, p := testArchive(t)
	index := writeIndex(t, p)
	for _, realm := range []bool{false, true} {
		reg := testregistry.New(t)
		pushTo(t, reg, index, nil, nil)
		reg.BusyStatus = http.StatusServiceUnavailable
		if realm {
			reg.TokenBusy = 1
		} else {
			reg.Busy = map[string]int{"GET manifests": 1}
		}
		var heard []error
		o := Options{Retrying: func(err error, _ time.Duration, _, _ int) { heard = append(heard, err) }}
		c, err := Registry(reg.URL(), o)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := TaggedIndex(t.Context(), c, o.Retrying)
		if err != nil || !bytes.Equal(got, index) || len(heard) != 1 || !strings.Contains(heard[0].Error(), "503 Service Unavailable") {
			t.Errorf("token realm %v: %v, retries %v; want the index after one retry, announced", realm, err, heard)
		}
	}
}

package fetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"pkg/internal/dirfd"
	"pkg/repo"
)

// How a Source uses its mirrors (Options.Mirrors). A request goes to them in turn: the
// one that served the index first, then the others as given, then those found down; it
// moves to the next on any failure but the caller's cancellation. Each mirror but the last
// gets one attempt: another may answer now, and waiting out this one's backoff (7.5s over
// five attempts) or answer timeout would cost every command that; the last gets the
// source's retries, as a source without mirrors does. So does a body: cut short, silent or
// too slow at one mirror, the rest is asked of the next (mirroredBody), and the last
// resumes a cut itself with those retries.
//
// A mirror with no server serving (a host DNS does not know, no connection, no answer, a
// body cut short or too slow, a 5xx or a 429) is down: this process, and every command
// sharing the cache through a record kept there, tries it last for downFor; the record goes
// once it serves again. A mirror that lacks an archive (a 404) is only stale, and is left
// for that request alone.
//
// What a mirror serves is believed as the first location's would be: an index of another
// repository, older than one accepted before, badly signed, or unverified where a key is
// trusted is refused naming the mirror, and the next mirror is asked, rather than the
// command stopped as apt does: no mirror can make pkg accept an index the first location
// could not serve, and the floor of what was accepted before holds across them, so a
// hostile mirror can only withhold, and a stale one, common since mirrors sync on a
// schedule, costs a request rather than the command. Archives are checked against the
// index whichever mirror serves them, and one refused is asked of the others (refused.go).
const downFor = 10 * time.Minute

// mirrors are a Source's locations and what is known of which of them serve.
type mirrors struct {
	locs     []location // the first location, then the mirrors, as given
	failover func(to string, why error)

	mu    sync.Mutex
	cache *Cache      // keeps the records of mirrors found down; nil until a request
	down  []time.Time // per location: tried last until then
	told  []bool      // per location: its failure was said
	used  int         // the location that served the index, tried first; -1 for none
}

func newMirrors(locs []location, failover func(string, error)) *mirrors {
	return &mirrors{locs: locs, failover: failover, used: -1, down: make([]time.Time, len(locs)), told: make([]bool, len(locs))}
}

// mirrorError is why one location of a repository with mirrors did not serve a request.
type mirrorError struct {
	URL  string // the location's URL, without credentials
	Role string // what the location is to its repository: a role*
	Err  error
}

// What a location is to its repository, as mirrorError.Error says it: its first URL, one
// of its mirrors (the URLs after it), or a by-digest mirror.
const (
	roleRepository = "repository"
	roleMirror     = "mirror"
	roleDigest     = "by-digest mirror"
)

// roleOf returns what the location i of a repository's locations (its URL, then its
// mirrors) is.
func roleOf(i int) string {
	if i == 0 {
		return roleRepository
	}
	return roleMirror
}

func (e *mirrorError) Error() string { return e.Role + " " + e.URL + ": " + e.Err.Error() }

func (e *mirrorError) Unwrap() error { return e.Err }

// mirrorErrors are the failures of one request at mirrors tried in turn, each a *MirrorError.
type mirrorErrors []error

func (e mirrorErrors) Error() string {
	s := make([]string, len(e))
	for i, err := range e {
		s[i] = err.Error()
	}
	return strings.Join(s, "; ")
}

func (e mirrorErrors) Unwrap() []error { return e }

// isDown reports whether err, a request's failure, says that no server serves there now
// rather than that it lacks or garbles what was asked.
func isDown(err error) bool {
	if se := (*statusError)(nil); errors.As(err, &se) {
		return se.code >= 500 || se.code == http.StatusTooManyRequests
	}
	return errors.Is(err, ErrUnreachable) || retryable(err) || unknownHost(err)
}

// mirror returns s reading from its location i, with one attempt per request when next.
func (s *Source) mirror(i int, next bool) *Source {
	e := *s
	e.location, e.m, e.next = s.m.locs[i], nil, next
	return &e
}

// failover calls try with each of s's mirrors in turn until one serves, and returns
// which did. It fails with the last mirror's error when ctx is done or the request
// cannot be made anywhere, else with every mirror's.
func (s *Source) failover(ctx context.Context, c *Cache, try func(e *Source) error) (int, error) {
	order := s.m.order(c)
	var errs mirrorErrors
	for k, i := range order {
		e := s.mirror(i, k < len(order)-1)
		err := try(e)
		if err == nil {
			s.m.served(i)
			s.m.tell(e.URL(), order[:k], errs)
			return i, nil
		}
		if out := (*outsideError)(nil); ctx.Err() != nil || errors.As(err, &out) {
			return i, err
		}
		s.m.failed(i, err)
		errs = append(errs, &mirrorError{URL: e.URL(), Role: roleOf(i), Err: err})
	}
	return -1, errs
}

// order returns the locations in the order to try them, reading the cache's records of
// those found down the first time.
func (m *mirrors) order(c *Cache) []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cache == nil && c != nil {
		m.cache = c
		for i, l := range m.locs {
			if r, err := c.readDown(l.t.url()); err == nil && m.down[i].IsZero() {
				m.down[i] = r.Until
			}
		}
	}
	now := time.Now()
	var up, down []int
	if m.used >= 0 && !now.Before(m.down[m.used]) {
		up = append(up, m.used)
	}
	for i := range m.locs {
		switch {
		case now.Before(m.down[i]):
			down = append(down, i)
		case i != m.used:
			up = append(up, i)
		}
	}
	return append(up, down...)
}

// served records that location i served a request: its record of being down goes.
func (m *mirrors) served(i int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.down[i].IsZero() {
		m.down[i] = time.Time{}
		if m.cache != nil && !m.cache.ReadOnly {
			unix.Unlinkat(int(m.cache.index.Fd()), downName(m.locs[i].t.url()), 0)
		}
	}
}

// use makes location i, which served the index, the first asked for its archives.
func (m *mirrors) use(i int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.used = i
}

// failed records that location i failed a request with err: down, if err says so.
func (m *mirrors) failed(i int, err error) {
	if !isDown(err) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	m.down[i] = now.Add(downFor)
	if m.cache != nil && !m.cache.ReadOnly {
		// Best effort: without the record, the next command asks this mirror first again.
		m.cache.writeDown(downRecord{URL: m.locs[i].t.url(), Error: err.Error(), At: now, Until: m.down[i]})
	}
}

// tell says, once per mirror, that to served a request after the mirrors tried failed,
// with errs.
func (m *mirrors) tell(to string, tried []int, errs mirrorErrors) {
	if len(errs) == 0 || m.failover == nil {
		return
	}
	var untold mirrorErrors
	m.mu.Lock()
	for k, i := range tried {
		if !m.told[i] {
			m.told[i] = true
			untold = append(untold, errs[k])
		}
	}
	m.mu.Unlock()
	if len(untold) > 0 {
		m.failover(to, untold)
	}
}

// openMirrored opens p's archive, named by a path relative to the repository, from kept
// on, as openDownload does with restart, from the first of s's mirrors that serves it and
// whose bytes r did not refuse.
func (s *Source) openMirrored(ctx context.Context, c *Cache, p repo.Package, kept int64, r *refusals) (body, error) {
	b := &mirroredBody{s: s, ctx: ctx, p: p, r: r, order: s.m.order(c), off: kept}
	if err := b.open(true); err != nil {
		return nil, err
	}
	b.begin = b.body.start()
	b.off = b.begin
	return b, nil
}

// mirroredBody is an archive read from a source's mirrors in turn: when one fails, before
// its body or in it, the next is asked for the rest (a Range request; one that cannot
// resume sends it all, and what came before is skipped).
type mirroredBody struct {
	s     *Source
	ctx   context.Context
	p     repo.Package
	r     *refusals
	order []int // the locations, in the order asked
	k     int   // order[k] is reading, or is the next to ask
	body  body  // order[k]'s, or nil
	off   int64 // position of the next byte returned
	begin int64 // of the first byte returned
	used  []string
	errs  mirrorErrors // of order[:k], each a *MirrorError
	err   error
}

var _ body = (*mirroredBody)(nil)

// open asks the locations from order[k] on for the archive from off on, until one
// answers; restart as openDownload's.
func (b *mirroredBody) open(restart bool) error {
	for ; b.k < len(b.order); b.k++ {
		e := b.s.mirror(b.order[b.k], b.k < len(b.order)-1)
		body, err := b.r.open(e.URL(), func() (body, error) { return e.openBeneath(b.ctx, b.p, b.off, restart) })
		if err == nil {
			b.body = body
			b.used = append(b.used, body.from())
			b.s.m.served(b.order[b.k])
			b.s.m.tell(e.URL(), b.order[:b.k], b.errs)
			return nil
		}
		if err := b.fail(e, err); err != nil {
			return err
		}
	}
	return fmt.Errorf("every mirror failed: %w", b.errs)
}

// fail records that order[k], read through e, failed with err, and returns err if no other
// location is to be asked: ctx is done, or the request cannot be made anywhere.
func (b *mirroredBody) fail(e *Source, err error) error {
	if out := (*outsideError)(nil); b.ctx.Err() != nil || errors.As(err, &out) {
		return err
	}
	b.s.m.failed(b.order[b.k], err)
	b.errs = append(b.errs, &mirrorError{URL: e.URL(), Role: roleOf(b.order[b.k]), Err: err})
	return nil
}

func (b *mirroredBody) Read(p []byte) (int, error) {
	for b.err == nil {
		if b.body == nil {
			if b.err = b.open(false); b.err != nil {
				break
			}
		}
		n, err := b.body.Read(p)
		b.off += int64(n)
		if err == nil || err == io.EOF {
			return n, err
		}
		b.body.Close()
		b.body = nil
		b.err = b.fail(b.s.mirror(b.order[b.k], false), err)
		b.k++
		if n > 0 {
			return n, nil
		}
	}
	return 0, b.err
}

func (b *mirroredBody) Close() error {
	if b.body != nil {
		return b.body.Close()
	}
	return nil
}

func (b *mirroredBody) start() int64 { return b.begin }

// from names the locations that sent the bytes, in turn.
func (b *mirroredBody) from() string { return strings.Join(b.used, ", then ") }

// downRecord is a mirror found down, kept as <cache>/index/<sha256 of its URL>.down.
type downRecord struct {
	URL   string    `json:"url"`
	Error string    `json:"error"` // why, for whoever reads the file
	At    time.Time `json:"at"`
	Until time.Time `json:"until"` // tried last until then
}

// maxDownRecord bounds the record read: one is a URL and an error's text.
const maxDownRecord = 64 << 10 // 64 KiB

// downName is the name, in index/, of the record of url found down.
func downName(url string) string {
	sum := sha256.Sum256([]byte(url))
	return hex.EncodeToString(sum[:]) + ".down"
}

// readDown returns the record of url found down, unless there is none in force.
func (c *Cache) readDown(url string) (downRecord, error) {
	var r downRecord
	f, err := dirfd.Open(c.index, downName(url), unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return r, err
	}
	defer f.Close()
	b, err := readLimited(f, maxDownRecord, f.Name(), "mirror record")
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	switch {
	case err != nil:
		return r, err
	case r.URL != url || !time.Now().Before(r.Until):
		return r, os.ErrNotExist
	}
	return r, nil
}

func (c *Cache) writeDown(r downRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return c.writeFile(c.index, downName(r.URL), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

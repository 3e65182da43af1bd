package fetch

import (
	"cmp"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"pkg/repo"
)

// How a Source uses its by-digest mirrors (Options.DigestMirrors). An archive is asked of
// each in turn at LOCATION/sha256/<hex of its sha256>, whatever URL the index names, then
// where the index names it (openPublished, with the repository's own mirrors); the first
// to answer serves it, and a body cut short is resumed from the next (a Range request,
// or what came before skipped). Each digest mirror gets one attempt per request: the
// index's URL follows. A 404 means the mirror lacks that archive, and is said nowhere; any
// other failure is said once (Options.Failover), and one that says no server serves there
// (isDown), or a directory that is not there, leaves that mirror out for the rest of the
// process. What a digest mirror
// serves is checked against the index's size and sha256 as any download is, so it can
// withhold an archive but not change one: a mirror needs no key, and no re-signing.
type digestMirrors struct {
	locs     []location
	failover func(to string, why error)

	mu   sync.Mutex
	down []bool // per location: not asked again
	told []bool // per location: its failure was said
}

func newDigestMirrors(o Options, n *netConfig) (*digestMirrors, error) {
	if len(o.DigestMirrors) == 0 {
		return nil, nil
	}
	d := &digestMirrors{failover: o.Failover, down: make([]bool, len(o.DigestMirrors)), told: make([]bool, len(o.DigestMirrors))}
	for _, u := range o.DigestMirrors {
		l, err := parseLocation(u, n)
		if le := (*locationError)(nil); errors.As(err, &le) {
			le.what = digestMirror
		}
		if err != nil {
			return nil, err
		}
		d.locs = append(d.locs, l)
	}
	return d, nil
}

// digestPath is where a by-digest mirror keeps the archive of this sha256, beneath it.
func digestPath(sha string) string { return "sha256/" + sha }

// opener opens an archive's bytes from off on, the caller holding those before; the body
// may start before off (body.start).
type opener struct {
	where string // the URL asked, for messages
	open  func(ctx context.Context, off int64) (body, error)
	fail  func(err error, next string) // records that it failed, next being asked; nil for the last
	url   string                       // the location's, for a failure; "" for the last
}

// openArchive returns the bytes of p's archive from kept on, the caller holding the
// bytes before (body.start): from the first of the by-digest mirrors to serve it, else
// where the index names it (openPublished), none whose bytes r refused (refused.go).
func (s *Source) openArchive(ctx context.Context, c *Cache, p repo.Package, kept int64, r *refusals) (body, error) {
	if s.dm == nil {
		return s.openPublished(ctx, c, p, kept, r)
	}
	var opens []opener
	for i, l := range s.dm.locs {
		if s.dm.isDown(i) {
			continue
		}
		opens = append(opens, opener{
			where: l.t.archiveURL(digestPath(p.SHA256)),
			open: func(ctx context.Context, off int64) (body, error) {
				return r.open(l.t.url(), func() (body, error) {
					b, err := l.t.open(ctx, digestPath(p.SHA256), p.SHA256, p.Size, off, true, 1)
					if errors.Is(err, ErrGone) {
						err = cmp.Or(missing(l.t), err)
					}
					return b, err
				})
			},
			fail: func(err error, next string) { s.dm.failed(i, err, next) },
			url:  l.t.url(),
		})
	}
	opens = append(opens, opener{where: s.ArchiveURL(p), open: func(ctx context.Context, off int64) (body, error) {
		return s.openPublished(ctx, c, p, off, r)
	}})
	return s.timed(ctx, p.Size, s.ArchiveURL(p), func(ctx context.Context) (body, error) {
		b := &chainBody{ctx: ctx, opens: opens, off: kept}
		if err := b.open(); err != nil {
			return nil, err
		}
		b.begin = b.body.start()
		b.off, b.begun = b.begin, true
		return b, nil
	})
}

// remote reports whether any of the mirrors is reached over a network.
func (d *digestMirrors) remote() bool {
	for _, l := range d.locs {
		if l.t.remote() {
			return true
		}
	}
	return false
}

func (d *digestMirrors) isDown(i int) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.down[i]
}

// failed records that location i failed a request with err, next being asked instead,
// and says so once, unless it only lacks the archive.
func (d *digestMirrors) failed(i int, err error, next string) {
	if errors.Is(err, ErrGone) {
		return
	}
	me := (*missingError)(nil)
	d.mu.Lock()
	d.down[i] = d.down[i] || isDown(err) || errors.As(err, &me)
	tell := !d.told[i]
	d.told[i] = true
	d.mu.Unlock()
	if tell && d.failover != nil {
		d.failover(next, &mirrorError{URL: d.locs[i].t.url(), Role: roleDigest, Err: err})
	}
}

// missingError is a by-digest mirror in a directory without sha256/: a path mistyped, a
// disk not mounted.
type missingError struct{ dir string }

func (e *missingError) Error() string {
	return e.dir + " does not exist: no by-digest mirror there (a path mistyped, a disk not mounted?)"
}

// missing returns a *missingError where t, a by-digest mirror, is a directory without
// sha256/, and nil otherwise.
func missing(t transport) error {
	d, ok := t.(directory)
	if !ok {
		return nil
	}
	dir := filepath.Join(d.dir, filepath.FromSlash(digestPath("")))
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return &missingError{dir}
	}
	return nil
}

// chainBody is an archive read from openers in turn: when one fails, before its body or
// in it, the next is asked for the rest.
type chainBody struct {
	ctx     context.Context
	opens   []opener
	k       int   // opens[k] is reading, or is the next to ask
	body    body  // opens[k]'s, or nil
	off     int64 // position of the next byte returned
	begin   int64 // of the first byte returned
	skip    int64 // bytes of body to drop, returned from an earlier one
	begun   bool  // a body was accepted: the bytes before off are returned, not the caller's
	used    []string
	refused mirrorErrors // of the openers passed because their bytes were refused
	err     error
}

var _ body = (*chainBody)(nil)

// open asks the openers from k on for the archive from off on, until one answers; the
// last one's error is returned as it is, after those of the openers refused before it,
// the caller's cancellation at once.
func (b *chainBody) open() error {
	for ; b.k < len(b.opens); b.k++ {
		o := b.opens[b.k]
		body, err := o.open(b.ctx, b.off)
		if err == nil {
			b.body = body
			b.used = append(b.used, body.from())
			if b.begun {
				b.skip = b.off - body.start()
			}
			return nil
		}
		switch re := (*refusedError)(nil); {
		case b.ctx.Err() != nil:
			return err
		case b.k == len(b.opens)-1 && len(b.refused) > 0:
			return append(b.refused, err)
		case b.k == len(b.opens)-1:
			return err
		case errors.As(err, &re):
			b.refused = append(b.refused, &mirrorError{URL: o.url, Role: roleDigest, Err: err})
		}
		o.fail(err, b.opens[b.k+1].where)
	}
	return io.ErrUnexpectedEOF
}

func (b *chainBody) Read(p []byte) (int, error) {
	for b.err == nil {
		if b.body == nil {
			if b.err = b.open(); b.err != nil {
				break
			}
		}
		n, err := b.body.Read(p)
		n = b.drop(p, n)
		b.off += int64(n)
		switch {
		case err == nil && n == 0:
			continue
		case err == nil || err == io.EOF:
			return n, err
		case b.ctx.Err() != nil || b.k == len(b.opens)-1:
			b.err = err
			return n, err
		}
		b.body.Close()
		b.body = nil
		b.opens[b.k].fail(err, b.opens[b.k+1].where)
		b.k++
		if n > 0 {
			return n, nil
		}
	}
	return 0, b.err
}

// drop removes from the n bytes read into p those to skip, and returns how many remain.
func (b *chainBody) drop(p []byte, n int) int {
	if b.skip == 0 {
		return n
	}
	k := int(min(b.skip, int64(n)))
	b.skip -= int64(k)
	return copy(p, p[k:n])
}

func (b *chainBody) Close() error {
	if b.body != nil {
		return b.body.Close()
	}
	return nil
}

func (b *chainBody) start() int64 { return b.begin }

// from names the locations that sent the bytes, in turn.
func (b *chainBody) from() string { return strings.Join(b.used, ", then ") }

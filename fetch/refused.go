package fetch

import (
	"cmp"
	"context"
	"errors"
	"io"
	"slices"
)

// How an archive whose bytes are refused (ErrMismatch: not the size or sha256 its index
// declares) is fetched again. The location that sent them (a by-digest mirror, a mirror
// of the repository) is refused for that archive, and it is read again from its first
// byte from the others, in the same order: a refused one is passed as one that failed
// is, and said so (the failover note); when none is left, the error names each. So a
// mirror can withhold an archive but not change it, nor keep the others from serving it,
// as apt tries the next mirror after a hash sum mismatch. Where a cut body was resumed
// from another, which sent the wrong bytes is not known: none is refused, and from then
// on each location is read whole, from its first byte, none resumed from another, so
// that bytes refused are one location's; one whose read fails before its end is passed
// over. A source without mirrors is read once: the same bytes would come again.
type refusals struct {
	sent    []string         // the locations, by URL, that answered the attempt
	refused map[string]error // by URL: why their bytes were refused, a *refusedError
	whole   bool             // each location is read from its first byte, none resumed from another
	passed  map[string]error // by URL, when whole: why its read failed before its end
}

// errNotResumed passes over a location in an attempt another began, once each is read
// whole.
var errNotResumed = errors.New("fetch: not asked to resume another mirror's download, which failed its check once resumed")

// refusedError is why a location's bytes of an archive were refused, from naming where
// they came from.
type refusedError struct {
	from string
	err  error // ErrMismatch
}

func (e *refusedError) Error() string { return e.from + ": " + e.err.Error() }
func (e *refusedError) Unwrap() error { return e.err }

// refusing makes attempt, a read of an archive from its first byte, until it does not fail
// with bytes refused, each time without the locations that sent those.
func (s *Source) refusing(ctx context.Context, attempt func(r *refusals) error) error {
	if s.m == nil && s.dm == nil {
		return attempt(nil)
	}
	r := &refusals{refused: map[string]error{}, passed: map[string]error{}}
	for {
		r.begin()
		err := attempt(r)
		if ctx.Err() != nil || !r.refuse(err) {
			return err
		}
	}
}

// begin starts an attempt: no location has answered it.
func (r *refusals) begin() {
	if r != nil {
		r.sent = r.sent[:0]
	}
}

// open opens the archive at the location url with open, unless its bytes were refused,
// or it was passed over.
func (r *refusals) open(url string, open func() (body, error)) (body, error) {
	if r == nil {
		return open()
	}
	if err := cmp.Or(r.refused[url], r.passed[url]); err != nil {
		return nil, err
	}
	if r.whole && len(r.sent) > 0 && r.sent[0] != url {
		return nil, errNotResumed
	}
	b, err := open()
	if err != nil {
		return nil, err
	}
	if !slices.Contains(r.sent, url) {
		r.sent = append(r.sent, url)
	}
	if r.whole {
		return &wholeBody{b, r, url}, nil
	}
	return b, nil
}

// refuse refuses the location that answered the attempt, which failed with err, and
// reports whether the attempt is to be made again: err was its bytes refused, or those
// of several (then read whole), or, read whole, it failed before its end.
func (r *refusals) refuse(err error) bool {
	var pe *packageError
	switch {
	case r == nil || len(r.sent) == 0:
		return false
	case errors.Is(err, ErrMismatch) && errors.As(err, &pe) && pe.from != "":
		if len(r.sent) > 1 {
			r.whole = true
		} else {
			r.refused[r.sent[0]] = &refusedError{from: pe.from, err: pe.err}
		}
		return true
	}
	return r.whole && r.passed[r.sent[0]] != nil
}

// wholeBody is a location's body read whole: a read that fails before its end passes
// the location over.
type wholeBody struct {
	body
	r   *refusals
	url string
}

func (b *wholeBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if err != nil && err != io.EOF {
		b.r.passed[b.url] = err
	}
	return n, err
}

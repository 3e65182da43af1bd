package fetch

import (
	"context"
	"errors"
)

// How an archive whose bytes are refused (ErrMismatch: not the size or sha256 its index
// declares) is fetched again. The location that sent them (a by-digest mirror, a mirror
// of the repository) is refused for that archive, and it is read again from its first
// byte from the others, in the same order: a refused one is passed as one that failed
// is, and said so (the failover note); when none is left, the error names each. So a
// mirror can withhold an archive but not change it, nor keep the others from serving it,
// as apt tries the next mirror after a hash sum mismatch. Where a cut body was resumed
// from another, which sent the wrong bytes is not known: those before the last are
// refused (a shorter file is a cut), and the last is asked for all of them. A source
// without mirrors is read once: the same bytes would come again.
type refusals struct {
	sent    []string         // the locations, by URL, that answered the attempt
	refused map[string]error // by URL: why their bytes were refused, a *refusedError
}

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
	r := &refusals{refused: map[string]error{}}
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

// open opens the archive at the location url with open, unless its bytes were refused.
func (r *refusals) open(url string, open func() (body, error)) (body, error) {
	if r == nil {
		return open()
	}
	if err := r.refused[url]; err != nil {
		return nil, err
	}
	b, err := open()
	if err == nil {
		r.sent = append(r.sent, url)
	}
	return b, err
}

// refuse refuses the locations that answered the attempt, which failed with err, and
// reports whether err was their bytes refused: the attempt is to be made again.
func (r *refusals) refuse(err error) bool {
	var pe *packageError
	if r == nil || len(r.sent) == 0 || !errors.Is(err, ErrMismatch) || !errors.As(err, &pe) || pe.from == "" {
		return false
	}
	why := &refusedError{from: pe.from, err: pe.err}
	for _, u := range r.sent[:max(len(r.sent)-1, 1)] {
		r.refused[u] = why
	}
	return true
}

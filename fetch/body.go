package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// body is an archive's bytes as opened after the caller kept some of its first bytes: the
// bytes start at start(), what was kept or, where the source could not resume, 0 (the
// caller then drops what it kept). from names where they came from, for errors.
type body interface {
	io.ReadCloser
	start() int64
	from() string
}

// deadlineError reports an archive download that did not end within its deadline; it is
// ErrUnreachable.
type deadlineError struct {
	where string
	size  int64
	wait  time.Duration
}

func (e *deadlineError) Error() string {
	return fmt.Sprintf("GET %s: %d bytes not read within %v", e.where, e.size, e.wait)
}

func (e *deadlineError) Is(target error) bool { return target == ErrUnreachable }

// deadline is how long a download of an archive of size bytes may take, every mirror,
// attempt and backoff included: the source's slack, and the size at its minimum rate.
func (s *Source) deadline(size int64) time.Duration {
	return s.slack + time.Duration(float64(size)/float64(max(s.minRate, 1))*float64(time.Second))
}

// timed opens an archive of size bytes, named where in errors, with open, to be read
// within its deadline.
func (s *Source) timed(ctx context.Context, size int64, where string, open func(context.Context) (body, error)) (body, error) {
	wait := s.deadline(size)
	tctx, cancel := context.WithTimeoutCause(ctx, wait, &deadlineError{where, size, wait})
	b, err := open(tctx)
	if err != nil {
		cancel()
		return nil, overdue(tctx, err)
	}
	return &timedBody{b, tctx, cancel}, nil
}

// timedBody is a body read within its deadline, whose errors once it passed say so.
type timedBody struct {
	body
	ctx    context.Context // with the deadline, whose cause is a *deadlineError
	cancel context.CancelFunc
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	return n, overdue(b.ctx, err)
}

func (b *timedBody) Close() error {
	err := b.body.Close()
	b.cancel()
	return err
}

// overdue returns err, or the *deadlineError of ctx when its deadline caused err.
func overdue(ctx context.Context, err error) error {
	if err == nil || err == io.EOF || ctx.Err() == nil {
		return err
	}
	if de := (*deadlineError)(nil); errors.As(context.Cause(ctx), &de) {
		return de
	}
	return err
}

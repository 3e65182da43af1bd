package repo

import (
	"errors"
	"fmt"
)

// Reasons for a refusal that callers may match with errors.Is; the error
// returned says in full what and where.
var (
	ErrIndex        = errors.New("repo: index refused")
	ErrFormat       = errors.New("repo: format not supported")
	ErrLimit        = errors.New("repo: over a limit")
	ErrLockEdited   = errors.New("repo: lockfile edited by hand")
	ErrNotInstalled = errors.New("repo: package not installed")
	ErrTwoPins      = errors.New("repo: name pinned to two repositories")
	ErrDuplicate    = errors.New("repo: package listed twice")
	ErrName         = errors.New("repo: bad package name")
	ErrVersion      = errors.New("repo: bad version")
	ErrAlternatives = errors.New("repo: alternatives in a request")
)

// FormatError refuses an index or a lockfile of a format other than the one this package
// reads: a newer pkg wrote one above Newest; one below it is damaged. It matches ErrFormat.
type FormatError struct {
	Format int // the format the file records
	Newest int // the one format this package reads and writes
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("format %d is not supported (this pkg reads format %d)", e.Format, e.Newest)
}

func (e *FormatError) Is(target error) bool { return target == ErrFormat }

// archiveError refuses archive, a package's archive path or URL.
type archiveError struct{ archive, msg string }

func (e *archiveError) Error() string { return e.msg }

// valueError refuses value, a package name (ErrName) or version (ErrVersion).
type valueError struct {
	kind       error
	value, msg string
}

func (e *valueError) Error() string        { return e.msg }
func (e *valueError) Is(target error) bool { return target == e.kind }

// reasonError is an error worded in full that errors.Is matches to reason, a
// sentinel, and that unwraps to its cause, if any.
type reasonError struct {
	msg    string
	reason error
	cause  error
}

func (e *reasonError) Error() string        { return e.msg }
func (e *reasonError) Is(target error) bool { return target == e.reason }
func (e *reasonError) Unwrap() error        { return e.cause }

package trust

import (
	"errors"
	"fmt"
	"strings"
)

// Why an index was used unverified; an *unverifiedError wraps one of these.
var (
	ErrUsedUnsigned  = errors.New("trust: index used unsigned")
	ErrUsedUntrusted = errors.New("trust: index used with no key trusted for its signature")
)

// An unverifiedError says why an index passed unverified: it has no signature, or no key
// trusted for it signed it.
type unverifiedError struct {
	Location string
	SignedBy []string // the key ids of its signature, if any
}

func (e *unverifiedError) Error() string {
	if len(e.SignedBy) > 0 {
		return fmt.Sprintf("repository %s is signed by key %s, but no key is trusted for it, so its index is not verified", e.Location, strings.Join(e.SignedBy, ", "))
	}
	return fmt.Sprintf("repository %s is not signed; pkg cannot tell whether its packages are the publisher's", e.Location)
}

func (e *unverifiedError) Unwrap() error {
	if len(e.SignedBy) > 0 {
		return ErrUsedUntrusted
	}
	return ErrUsedUnsigned
}

// Unverified returns why the index of r passed unverified; nil if it was Verified.
func (r Result) Unverified() *unverifiedError {
	if r.Verified() {
		return nil
	}
	return &unverifiedError{Location: r.Location, SignedBy: r.SignedBy}
}

// Standing describes how the index of r passed, in a few words that change when that
// does: "" for verified and current.
func (r Result) Standing() string {
	switch {
	case r.Expired:
		return fmt.Sprintf("expired version %d", r.Version)
	case r.Verified():
		return ""
	case len(r.SignedBy) > 0:
		return "signed by " + strings.Join(r.SignedBy, ", ")
	}
	return "unsigned"
}

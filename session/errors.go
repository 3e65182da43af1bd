package session

import (
	"errors"
	"io/fs"
	"net"
	"path/filepath"
	"slices"
	"strings"

	"pkg/fetch"
	"pkg/trust"
	"pkg/txn"
)

// What kind of failure an error is, for a command that gives advice by kind.

// PathDenied reports whether err is a permission refused on one of dirs, a path in one of
// them, or a parent of one.
func PathDenied(err error, dirs ...string) bool {
	var pe *fs.PathError
	if !errors.As(err, &pe) || !errors.Is(pe.Err, fs.ErrPermission) {
		return false
	}
	p := filepath.Clean(pe.Path)
	return slices.ContainsFunc(dirs, func(d string) bool {
		d, _ = filepath.Abs(d)
		return d == p || strings.HasPrefix(p, d+"/") || strings.HasPrefix(d, p+"/")
	})
}

// PathOf returns the absolute path err is about (a *fs.PathError's), or "": a relative one
// is a member's path in staging, not where to look.
func PathOf(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) && filepath.IsAbs(pe.Path) {
		return pe.Path
	}
	return ""
}

// ProxyFailed reports whether err is a proxy refusing or unreachable.
func ProxyFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "proxyconnect"
}

// PinRefused reports whether err refuses an index for want of a trusted key's signature
// where pkg pinned the repository: the cache's copy of it verified (*fetch.PinnedError), or
// the root's record of it (*txn.PinnedError) refusing one unsigned, untrusted or bound to
// another name.
func PinRefused(err error) bool {
	if errors.As(err, new(*fetch.PinnedError)) {
		return true
	}
	return errors.As(err, new(*txn.PinnedError)) &&
		(errors.Is(err, trust.ErrUnsigned) || errors.Is(err, trust.ErrUntrusted) || errors.Is(err, trust.ErrNotBound))
}

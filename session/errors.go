package session

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/trust"
)

// The failures of the root, the database and the sources that a command gives advice by,
// as session's calls return them: each the very value or type of the package below, so
// errors.Is and errors.As find it as they find the original.
var (
	ErrNoRoot       = install.ErrNoRoot     // nothing was ever installed in the root
	ErrCutShort     = install.ErrCutShort   // the root's first change was cut short: nothing is recorded there yet
	ErrNotLinked    = install.ErrNotLinked  // the root's last change is recorded, its links into the root still to make
	ErrLocked       = install.ErrLocked     // another process holds the root's lock past the timeout
	ErrReadOnly     = install.ErrReadOnly   // the root is on a read-only filesystem
	ErrNoExchange   = install.ErrNoExchange // the root's filesystem cannot exchange directories
	ErrSplitRoot    = install.ErrSplitRoot  // the root's pkgs/ and .pkg/ are on two filesystems
	ErrNotCache     = fetch.ErrNotCache     // the cache directory holds something else
	ErrDenied       = fetch.ErrDenied       // the repository refused access
	ErrGone         = fetch.ErrGone         // the repository lacks an archive its index names
	ErrMismatch     = fetch.ErrMismatch     // an archive is not the one its index names
	ErrDigest       = fetch.ErrDigest       // a registry served an index, signature or manifest other than its digest
	ErrUnreachable  = fetch.ErrUnreachable  // the repository cannot be reached
	ErrOffline      = fetch.ErrOffline      // offline, with no copy of the index, or of an archive, in the cache, or a copy older than a lockfile's
	ErrCacheDamaged = fetch.ErrDamaged      // a cached archive was found damaged, and removed
	ErrNoRepository = fetch.ErrNoRepository // the location holds no repository
	ErrNetrcOpen    = fetch.ErrNetrcOpen    // the netrc file holds passwords other users can read
	ErrRealm        = fetch.ErrRealm        // a registry's token realm pkg will not ask
)

type (
	DamagedError      = db.DamagedError         // the root's database cannot be read
	FormatError       = db.FormatError          // the root's database is in a format newer than this pkg reads
	NotInstalledError = db.NotInstalledError    // a name, the argument of an operation, the root lacks
	DeniedError       = fetch.DeniedError       // the repository refused access (ErrDenied): what was sent
	AmbiguousError    = db.AmbiguousError       // a name, the argument of an operation, of several versions installed
	UnlinkedError     = install.UnlinkedError   // a command's link in bin/ has something else in its place
	LinksError        = install.LinksError      // the root's bin/ links, or its prefix's, could not be updated
	ConflictError     = install.ConflictError   // two packages want one path of the root
	UnmatchedError    = install.UnmatchedError  // trees a repair found no package in the cache for
	GoneError         = install.GoneError       // packages a sound database records whose trees are gone, which a repair refuses
	DependentsError   = install.DependentsError // a removal of what other packages depend on
	NeededError       = install.NeededError     // a removal of what packages asked for need, through others it would take
	ReadOnlyError     = fetch.ReadOnlyError     // the cache cannot be written
	NetrcError        = fetch.NetrcError        // the netrc file cannot be used
	CleartextError    = fetch.CleartextError    // credentials would go over plain http to another machine
	SizeError         = fetch.SizeError         // an archive of the sha256 its index or lockfile declares, and another size
)

// UnknownDependenciesError is a removal of what packages recorded without their
// dependencies may need (a repair's, db.Record.Bare).
type UnknownDependenciesError = install.UnknownDependenciesError

// What kind of failure an error is, for a command that gives advice by kind.

// PathDenied reports whether err is a permission refused on one of dirs, a path in one of
// them, or a parent of one: an open's or the like (*fs.PathError), or a rename's
// (*os.LinkError) from or to such a path.
func PathDenied(err error, dirs ...string) bool {
	var paths []string
	var pe *fs.PathError
	var le *os.LinkError // a rename's, into or out of a directory of the cache
	switch {
	case errors.As(err, &pe) && errors.Is(pe.Err, fs.ErrPermission):
		paths = []string{pe.Path}
	case errors.As(err, &le) && errors.Is(le.Err, fs.ErrPermission):
		paths = []string{le.Old, le.New}
	}
	return slices.ContainsFunc(paths, func(p string) bool {
		p = filepath.Clean(p)
		return slices.ContainsFunc(dirs, func(d string) bool {
			d, _ = filepath.Abs(d)
			return d == p || strings.HasPrefix(p, d+"/") || strings.HasPrefix(d, p+"/")
		})
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
// where pkg pinned the repository (a *trust.PinnedError): the cache's copy of it verified,
// or the root's record of it refusing one unsigned, untrusted or bound to another name.
func PinRefused(err error) bool {
	var pe *trust.PinnedError
	return errors.As(err, &pe) &&
		(pe.Root == "" || errors.Is(err, trust.ErrUnsigned) || errors.Is(err, trust.ErrUntrusted) || errors.Is(err, trust.ErrNotBound))
}

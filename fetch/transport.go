package fetch

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"strings"

	"pkg/internal/oci"
	"pkg/internal/termtext"
)

// A transport reaches one location of a repository: a directory (directory.go) or an
// http(s) URL (http.go). Each operation outside the process is one method, so that what a
// Source does above them (mirrors and their failover, resuming a download, believing an
// index, the cache's claims) touches no file or network itself, and is tested with a
// transport in memory (transport_test.go). The model is golang.org/x/mod/sumdb's ClientOps.
type transport interface {
	// url names the location: an absolute URL ending in a slash, without credentials (a
	// file URL for a directory). It is what a repository is known by: its copy in the
	// cache, the keys trusted for it, its lock records.
	url() string

	// indexLocation names the location's index.json in messages and in the cache's copy
	// of it: its URL without credentials or, where the location is not remote, its
	// absolute path.
	indexLocation() string

	// archiveURL names the archive at rel, a slash-separated path beneath the location,
	// as url does.
	archiveURL(rel string) string

	// remote reports whether the location is reached over a network: a request may fail
	// for a while and is tried again, a download has a deadline (Source.deadline), and the
	// bytes of a large archive are kept as they come, to be resumed (partial.go).
	remote() bool

	// checkRepository refuses, as ErrNoRepository, a location known without a request to
	// hold no repository: a directory without index.json.
	checkRepository() error

	// readIndex reads index.json, in at most tries attempts. Given the copy the cache
	// keeps, it returns a copy of that one when the location says the index has not
	// changed since. where names what was read, for messages. A location that serves no
	// index.json fails with ErrNoRepository.
	readIndex(ctx context.Context, saved *savedIndex, tries int) (fresh *savedIndex, where string, err error)

	// readSignature reads index.json.sig, in at most tries attempts, or returns nil where
	// the location has none.
	readSignature(ctx context.Context, tries int) ([]byte, error)

	// open returns the bytes of the archive at rel, of size bytes and sha256 sum, from off on, the caller
	// holding the bytes before; a remote location makes at most tries attempts, and as
	// many again at each cut that brought nothing. A location that sends the whole archive
	// instead starts the body at 0 (body.start) with restart, the caller dropping what it
	// held, and skips the bytes before off without. An archive the location lacks fails
	// with ErrGone, a rel that leads out of it with an *outsideError.
	open(ctx context.Context, rel, sum string, size, off int64, restart bool, tries int) (body, error)
}

// schemes make the transport of a location by its URL's scheme; a location without one
// is a directory. A new scheme is a file implementing transport and a row here (the
// configuration file's check of a location, config/values.go, and a lockfile's of its
// URLs, repo/lockfile.go's validLockURL, name the schemes too).
var schemes = []struct {
	name string
	open func(u *url.URL, n *netConfig) (transport, error)
}{
	{"file", func(u *url.URL, _ *netConfig) (transport, error) { return newDirectory(u.Path) }},
	{"http", newHTTPLocation},
	{"https", newHTTPLocation},
	{oci.Scheme, newOCILocation},
	{oci.SchemeHTTP, newOCILocation},
	{oci.SchemeHTTPS, newOCILocation},
}

// location is one place a Source reads from, as given and as reached.
type location struct {
	loc string
	t   transport
}

// parseLocation makes the transport of the repository location loc.
func parseLocation(loc string, n *netConfig) (location, error) {
	if termtext.HasControl(loc) {
		return location{}, fmt.Errorf("%w %s: it holds a control or bidirectional character", errLocation, termtext.Quote(loc))
	}
	var t transport
	u, err := url.Parse(loc)
	switch {
	case strings.Contains(loc, "://") && (err != nil || ambiguousUser(loc, u) && !oci.ByDigest(u)):
		// Not a path: a URL net/url cannot read, or reads otherwise than its user
		// information's text would (a password holding "/", "?", "#" or "@" unescaped),
		// which neither its error nor this one, nor a request to it, may show.
		shown := loc // all that looks like user information gone: u:p@ss/wd@host's tail too
		for s := termtext.WithoutCredentials(shown); s != shown; s = termtext.WithoutCredentials(s) {
			shown = s
		}
		return location{}, &locationError{loc: termtext.Quote(shown), err: fmt.Errorf("%w: not a URL pkg can read (a user name or password must escape what it holds of \"/?#@:\", and a path its \"@\" but one that begins a segment, as %%XX)", errLocation)}
	case err == nil && len(u.Scheme) > 1: // one letter is a Windows drive
		t, err = openScheme(u, n)
	default:
		t, err = newDirectory(loc)
	}
	if err != nil {
		if u != nil && u.User != nil {
			return location{}, &locationError{loc: termtext.WithoutUser(u), err: err}
		}
		return location{}, &locationError{loc: loc, err: err}
	}
	return location{loc, t}, nil
}

// ambiguousUser reports whether loc, a URL net/url read as u, holds text
// termtext.WithoutCredentials takes for user information that u does not have, or more
// of it than u's: a password written unescaped, which a message or a request's URL would
// otherwise show.
func ambiguousUser(loc string, u *url.URL) bool {
	if u.User == nil {
		return termtext.WithoutCredentials(loc) != loc
	}
	rest := termtext.WithoutUser(u) // what is left once net/url's user information goes: more of it?
	return termtext.WithoutCredentials(rest) != rest
}

func openScheme(u *url.URL, n *netConfig) (transport, error) {
	names := []string{"a path"}
	for _, s := range schemes {
		if s.name == u.Scheme {
			return s.open(u, n)
		}
		names = append(names, s.name+"://")
	}
	return nil, &schemeError{u.Scheme, names}
}

// locationError refuses a repository location pkg cannot read, naming it.
type locationError struct {
	loc  string
	err  error
	what string // what the location is, if not a repository's: digestMirror
}

// digestMirror is what a by-digest mirror's location is called (locationError).
const digestMirror = "by-digest mirror"

// Error leaves out the location where err is a bad registry reference, which names it.
func (e *locationError) Error() string {
	_, ref := e.err.(*oci.RefError)
	switch {
	case ref && e.what == "":
		return e.err.Error()
	case ref:
		return e.what + ": " + e.err.Error()
	}
	return cmp.Or(e.what, "repository") + " " + e.loc + ": " + e.err.Error()
}
func (e *locationError) Unwrap() error { return e.err }

// schemeError refuses a URL of a scheme no transport reads, listing those that do.
type schemeError struct {
	scheme    string
	supported []string // "a path", then each scheme with its "://"
}

func (e *schemeError) Error() string {
	return fmt.Sprintf("scheme %q is not supported (use %s)", e.scheme, orList(e.supported))
}

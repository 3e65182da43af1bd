// Package fetch gets repository indexes and archives, from a local directory or over
// HTTP(S), each reached by a transport (transport.go), verifies them against the index,
// and converts each archive (a tar, compressed or not, a .deb, or a zip, the one staged in
// the cache's tmp/ first; the formats are tables: format.go) in one streaming pass into an
// aligned tar in the cache. Nothing compressed, partial or unverified is ever visible as
// an entry of the cache, even to other pkg processes sharing it (a cut download's bytes
// wait in tmp/ to be resumed: partial.go). It believes an index only as its source's
// trust policy allows (package trust), and keeps the last index of each repository it
// believed, with its signature, so that an offline source needs no network at all. It
// does not install anything.
package fetch

import (
	"context"
	"errors"
	"net/url"
	"sync"
	"time"

	"pkg/internal/oci"
	"pkg/internal/termtext"
	"pkg/repo"
	"pkg/trust"
)

// ErrOffline is returned for what an offline source cannot get from the cache.
var ErrOffline = errors.New("fetch: offline")

// offlineError is an ErrOffline saying what the cache lacks, its message without the
// sentinel's package name.
type offlineError struct{ lacks string }

func (e *offlineError) Error() string        { return "offline: " + e.lacks }
func (e *offlineError) Is(target error) bool { return target == ErrOffline }

// ErrNoRepository is what the error for a location that serves no index.json is.
var ErrNoRepository = errors.New("fetch: no repository")

// noRepository is an ErrNoRepository that says where, and why.
type noRepository struct{ where, why string }

func (e *noRepository) Error() string        { return "no repository at " + e.where + ": " + e.why }
func (e *noRepository) Is(target error) bool { return target == ErrNoRepository }

// errLocation is wrapped in the error for a repository location that holds a control
// character or a bidirectional one: no directory or URL a person typed holds one, and a
// location that does was made to be printed.
var errLocation = errors.New("fetch: bad repository location")

// ErrUnreachable is wrapped in the error of a request that failed on every attempt in a
// way that may pass later: no connection, no answer in time, a body cut short, a 5xx or 429
// status, or a server asking to be asked again only after longer than pkg waits.
var ErrUnreachable = errors.New("fetch: repository unreachable")

// Options controls a Source.
type Options struct {
	Offline bool         // never read the repository: indexes and archives come from the cache only
	Trust   trust.Policy // which indexes of the repository to believe
	// Retrying, if not nil, is called before each wait to try a request or a download
	// again, by several goroutines at once when several downloads run: err says why the
	// last attempt failed and names the URL; attempt, of at most max, comes after wait.
	Retrying func(err error, wait time.Duration, attempt, max int)

	// Mirrors are further locations of the same repository, tried in order after the
	// first when it cannot serve a request (mirror.go). The first stays the repository's
	// identity: its copy in the cache, the keys trusted for it, its lock records.
	Mirrors []string

	// Failover, if not nil, is called when a request was served by the mirror to, after
	// the mirrors before it failed: why wraps an error for each, naming its URL, each
	// said once.
	Failover func(to string, why error)

	// Credential, if not zero, authenticates the requests to the hosts of the location and
	// its mirrors, and to no other host (credentials.go). Netrc names a netrc file whose
	// entries authenticate requests to any host otherwise ("": none; a file that does not
	// exist has none). CleartextCredentials sends them over plain http to hosts that are
	// not this machine, which pkg otherwise refuses (*CleartextError).
	Credential           Credential
	Netrc                string
	CleartextCredentials bool

	// CredentialFrom says where Credential came from, CredentialVars names the
	// variables a credential for the repository is looked for in, and Repo is the
	// repository's name, for the advice on a refusal (*DeniedError). None is sent.
	CredentialFrom string
	CredentialVars []string
	Repo           string

	// DigestMirrors are locations asked for any archive by its sha256, at
	// LOCATION/sha256/<hex>, before the URL its index names, in order (digest.go).
	DigestMirrors []string

	// Admit, if not nil, has the last word on an index the trust policy believes, before
	// it is used or kept in the cache: its error refuses the index. A root's records of
	// the repository, which may forbid an index the cache would take, are its use.
	Admit func(trust.Result) error
}

// Source is a repository: a local directory, a file:// URL or an http(s):// URL of the
// directory that holds index.json, and its mirrors, each reached by a transport
// (transport.go).
type Source struct {
	location
	offline bool
	policy  trust.Policy
	admit   func(trust.Result) error
	*netConfig

	refusal DeniedError // what a refusal says of the credential sent (Err unset)

	m    *mirrors       // nil without Options.Mirrors
	dm   *digestMirrors // nil without Options.DigestMirrors
	next bool           // another mirror follows this one: a request gets one attempt

	elsewhere *sync.Map // oci reference → transport: registries of archive URLs not the repository's (archiveRegistry)
}

// NewSource parses a repository location, and its mirrors'. A location naming index.json
// itself is accepted.
func NewSource(loc string, o Options) (*Source, error) {
	n := newNetConfig(o.Retrying)
	first, err := parseLocation(loc, n)
	if err != nil {
		return nil, err
	}
	s := newSource(first, o, n)
	s.refusal = refusal(o, append([]string{loc}, o.Mirrors...)...)
	locs := []location{first}
	for _, u := range o.Mirrors {
		l, err := parseLocation(u, n)
		if err != nil {
			return nil, err
		}
		locs = append(locs, l)
	}
	n.setCredentials(o, locs)
	if s.dm, err = newDigestMirrors(o, n); err != nil {
		return nil, err
	}
	if len(o.Mirrors) > 0 {
		s.m = newMirrors(locs, o.Failover)
	}
	return s, nil
}

// newSource returns the source at l, without mirrors.
func newSource(l location, o Options, n *netConfig) *Source {
	return &Source{location: l, offline: o.Offline, policy: o.Trust, admit: o.Admit, netConfig: n, elsewhere: new(sync.Map)}
}

// attempts is how many times a request is made before it fails: once when another mirror
// follows, to ask that one at once (mirror.go).
func (s *Source) attempts() int {
	if s.next {
		return 1
	}
	return s.tries
}

// String returns the location as given.
func (s *Source) String() string { return s.loc }

// indexLocation names the index: its URL, without credentials, or absolute path. It is
// what messages and the cache's copy of the index name.
func (s *Source) indexLocation() string { return s.t.indexLocation() }

// openPublished returns the bytes of p's archive from kept on, the caller holding the
// bytes before (body.start), where its index names it: from an absolute URL as it is, a
// path from the repository or, with mirrors, the first to serve it (c keeps those found
// down, and may be nil), none whose bytes r refused; from an absolute oci URL, the blob
// of that registry (archiveRegistry). A download must end within its
// deadline (Source.deadline).
func (s *Source) openPublished(ctx context.Context, c *Cache, p repo.Package, kept int64, r *refusals) (body, error) {
	u, err := url.Parse(p.Archive)
	switch {
	case err == nil && (u.Scheme == "http" || u.Scheme == "https"):
		return r.open(termtext.WithoutUser(u), func() (body, error) {
			return s.timed(ctx, p.Size, termtext.WithoutUser(u), func(ctx context.Context) (body, error) {
				return s.openDownload(ctx, u, p.Size, kept, true, s.attempts())
			})
		})
	case err == nil && (u.Scheme == oci.Scheme || u.Scheme == oci.SchemeHTTP || u.Scheme == oci.SchemeHTTPS):
		t, rel, err := s.archiveRegistry(u)
		if err != nil {
			return nil, err
		}
		return r.open(t.url(), func() (body, error) {
			return s.timed(ctx, p.Size, t.archiveURL(rel), func(ctx context.Context) (body, error) {
				return t.open(ctx, rel, p.SHA256, p.Size, kept, true, s.attempts())
			})
		})
	case err == nil && u.Scheme == "file":
		// A lockfile's URL beneath its repository became a path (Relocate); any other
		// may name any file on this machine.
		return nil, &outsideError{p.Archive, s.URL()}
	case s.m != nil:
		return s.timed(ctx, p.Size, s.URL(), func(ctx context.Context) (body, error) {
			return s.openMirrored(ctx, c, p, kept, r)
		})
	case s.t.remote():
		return r.open(s.URL(), func() (body, error) {
			return s.timed(ctx, p.Size, s.t.archiveURL(p.Archive), func(ctx context.Context) (body, error) {
				return s.openBeneath(ctx, p, kept, true)
			})
		})
	}
	return r.open(s.URL(), func() (body, error) { return s.openBeneath(ctx, p, kept, true) })
}

// openBeneath opens p's archive, named by a path relative to the repository, from off on,
// as transport.open does.
func (s *Source) openBeneath(ctx context.Context, p repo.Package, off int64, restart bool) (body, error) {
	return s.t.open(ctx, p.Archive, p.SHA256, p.Size, off, restart, s.attempts())
}

// outsideError refuses an archive that is not beneath the repository: a path that leads
// out of it, or a file URL.
type outsideError struct{ Archive, Repo string }

func (e *outsideError) Error() string {
	return "archive " + e.Archive + " is not beneath the repository " + e.Repo
}

// Package fetch gets repository indexes and archives, from a local directory or over
// HTTP(S), verifies them against the index, and converts each archive (a tar, compressed
// or not, a .deb, or a zip, the one staged in the cache's tmp/ first) in one streaming pass
// into an aligned tar in the cache. Nothing compressed, partial or unverified is ever
// visible as an entry of the cache, even to other pkg processes sharing it (a cut
// download's bytes wait in tmp/ to be resumed: partial.go). It believes an index only as
// its source's trust policy allows (package trust), and keeps the last index of each
// repository it believed, with its signature, so that an offline source needs no network
// at all. It does not install anything.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"pkg/internal/regfile"
	"pkg/internal/termtext"
	"pkg/repo"
	"pkg/trust"
)

// ErrOffline is returned for what an offline source cannot get from the cache.
var ErrOffline = errors.New("fetch: offline")

// ErrNoRepository is what the error for a location that serves no index.json is.
var ErrNoRepository = errors.New("fetch: no repository")

// noRepository is an ErrNoRepository that says where.
type noRepository string

func (e noRepository) Error() string        { return string(e) }
func (e noRepository) Is(target error) bool { return target == ErrNoRepository }

// errLocation is wrapped in the error for a repository location that holds a control
// character or a bidirectional one: no directory or URL a person typed holds one, and a
// location that does was made to be printed.
var errLocation = errors.New("fetch: bad repository location")

// ErrUnreachable is wrapped in the error of a request that failed on every attempt in a
// way that may pass later: no connection, no answer in time, a body cut short, a 5xx status.
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
	// the mirrors before it failed: why wraps a *MirrorError for each, each said once.
	Failover func(to string, why error)

	// Admit, if not nil, has the last word on an index the trust policy believes, before
	// it is used or kept in the cache: its error refuses the index. A root's records of
	// the repository, which may forbid an index the cache would take, are its use.
	Admit func(trust.Result) error
}

// Source is a repository: a local directory, a file:// URL or an http(s):// URL of the
// directory that holds index.json.
type Source struct {
	loc     string
	dir     string   // local repository directory, or ""
	base    *url.URL // remote repository directory, with a trailing slash, or nil
	offline bool
	policy  trust.Policy
	admit   func(trust.Result) error

	client   *http.Client
	tries    int           // attempts at a request
	backoff  time.Duration // wait after the first failure, doubled after each next one
	answer   time.Duration // longest wait for the headers of an index's response
	idle     time.Duration // longest wait for a body's next bytes
	minRate  int64         // bytes per second a body must average over each window
	window   time.Duration
	slack    time.Duration // of an archive's deadline, beyond its size at minRate
	indexMax time.Duration // longest wait for an index and its signature, retries included
	retrying func(err error, wait time.Duration, attempt, max int)

	m    *mirrors // nil without Options.Mirrors
	next bool     // another mirror follows this one: a request gets one attempt
}

// NewSource parses a repository location, and its mirrors'. A location naming index.json
// itself is accepted.
func NewSource(location string, o Options) (*Source, error) {
	s := &Source{loc: location, offline: o.Offline, policy: o.Trust, admit: o.Admit, client: newClient(), tries: maxTries,
		backoff: firstBackoff, answer: answerTimeout, idle: idleTimeout, minRate: minRate, window: rateWindow, slack: archiveSlack,
		indexMax: indexTimeout, retrying: o.Retrying}
	first, err := parseLocation(location)
	if err != nil {
		return nil, err
	}
	s.dir, s.base = first.dir, first.base
	if len(o.Mirrors) > 0 {
		if s.m, err = newMirrors(first, o.Mirrors, o.Failover); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// location is where a Source reads from: a local directory or a remote one.
type location struct {
	loc  string
	dir  string   // local repository directory, or ""
	base *url.URL // remote repository directory, with a trailing slash, or nil
}

func parseLocation(loc string) (location, error) {
	l := location{loc: loc}
	if termtext.HasControl(loc) {
		return l, fmt.Errorf("%w %s: it holds a control or bidirectional character", errLocation, termtext.Quote(loc))
	}
	u, err := url.Parse(loc)
	switch {
	case err == nil && (u.Scheme == "http" || u.Scheme == "https"):
		u.Path = strings.TrimSuffix(u.Path, "index.json")
		if !strings.HasSuffix(u.Path, "/") {
			u.Path += "/"
		}
		l.base = u
	case err == nil && u.Scheme == "file":
		l.dir = u.Path
	case err == nil && u.Scheme != "" && len(u.Scheme) > 1:
		return l, fmt.Errorf("fetch: repository %s: scheme %q is not supported (use a path, file://, http:// or https://)", loc, u.Scheme)
	default:
		l.dir = loc
	}
	if l.dir != "" {
		if filepath.Base(l.dir) == "index.json" {
			l.dir = filepath.Dir(l.dir)
		}
		if l.dir, err = filepath.Abs(l.dir); err != nil {
			return l, fmt.Errorf("fetch: repository %s: %w", loc, err)
		}
	}
	return l, nil
}

// String returns the location as given.
func (s *Source) String() string { return s.loc }

// indexLocation names the index: its URL, without credentials, or absolute path. It is
// what messages and the cache's copy of the index name.
func (s *Source) indexLocation() string {
	if s.base != nil {
		u := s.base.JoinPath("index.json")
		u.User = nil
		return u.String()
	}
	return filepath.Join(s.dir, "index.json")
}

// openArchive returns the bytes of p's archive from kept on, the caller holding the
// bytes before (body.start): from an absolute URL as it is, a path from the repository
// or, with mirrors, the first to serve it (c keeps those found down, and may be nil). A
// download must end within its deadline (Source.deadline).
func (s *Source) openArchive(ctx context.Context, c *Cache, p repo.Package, kept int64) (body, error) {
	u, err := url.Parse(p.Archive)
	switch {
	case err == nil && (u.Scheme == "http" || u.Scheme == "https"):
		return s.timed(ctx, p.Size, u.Redacted(), func(ctx context.Context) (body, error) {
			return s.openDownload(ctx, u, p.Size, kept, true)
		})
	case err == nil && u.Scheme == "file":
		// A lockfile's URL beneath its repository became a path (Relocate); any other
		// may name any file on this machine.
		return nil, &OutsideError{p.Archive, s.URL()}
	case s.m != nil:
		return s.timed(ctx, p.Size, s.URL(), func(ctx context.Context) (body, error) {
			return s.openMirrored(ctx, c, p, kept)
		})
	case s.base != nil:
		return s.timed(ctx, p.Size, s.base.JoinPath(p.Archive).Redacted(), func(ctx context.Context) (body, error) {
			return s.openBeneath(ctx, p, kept, true)
		})
	}
	return s.openBeneath(ctx, p, kept, true)
}

// openBeneath opens p's archive, named by a path relative to the repository, from off on,
// as openDownload does.
func (s *Source) openBeneath(ctx context.Context, p repo.Package, off int64, restart bool) (body, error) {
	if s.base == nil {
		if !filepath.IsLocal(filepath.FromSlash(p.Archive)) {
			return nil, &OutsideError{p.Archive, s.dir}
		}
		return openLocal(ctx, filepath.Join(s.dir, filepath.FromSlash(p.Archive)), off)
	}
	u := s.base.JoinPath(p.Archive)
	if rel, ok := strings.CutPrefix(u.Path, s.base.Path); !ok || !filepath.IsLocal(rel) {
		return nil, &OutsideError{p.Archive, s.URL()}
	}
	return s.openDownload(ctx, u, p.Size, off, restart)
}

// OutsideError refuses an archive that is not beneath the repository: a path that leads
// out of it, or a file URL.
type OutsideError struct{ Archive, Repo string }

func (e *OutsideError) Error() string {
	return "archive " + e.Archive + " is not beneath the repository " + e.Repo
}

// checkLocal refuses, as ErrNoRepository, a local directory that holds no index.json.
func (s *Source) checkLocal() error {
	f, err := regfile.Open(s.indexLocation(), 0)
	if errors.Is(err, fs.ErrNotExist) {
		return noRepository(fmt.Sprintf("no repository at %s: %s does not exist", s.dir, s.indexLocation()))
	} else if err != nil {
		return err
	}
	return f.Close()
}

// openLocal opens the archive at path from off on, to be read until ctx is done.
// Anything but a regular file is refused: a FIFO would block the open, a directory fail
// later.
func openLocal(ctx context.Context, path string, off int64) (body, error) {
	f, err := regfile.Open(path, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, gone{err}
	} else if err != nil {
		return nil, err
	}
	if off > 0 {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			f.Close()
			return nil, err
		}
	}
	return &localArchive{f, ctx, off}, nil
}

// localArchive is a local archive whose reads fail once ctx is done, as a download's do.
type localArchive struct {
	f   *os.File
	ctx context.Context
	off int64 // where it was opened
}

var _ body = (*localArchive)(nil)

func (a *localArchive) start() int64 { return a.off }

func (a *localArchive) from() string { return a.f.Name() }

func (a *localArchive) Read(p []byte) (int, error) {
	if err := a.ctx.Err(); err != nil {
		return 0, err
	}
	return a.f.Read(p)
}

func (a *localArchive) Close() error { return a.f.Close() }

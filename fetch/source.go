// Package fetch gets repository indexes and archives, from a local directory or over
// HTTP(S), verifies them against the index, and converts each archive in one streaming pass
// into an aligned tar in the cache. Nothing compressed or unverified is ever visible in the
// cache. It does not install anything.
package fetch

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"pkg/repo"
)

// UserAgent is sent with every HTTP request.
const UserAgent = "pkg/0.1"

// Source is a repository: a local directory, a file:// URL or an http(s):// URL of the
// directory that holds index.json.
type Source struct {
	loc    string
	dir    string   // local repository directory, or ""
	base   *url.URL // remote repository directory, with a trailing slash, or nil
	client *http.Client
}

// NewSource parses a repository location. A location naming index.json itself is accepted.
func NewSource(location string) (*Source, error) {
	s := &Source{loc: location, client: newClient()}
	u, err := url.Parse(location)
	switch {
	case err == nil && (u.Scheme == "http" || u.Scheme == "https"):
		u.Path = strings.TrimSuffix(u.Path, "index.json")
		if !strings.HasSuffix(u.Path, "/") {
			u.Path += "/"
		}
		s.base = u
	case err == nil && u.Scheme == "file":
		s.dir = u.Path
	case err == nil && u.Scheme != "" && len(u.Scheme) > 1:
		return nil, fmt.Errorf("fetch: repository %s: scheme %q is not supported (use a path, file://, http:// or https://)", location, u.Scheme)
	default:
		s.dir = location
	}
	if s.dir != "" && filepath.Base(s.dir) == "index.json" {
		s.dir = filepath.Dir(s.dir)
	}
	return s, nil
}

func newClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = 30 * time.Second
	t.ResponseHeaderTimeout = 60 * time.Second
	return &http.Client{Transport: t}
}

// String returns the location as given.
func (s *Source) String() string { return s.loc }

// Index reads and validates the repository's index.json.
func (s *Source) Index(ctx context.Context) (*repo.Index, error) {
	rc, where, err := s.open(ctx, "index.json")
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, repo.MaxIndexSize+1))
	if err != nil {
		return nil, fmt.Errorf("fetch: read %s: %w", where, err)
	}
	ix, err := repo.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return ix, nil
}

// open returns the body of a file of the repository, and where it came from.
func (s *Source) open(ctx context.Context, name string) (io.ReadCloser, string, error) {
	if u, err := url.Parse(name); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		return s.get(ctx, u)
	}
	if s.base != nil {
		return s.get(ctx, s.base.JoinPath(name))
	}
	p := filepath.Join(s.dir, filepath.FromSlash(name))
	f, err := os.Open(p)
	if err != nil {
		return nil, p, fmt.Errorf("fetch: %w", err)
	}
	return f, p, nil
}

func (s *Source) get(ctx context.Context, u *url.URL) (io.ReadCloser, string, error) {
	where := u.Redacted()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, where, fmt.Errorf("fetch: %s: %w", where, err)
	}
	req.Header.Set("User-Agent", UserAgent)
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, where, fmt.Errorf("fetch: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, where, fmt.Errorf("fetch: GET %s: %s", where, resp.Status)
	}
	return resp.Body, where, nil
}

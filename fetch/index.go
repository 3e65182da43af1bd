package fetch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"

	"pkg/repo"
)

// savedIndex is the last verified index of a repository, kept in the cache as a line of
// JSON with what a conditional request needs, followed by the index as published.
type savedIndex struct {
	Location     string `json:"location"`
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
	data         []byte
}

// Index returns the repository's index. Online, it reads the index (over HTTP, asking
// only for a copy newer than the one kept) and keeps it once it parses, replacing a kept
// copy that is damaged; offline, it returns the copy kept.
func (c *Cache) Index(ctx context.Context, s *Source) (*repo.Index, error) {
	path := c.indexPath(s)
	saved, err := loadIndex(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && s.offline {
		return nil, err
	}
	if s.offline {
		if saved == nil {
			return nil, fmt.Errorf("%w: no saved index of %s (run pkg once online)", ErrOffline, s)
		}
		return parseIndex(saved.data, path)
	}
	fresh, where, err := s.readIndex(ctx, saved)
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	if fresh == saved {
		return parseIndex(saved.data, path)
	}
	ix, err := parseIndex(fresh.data, where)
	if err != nil {
		return nil, err
	}
	if saved == nil || saved.ETag != fresh.ETag || saved.LastModified != fresh.LastModified ||
		!bytes.Equal(saved.data, fresh.data) {
		if err := c.saveIndex(path, fresh); err != nil {
			return nil, err
		}
	}
	return ix, nil
}

func parseIndex(data []byte, where string) (*repo.Index, error) {
	ix, err := repo.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return ix, nil
}

func (c *Cache) indexPath(s *Source) string {
	sum := sha256.Sum256([]byte(s.indexLocation()))
	return filepath.Join(c.dir, "index", hex.EncodeToString(sum[:])+".json")
}

func loadIndex(path string) (*savedIndex, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	head, data, ok := bytes.Cut(b, []byte("\n"))
	saved := &savedIndex{data: data}
	if !ok || json.Unmarshal(head, saved) != nil {
		return nil, fmt.Errorf("fetch: %s is not a saved index (remove it)", path)
	}
	return saved, nil
}

func (c *Cache) saveIndex(path string, saved *savedIndex) error {
	head, err := json.Marshal(saved)
	if err != nil {
		return err
	}
	return c.writeFile(path, func(w io.Writer) error {
		_, err := w.Write(append(append(head, '\n'), saved.data...))
		return err
	})
}

// readIndex reads the index. Given the copy kept, it returns that same copy when the
// server says it has not changed.
func (s *Source) readIndex(ctx context.Context, saved *savedIndex) (*savedIndex, string, error) {
	where := s.indexLocation()
	fresh := &savedIndex{Location: where}
	if s.base == nil {
		f, err := os.Open(where)
		if err != nil {
			return nil, where, err
		}
		defer f.Close()
		fresh.data, err = readLimited(f)
		return fresh, where, err
	}
	h := http.Header{}
	if saved != nil && saved.Location == where {
		if saved.ETag != "" {
			h.Set("If-None-Match", saved.ETag)
		}
		if saved.LastModified != "" {
			h.Set("If-Modified-Since", saved.LastModified)
		}
	}
	u := s.base.JoinPath("index.json")
	notModified := false
	err := s.retry(ctx, func() error {
		var err error
		notModified, err = s.getIndex(ctx, u, h, fresh)
		return err
	})
	switch {
	case notModified && saved == nil:
		return nil, where, fmt.Errorf("GET %s: %s to a request without validators", u.Redacted(), http.StatusText(http.StatusNotModified))
	case notModified:
		return saved, where, nil
	}
	return fresh, u.Redacted(), err
}

// getIndex requests the index once and reads it into fresh, unless the server answers
// that it has not changed.
func (s *Source) getIndex(ctx context.Context, u *url.URL, h http.Header, fresh *savedIndex) (notModified bool, err error) {
	resp, err := s.send(ctx, u, h)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusNotModified:
		return true, nil
	case http.StatusOK:
	default:
		return false, &statusError{where: u.Redacted(), status: resp.Status, code: resp.StatusCode}
	}
	fresh.ETag, fresh.LastModified = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if fresh.data, err = readLimited(resp.Body); err != nil {
		return false, fmt.Errorf("read %s: %w", u.Redacted(), err)
	}
	return false, nil
}

// readLimited reads an index, refusing one over repo.MaxIndexSize.
func readLimited(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, repo.MaxIndexSize+1))
	if err == nil && len(data) > repo.MaxIndexSize {
		err = fmt.Errorf("index is over the %d-byte limit", repo.MaxIndexSize)
	}
	return data, err
}

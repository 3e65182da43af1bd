package fetch

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"

	"pkg/internal/termtext"
)

// maxDownload bounds what downloadFile writes: the largest archive an index entry may have.
const maxDownload = 512 << 30 // 512 GiB

// downloadFile writes the archive at rawURL, an absolute http(s) URL, to f from its start,
// for a publisher who records the URL in an index in place of a copy: the index's size
// and sha256 are then measured from f. It retries as Fetch does, each attempt from the
// first byte.
func downloadFile(ctx context.Context, rawURL string, f *os.File) error {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &notHTTPError{termtext.WithoutCredentials(rawURL)}
	}
	n := newNetConfig(nil)
	if _, err := parseLocation(rawURL, n); err != nil { // a control character
		return err
	}
	return n.retry(ctx, n.tries, func() error { return n.downloadTo(ctx, u, f) })
}

func (s *netConfig) downloadTo(ctx context.Context, u *url.URL, f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	resp, err := s.send(ctx, u, nil, s.answer)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return newStatusError(u, resp)
	}
	if err := encoded(u, resp.Header, "an archive"); err != nil {
		return err
	}
	if resp.ContentLength > maxDownload {
		return fmt.Errorf("GET %s: %d bytes, over the %d-byte limit of an archive", termtext.WithoutUser(u), resp.ContentLength, int64(maxDownload))
	}
	n, err := io.Copy(f, io.LimitReader(resp.Body, maxDownload+1))
	switch {
	case err != nil:
		return fmt.Errorf("GET %s: %w", termtext.WithoutUser(u), err)
	case n > maxDownload:
		return fmt.Errorf("GET %s: over the %d-byte limit of an archive", termtext.WithoutUser(u), int64(maxDownload))
	}
	return nil
}

// notHTTPError refuses a download from a URL that is not absolute http(s); url is
// without its user information.
type notHTTPError struct{ url string }

func (e *notHTTPError) Error() string {
	return fmt.Sprintf("download %s: not an absolute http(s) URL", e.url)
}

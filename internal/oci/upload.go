package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"pkg/internal/termtext"
)

// Uploads (distribution-spec, "Push"): a blob the registry has (HEAD 200) is not sent
// again; another is sent by POST then one PUT when it fits in a chunk, else by PATCHes of
// a chunk each, with Content-Range, and a closing PUT, each to the Location the last
// answer gave (distribution changes its _state at every PATCH). The manifest goes last:
// registries may refuse one whose blobs they lack.

// RequestError is a registry's refusal of a request, or an answer pkg cannot use.
type RequestError struct {
	Method, URL string
	Status      string // printable
	Code        int
	Detail      string // the registry's error codes and messages, printable; may be ""
	RetryAfter  string // the answer's Retry-After header, as sent (not printable); may be ""
}

func (e *RequestError) Error() string {
	s := fmt.Sprintf("%s %s: %s", e.Method, e.URL, e.Status)
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// ErrTooLarge is what a *RequestError answered 413 is (errors.Is): the registry, or a
// proxy in front of it (nginx's client_max_body_size), refused the request's body as
// larger than it takes.
var ErrTooLarge = errors.New("oci: request body too large")

// Is reports whether target is ErrTooLarge and the registry answered 413.
func (e *RequestError) Is(target error) bool {
	return target == ErrTooLarge && e.Code == http.StatusRequestEntityTooLarge
}

// Denied reports whether the registry refused the request's authorization.
func (e *RequestError) Denied() bool {
	return e.Code == http.StatusUnauthorized || e.Code == http.StatusForbidden
}

// maxErrorBody bounds the body of a refusal pkg reads for its error codes.
const maxErrorBody = 64 << 10 // 64 KiB

// refusal makes the error of resp, an answer to req pkg cannot use, and closes its body.
func refusal(req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	e := &RequestError{Method: req.Method, URL: req.URL.Redacted(), Status: termtext.Printable(resp.Status), Code: resp.StatusCode,
		RetryAfter: resp.Header.Get("Retry-After")}
	var body struct {
		Errors []struct{ Code, Message string } `json:"errors"`
	}
	if b, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody)); err == nil && json.Unmarshal(b, &body) == nil {
		var parts []string
		for _, x := range body.Errors {
			parts = append(parts, strings.TrimSpace(x.Code+" "+x.Message))
		}
		e.Detail = termtext.Printable(strings.Join(parts, "; "))
	}
	return e
}

// do sends a request of the client's own, with body b (nil: none), and returns the
// response if its status is one of want. One refused as Busy is sent again as long as the
// Client's Options.Again allows. Each request of the Client's own may be: the registry
// took nothing of it, or, behind a proxy that timed out, all of it, and a repeat of one
// it took stores nothing twice or wrong, since a blob is taken by its digest, a chunk at
// its Content-Range (a range taken already is refused, 416) and a manifest under its
// tag, and an upload that is started twice leaves one unused, which registries expire.
func (c *Client) do(ctx context.Context, method string, u *url.URL, h http.Header, b *io.SectionReader, want ...int) (*http.Response, error) {
	for n := 1; ; n++ {
		resp, err := c.send(ctx, method, u, h, b, want...)
		if err == nil || c.again == nil || !Busy(err) {
			return resp, err
		}
		if err := c.again(ctx, err, n); err != nil {
			return nil, err
		}
	}
}

// Busy reports whether err is a refusal, the registry's (*RequestError) or its token
// realm's (*TokenError), that may pass sent again: 429 Too Many Requests, or 500, 502, 503
// or 504, a server or the proxy in front of it failing for now. Other statuses (501 Not
// Implemented, 505) are the same at every attempt.
func Busy(err error) bool {
	var re *RequestError
	var te *TokenError
	switch {
	case errors.As(err, &re):
		return busyStatus(re.Code)
	case errors.As(err, &te):
		return busyStatus(te.Code)
	}
	return false
}

func busyStatus(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// send sends a request of the client's own once, as do does.
func (c *Client) send(ctx context.Context, method string, u *url.URL, h http.Header, b *io.SectionReader, want ...int) (*http.Response, error) {
	var body io.Reader
	if b != nil {
		body = io.NewSectionReader(b, 0, b.Size()) // from the start, at each sending
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if b != nil {
		req.ContentLength = b.Size()
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(io.NewSectionReader(b, 0, b.Size())), nil }
		if b.Size() == 0 {
			req.Body, req.GetBody = http.NoBody, nil
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err
		}
		var te *TokenError
		var re *RealmError
		if errors.As(err, &te) || errors.As(err, &re) {
			return nil, err // it names the registry
		}
		return nil, fmt.Errorf("%s %s: %w", method, u.Redacted(), err)
	}
	for _, w := range want {
		if resp.StatusCode == w {
			return resp, nil
		}
	}
	return nil, refusal(req, resp)
}

// HasBlob reports whether the repository holds the blob with digest d.
func (c *Client) HasBlob(ctx context.Context, d string) (bool, error) {
	resp, err := c.do(ctx, http.MethodHead, c.ref.BlobURL(d), nil, nil, http.StatusOK, http.StatusNotFound)
	if err != nil {
		return false, err
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK, nil
}

// PushBlob uploads the blob of digest d, the size bytes of r, in one request when they fit
// in chunk bytes, else in chunks of that many.
func (c *Client) PushBlob(ctx context.Context, d string, r io.ReaderAt, size, chunk int64) error {
	empty := io.NewSectionReader(bytes.NewReader(nil), 0, 0)
	resp, err := c.do(ctx, http.MethodPost, c.ref.base().JoinPath(c.ref.Name, "blobs", "uploads/"), nil, empty, http.StatusAccepted)
	if err != nil {
		return err
	}
	loc, err := c.location(resp)
	if err != nil {
		return err
	}
	octet := http.Header{"Content-Type": {"application/octet-stream"}}
	if size > chunk {
		for off := int64(0); off < size; off += chunk {
			n := min(chunk, size-off)
			h := http.Header{"Content-Type": {"application/octet-stream"}, "Content-Range": {fmt.Sprintf("%d-%d", off, off+n-1)}}
			resp, err := c.do(ctx, http.MethodPatch, loc, h, io.NewSectionReader(r, off, n), http.StatusAccepted)
			if err != nil {
				return err
			}
			if loc, err = c.location(resp); err != nil {
				return err
			}
			if got := resp.Header.Get("Range"); got != "" && got != fmt.Sprintf("0-%d", off+n-1) {
				return &RequestError{Method: http.MethodPatch, URL: loc.Redacted(), Status: resp.Status, Code: resp.StatusCode,
					Detail: "the registry holds bytes " + termtext.Printable(got) + " of the upload, not 0-" + strconv.FormatInt(off+n-1, 10)}
			}
		}
		r, size = empty, 0
	}
	q := loc.Query()
	q.Set("digest", d)
	loc.RawQuery = q.Encode()
	resp, err = c.do(ctx, http.MethodPut, loc, octet, io.NewSectionReader(r, 0, size), http.StatusCreated)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// location returns the upload's URL that resp gives, closing resp's body. A location in
// plain http for a registry spoken to over https is refused.
func (c *Client) location(resp *http.Response) (*url.URL, error) {
	defer drain(resp)
	u, err := resp.Location()
	switch {
	case err != nil:
		return nil, &RequestError{Method: resp.Request.Method, URL: resp.Request.URL.Redacted(), Status: resp.Status, Code: resp.StatusCode, Detail: "no Location for the upload"}
	case u.Scheme != "https" && (u.Scheme != "http" || c.ref.HTTPScheme() == "https"):
		return nil, &RequestError{Method: resp.Request.Method, URL: resp.Request.URL.Redacted(), Status: resp.Status, Code: resp.StatusCode,
			Detail: "the upload's Location " + termtext.Quote(u.Redacted()) + " is not https"}
	}
	return u, nil
}

// PutManifest stores the manifest b, of media type mediaType, under tag.
func (c *Client) PutManifest(ctx context.Context, tag, mediaType string, b []byte) error {
	h := http.Header{"Content-Type": {mediaType}}
	resp, err := c.do(ctx, http.MethodPut, c.ref.ManifestURL(tag), h, io.NewSectionReader(bytes.NewReader(b), 0, int64(len(b))), http.StatusCreated)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

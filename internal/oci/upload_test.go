package oci

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pkg/pkgtest/testregistry"
)

// TestPushBlob: a blob that fits a chunk goes in one PUT; a larger one in PATCHes with
// Content-Range, each at the last Location, then a PUT; either is then there by HEAD.
func TestPushBlob(t *testing.T) {
	reg := testregistry.New(t)
	c, _ := newTestClient(refOf(t, reg), nil)
	ctx := context.Background()
	for _, tc := range []struct {
		size, chunk int
		ranges      []string
	}{
		{100, 100, nil},
		{250, 100, []string{"0-99", "100-199", "200-249"}},
	} {
		b := bytes.Repeat([]byte{byte(tc.size)}, tc.size)
		d := Digest(b)
		if ok, err := c.HasBlob(ctx, d); err != nil || ok {
			t.Fatalf("HasBlob before: %v, %v", ok, err)
		}
		reg.Ranges = nil
		if err := c.PushBlob(ctx, d, bytes.NewReader(b), int64(len(b)), int64(tc.chunk)); err != nil {
			t.Fatalf("PushBlob of %d bytes in chunks of %d: %v", tc.size, tc.chunk, err)
		}
		if !reflect.DeepEqual(reg.Ranges, tc.ranges) {
			t.Errorf("%d bytes in chunks of %d: PATCH ranges %q, want %q", tc.size, tc.chunk, reg.Ranges, tc.ranges)
		}
		if !bytes.Equal(reg.Blobs[d], b) {
			t.Errorf("%d bytes: the registry holds %d", tc.size, len(reg.Blobs[d]))
		}
		if ok, err := c.HasBlob(ctx, d); err != nil || !ok {
			t.Errorf("HasBlob after: %v, %v", ok, err)
		}
	}
}

// TestPushBlobRefused: a digest the bytes do not have is the registry's refusal, naming
// the upload and the registry's error code.
func TestPushBlobRefused(t *testing.T) {
	reg := testregistry.New(t)
	c, _ := newTestClient(refOf(t, reg), nil)
	err := c.PushBlob(context.Background(), Digest([]byte("other")), bytes.NewReader([]byte("x")), 1, 10)
	var re *RequestError
	if !errors.As(err, &re) || re.Code != http.StatusBadRequest || !strings.Contains(err.Error(), "DIGEST_INVALID") {
		t.Errorf("PushBlob with a wrong digest: %v, want a *RequestError 400 DIGEST_INVALID", err)
	}
}

func TestParseManifest(t *testing.T) {
	good := `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.pkg.repository.v1",` +
		`"config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":"` + Empty.Digest + `","size":2},` +
		`"layers":[{"mediaType":"application/vnd.pkg.index.v1+json","digest":"` + Digest([]byte("i")) + `","size":1,"annotations":{"org.opencontainers.image.title":"index.json"}}]}`
	m, err := ParseManifest([]byte(good), MediaTypeManifest)
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := m.Layer("index.json"); !ok || d.Digest != Digest([]byte("i")) {
		t.Errorf("Layer(index.json) = %v, %v", d, ok)
	}
	for name, tc := range map[string]struct{ body, ct string }{
		"image index":   {strings.Replace(good, MediaTypeManifest, MediaTypeImageIndex, 1), MediaTypeImageIndex},
		"other type":    {good, "application/json"},
		"container":     {strings.Replace(good, ArtifactType, "", 1), MediaTypeManifest},
		"bad digest":    {strings.Replace(good, Digest([]byte("i")), "sha256:ABC", 1), MediaTypeManifest},
		"schema 1":      {strings.Replace(good, `"schemaVersion":2`, `"schemaVersion":1`, 1), MediaTypeManifest},
		"not json":      {"<html>", MediaTypeManifest},
		"md5 digest":    {strings.Replace(good, Digest([]byte("i")), "md5:0cc175b9c0f1b6a831c399e269772661", 1), MediaTypeManifest},
		"negative size": {strings.Replace(good, `"size":1`, `"size":-1`, 1), MediaTypeManifest},
	} {
		if _, err := ParseManifest([]byte(tc.body), tc.ct); !errors.Is(err, ErrManifest) {
			t.Errorf("%s: %v, want ErrManifest", name, err)
		}
	}
}

// TestPushBlobTooLarge: a body over what the registry, or a proxy in front of it, takes is
// answered 413, which is ErrTooLarge; the same blob in chunks under that limit goes.
func TestPushBlobTooLarge(t *testing.T) {
	reg := testregistry.New(t)
	reg.MaxBody = 100
	c, _ := newTestClient(refOf(t, reg), nil)
	b := bytes.Repeat([]byte{'x'}, 250)
	err := c.PushBlob(context.Background(), Digest(b), bytes.NewReader(b), int64(len(b)), 1000)
	var re *RequestError
	if !errors.Is(err, ErrTooLarge) || !errors.As(err, &re) || re.Code != http.StatusRequestEntityTooLarge || !strings.Contains(err.Error(), "413") {
		t.Errorf("PushBlob of 250 bytes in one request through a limit of 100: %v, want a *RequestError 413, ErrTooLarge", err)
	}
	if err := c.PushBlob(context.Background(), Digest(b), bytes.NewReader(b), int64(len(b)), 100); err != nil {
		t.Errorf("PushBlob in chunks of 100 through a limit of 100: %v", err)
	}
	re = nil
	if err := c.PushBlob(context.Background(), Digest([]byte("other")), bytes.NewReader([]byte("x")), 1, 10); errors.Is(err, ErrTooLarge) || !errors.As(err, &re) || re.Code != 400 {
		t.Errorf("PushBlob refused 400: %v, want a 400 that is not ErrTooLarge", err)
	}
}

// TestPushBusy: each request of a push answered 429 Too Many Requests is sent again, its
// body whole, once Options.Again has waited, which hears each refusal with its attempt
// and Retry-After; an error of Again ends the request, and without Again the 429 is the
// request's error.
func TestPushBusy(t *testing.T) {
	reg := testregistry.New(t)
	reg.Busy = map[string]int{"HEAD blobs": 1, "POST blobs": 1, "PATCH blobs": 1, "PUT blobs": 2, "PUT manifests": 1}
	reg.RetryAfter = "7"
	var heard []string
	c := NewClient(refOf(t, reg), Options{Again: func(ctx context.Context, err error, attempt int) error {
		var re *RequestError
		if !errors.As(err, &re) {
			t.Errorf("Again heard %v, want a *RequestError", err)
			return err
		}
		heard = append(heard, fmt.Sprintf("%s %d %d %s", re.Method, re.Code, attempt, re.RetryAfter))
		return nil
	}})
	ctx := context.Background()
	b := bytes.Repeat([]byte{'b'}, 250)
	d := Digest(b)
	if ok, err := c.HasBlob(ctx, d); err != nil || ok {
		t.Fatalf("HasBlob: %v, %v", ok, err)
	}
	if err := c.PushBlob(ctx, d, bytes.NewReader(b), int64(len(b)), 100); err != nil {
		t.Fatalf("PushBlob: %v", err)
	}
	if !bytes.Equal(reg.Blobs[d], b) || !reflect.DeepEqual(reg.Ranges, []string{"0-99", "100-199", "200-249"}) {
		t.Errorf("the registry holds %d bytes, taken at %q; want 250 at 0-99, 100-199, 200-249", len(reg.Blobs[d]), reg.Ranges)
	}
	if err := c.PutManifest(ctx, "latest", MediaTypeManifest, []byte("{}")); err != nil || string(reg.Manifest("latest")) != "{}" {
		t.Errorf("PutManifest: %v; the registry holds %q", err, reg.Manifest("latest"))
	}
	want := []string{"HEAD 429 1 7", "POST 429 1 7", "PATCH 429 1 7", "PUT 429 1 7", "PUT 429 2 7", "PUT 429 1 7"}
	if !slices.Equal(heard, want) {
		t.Errorf("Again heard %q, want %q", heard, want)
	}

	stop := errors.New("gave up")
	reg.Busy = map[string]int{"PUT manifests": 1}
	c = NewClient(refOf(t, reg), Options{Again: func(context.Context, error, int) error { return stop }})
	if err := c.PutManifest(ctx, "latest", MediaTypeManifest, []byte("{}")); !errors.Is(err, stop) {
		t.Errorf("PutManifest, Again failing: %v, want its error", err)
	}
	reg.Busy = map[string]int{"PUT manifests": 1}
	c, _ = newTestClient(refOf(t, reg), nil)
	var re *RequestError
	if err := c.PutManifest(ctx, "latest", MediaTypeManifest, []byte("{}")); !errors.As(err, &re) || re.Code != http.StatusTooManyRequests || re.RetryAfter != "7" {
		t.Errorf("PutManifest without Again: %v, want the *RequestError 429", err)
	}
}

// TestPushUnavailable: a request of a push that the registry answers 500, 502, 503 or 504,
// or whose token the token realm refuses so, or 429, is sent again once Options.Again has
// waited, which hears the refusal; one answered 501 is not, the same at every attempt.
func TestPushUnavailable(t *testing.T) {
	for _, code := range []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout, http.StatusTooManyRequests, http.StatusNotImplemented} {
		again := code != http.StatusNotImplemented
		for _, realm := range []bool{false, true} {
			reg := testregistry.New(t)
			reg.BusyStatus, reg.RetryAfter = code, "3"
			if realm {
				reg.TokenBusy = 1
			} else {
				reg.Busy = map[string]int{"PUT manifests": 1}
			}
			var heard []string
			c := NewClient(refOf(t, reg), Options{Again: func(ctx context.Context, err error, attempt int) error {
				var re *RequestError
				var te *TokenError
				switch {
				case errors.As(err, &re):
					heard = append(heard, fmt.Sprintf("registry %d %d %s", re.Code, attempt, re.RetryAfter))
				case errors.As(err, &te):
					heard = append(heard, fmt.Sprintf("realm %d %d %s", te.Code, attempt, te.RetryAfter))
				default:
					t.Errorf("Again heard %v", err)
				}
				return nil
			}})
			err := c.PutManifest(context.Background(), "latest", MediaTypeManifest, []byte("{}"))
			want := []string{fmt.Sprintf("registry %d 1 3", code)}
			if realm {
				want = []string{fmt.Sprintf("realm %d 1 3", code)}
			}
			switch {
			case again && (err != nil || string(reg.Manifest("latest")) != "{}" || !slices.Equal(heard, want)):
				t.Errorf("%d (token realm %v): %v, Again heard %q; want the manifest pushed once Again heard %q", code, realm, err, heard, want)
			case !again && (err == nil || Busy(err) || len(heard) != 0):
				t.Errorf("%d (token realm %v): %v, Again heard %q; want the refusal, not sent again", code, realm, err, heard)
			}
		}
	}
}

package fetch

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestDownload fetches an archive by URL after a 503 and a body cut short, whole and once; refuses a 404, naming
// the URL, without retrying; and refuses what is not an http(s) URL.
func TestDownload(t *testing.T) {
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n := gets.Add(1); {
		case r.URL.Path != "/a.tar":
			http.NotFound(w, r)
		case n == 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		case n == 2: // cut short: the next attempt starts again from the first byte
			w.Header().Set("Content-Length", "100")
			w.Write([]byte("the arch"))
		default:
			w.Write([]byte("the archive"))
		}
	}))
	t.Cleanup(srv.Close)
	f, err := os.Create(filepath.Join(t.TempDir(), "download"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := downloadFile(context.Background(), srv.URL+"/a.tar", f); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(f.Name()); string(data) != "the archive" || gets.Load() != 3 {
		t.Errorf("downloaded %q in %d GETs, want %q in 3", data, gets.Load(), "the archive")
	}
	gets.Store(10)
	var se *statusError
	if err := downloadFile(context.Background(), srv.URL+"/missing.tar", f); !errors.Is(err, ErrGone) || !errors.As(err, &se) || se.where != srv.URL+"/missing.tar" || gets.Load() != 11 {
		t.Errorf("downloadFile of a 404: %v after %d GETs, want one naming the URL after 1", err, gets.Load()-10)
	}
	for _, bad := range []string{"file:///etc/passwd", "ftp://host/a.tar", "/tmp/a.tar", "https:///a.tar"} {
		if err, ne := downloadFile(context.Background(), bad, f), (*notHTTPError)(nil); !errors.As(err, &ne) || ne.url != bad {
			t.Errorf("downloadFile(%s): %v, want an error naming it", bad, err)
		}
	}
	for _, bad := range []string{"http://alice:S3/cret@127.0.0.1:1/nope.tar", "https://alice:S3cret@/x", "http://alice:S3%zzcret@h/x"} {
		if err, ne := downloadFile(context.Background(), bad, f), (*notHTTPError)(nil); !errors.As(err, &ne) || strings.Contains(err.Error(), "S3") {
			t.Errorf("downloadFile(%s): %v, want an error naming it without its password", bad, err)
		}
	}
}

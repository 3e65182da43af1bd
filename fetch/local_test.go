package fetch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
)

// TestLocal reads a path as it is, downloads a URL to a temporary file that cleanup
// removes, and leaves no file behind a failed download.
func TestLocal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/a.tar" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte("the archive"))
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	if p, remote, cleanup, err := Local(ctx, "/srv/a.tar"); err != nil || p != "/srv/a.tar" || remote {
		t.Errorf("Local of a path: %q, %v, %v; want the path itself", p, remote, err)
	} else {
		cleanup()
	}
	p, remote, cleanup, err := Local(ctx, srv.URL+"/a.tar")
	if err != nil || !remote {
		t.Fatalf("Local of a URL: %q, %v, %v", p, remote, err)
	}
	if data, _ := os.ReadFile(p); string(data) != "the archive" {
		t.Errorf("downloaded %q, want %q", data, "the archive")
	}
	cleanup()
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("after cleanup, %s: %v; want it gone", p, err)
	}
	if _, _, _, err := Local(ctx, srv.URL+"/missing.tar"); err == nil {
		t.Error("Local of a 404: no error")
	}
}

package txn_test

import (
	"context"
	"errors"
	"testing"

	"pkg/repo"
	"pkg/txn"
)

// TestCheckCached: offline, a change is refused unless the cache holds each of its
// archives, and the refusal names what the cache holds in the place of each one missing:
// other versions (which an install may ask for, but not a sync, bound to its lockfile)
// and other archives of the same version.
func TestCheckCached(t *testing.T) {
	w := newWorld(t)
	v1 := addPackage(t, w.repo, "hello", "1.1")
	v2 := addPackage(t, w.repo, "hello", "1.2")
	tool := addPackage(t, w.repo, "tool", "1")
	ix := w.index("")
	f := &txn.Fetcher{Source: ix.Source, Jobs: 1}
	f.UseCache(w.cache, 0)
	if err := f.Fetch(context.Background(), []repo.Package{v1, tool}, nil); err != nil {
		t.Fatal(err)
	}
	republished := v1
	republished.SHA256 = "ab" + v1.SHA256[2:]
	for _, tt := range []struct {
		what   string
		pkgs   []repo.Package
		byLock bool
		want   string // "" for no error
	}{
		{"all cached", []repo.Package{v1, tool}, false, ""},
		{"another version cached", []repo.Package{v2, tool}, false,
			"offline: not in the cache: hello 1.2 (the cache holds hello 1.1: ask for hello=1.1)"},
		{"another version cached, from a lockfile", []repo.Package{v2}, true,
			"offline: not in the cache: hello 1.2"},
		{"another archive of the version, by the index", []repo.Package{republished}, false,
			"offline: not in the cache: hello 1.1 (sha256 " + republished.SHA256[:16] + "… by the saved index; the cache holds hello 1.1 with sha256 " +
				v1.SHA256[:16] + "…, another archive of it)"},
		{"another archive of the version", []repo.Package{republished}, true,
			"offline: not in the cache: hello 1.1 (sha256 " + republished.SHA256[:16] + "… by the lockfile; the cache holds hello 1.1 with sha256 " +
				v1.SHA256[:16] + "…, another archive of it)"},
	} {
		err := txn.CheckCached(w.cache, tt.pkgs, tt.byLock)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.what, err)
		case tt.want == "":
		case err == nil || err.Error() != tt.want || !errors.Is(err, txn.ErrNotCached):
			t.Errorf("%s: %v\nwant %s", tt.what, err, tt.want)
		}
	}
	// Offline, Fetch refuses before it fetches anything.
	f.Offline = true
	if err := f.Fetch(context.Background(), []repo.Package{tool, v2}, nil); !errors.Is(err, txn.ErrNotCached) {
		t.Errorf("offline Fetch of an uncached package: %v", err)
	}
}

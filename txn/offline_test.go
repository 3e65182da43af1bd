package txn_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"pkg/repo"
	"pkg/txn"
)

// TestMissingString checks the words of what the cache lacks, which pkg prints.
func TestMissingString(t *testing.T) {
	v2 := repo.Package{Name: "hello", Version: "1.2", SHA256: strings.Repeat("a", 64)}
	other := strings.Repeat("b", 64)
	for _, tt := range []struct {
		m    txn.Missing
		want string
	}{
		{txn.Missing{Package: v2, Versions: []string{"1.1"}}, "hello 1.2 (the cache holds hello 1.1: ask for hello=1.1)"},
		{txn.Missing{Package: v2, Versions: []string{"1.1"}, ByLock: true}, "hello 1.2"},
		{txn.Missing{Package: v2, Archives: []string{other}}, "hello 1.2 (sha256 aaaaaaaaaaaaaaaa… by the saved index; the cache holds hello 1.2 with sha256 bbbbbbbbbbbbbbbb…, another archive of it)"},
		{txn.Missing{Package: v2, Archives: []string{other, other}, ByLock: true}, "hello 1.2 (sha256 aaaaaaaaaaaaaaaa… by the lockfile; the cache holds hello 1.2 with sha256 bbbbbbbbbbbbbbbb…, bbbbbbbbbbbbbbbb…, other archives of it)"},
	} {
		err := &txn.NotCachedError{Missing: []txn.Missing{tt.m}}
		if got, want := err.Error(), "offline: not in the cache: "+tt.want; got != want {
			t.Errorf("Error() = %q, want %q", got, want)
		}
	}
	if got, want := (&txn.NotCachedError{Missing: []txn.Missing{{Package: v2}, {Package: v2}}}).Error(), "offline: not in the cache: hello 1.2, hello 1.2"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

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
	f := &txn.Fetcher{Source: ix.Source, Jobs: 1, Cache: w.cache}
	if err := f.Fetch(context.Background(), []repo.Package{v1, tool}, nil); err != nil {
		t.Fatal(err)
	}
	republished := v1
	republished.SHA256 = "ab" + v1.SHA256[2:]
	for _, tt := range []struct {
		what   string
		pkgs   []repo.Package
		byLock bool
		want   []txn.Missing // nil for no error
	}{
		{"all cached", []repo.Package{v1, tool}, false, nil},
		{"another version cached", []repo.Package{v2, tool}, false, []txn.Missing{{Package: v2, Versions: []string{"1.1"}}}},
		{"another version cached, from a lockfile", []repo.Package{v2}, true, []txn.Missing{{Package: v2, Versions: []string{"1.1"}, ByLock: true}}},
		{"another archive of the version, by the index", []repo.Package{republished}, false,
			[]txn.Missing{{Package: republished, Archives: []string{v1.SHA256}}}},
		{"another archive of the version", []repo.Package{republished}, true,
			[]txn.Missing{{Package: republished, Archives: []string{v1.SHA256}, ByLock: true}}},
	} {
		err := txn.CheckCached(w.cache, tt.pkgs, tt.byLock)
		var ne *txn.NotCachedError
		switch {
		case tt.want == nil && err != nil:
			t.Errorf("%s: %v", tt.what, err)
		case tt.want == nil:
		case !errors.As(err, &ne) || !reflect.DeepEqual(ne.Missing, tt.want):
			t.Errorf("%s: %#v\nwant %+v", tt.what, err, tt.want)
		}
	}
	// Offline, Fetch refuses before it fetches anything.
	f.Offline = true
	if err := f.Fetch(context.Background(), []repo.Package{tool, v2}, nil); !errors.As(err, new(*txn.NotCachedError)) {
		t.Errorf("offline Fetch of an uncached package: %v", err)
	}
}

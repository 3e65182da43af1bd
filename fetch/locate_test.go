package fetch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"pkg/repo"
)

// TestRelocate relocates lockfile URLs under a repository's URL to a mirror: those whose
// path under it, decoded, is a clean relative path become that path, others not under it
// stay as they are, and the rest are refused, naming the URL.
func TestRelocate(t *testing.T) {
	const from = "http://x/repo/"
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.json"), []byte(`{"format":1,"packages":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := quick(t, dir)
	for _, tt := range []struct{ archive, want string }{
		{from + "a.tar.gz", "a.tar.gz"},
		{from + "pool/a%20b-1.0.tar", "pool/a b-1.0.tar"},
		{from + "..a/b..", "..a/b.."},
		{"http://x/other/a.tar", "http://x/other/a.tar"},
		{from + "a.tar?sig=1", from + "a.tar?sig=1"},
	} {
		p, err := s.Relocate(repo.Package{Archive: tt.archive}, from)
		if err != nil || p.Archive != tt.want {
			t.Errorf("Relocate(%s) = %q, %v; want %q", tt.archive, p.Archive, err, tt.want)
		}
	}
	for _, tt := range []struct {
		path string
		why  error
		seg  string // for errPathSegment, the segment refused
	}{
		{"%2e%2e/%2e%2e/outside/a.tar.gz", errPathSegment, ".."},
		{"../a.tar", errPathSegment, ".."},
		{"a/%2E%2E/%2e%2e/b.tar", errPathSegment, ".."},
		{"./a.tar", errPathSegment, "."},
		{"a/%2e/b.tar", errPathSegment, "."},
		{"a//b.tar", errPathSegment, ""},
		{"dir/", errPathSegment, ""},
		{"a%2fb.tar", errPathSlash, ""},
		{"..%2F..%2Fa.tar", errPathSlash, ""},
		{"a%5Cb.tar", errPathSlash, ""},
		{`a\b.tar`, errPathByte, ""},
		{"a%00.tar", errPathByte, ""},
		{"%252e%252e/a.tar", errPathPercent, ""},
	} {
		archive := from + tt.path
		_, err := s.Relocate(repo.Package{Archive: archive}, from)
		var pe *pathError
		if !errors.As(err, &pe) || pe.archive != archive || pe.from != from || !errors.Is(err, tt.why) ||
			tt.why == errPathSegment && !segmentIs(err, tt.seg) {
			t.Errorf("Relocate(%s): %#v; want a pathError for %v %s", archive, err, tt.why, tt.seg)
		}
	}
	// A lockfile's repository may name any directory: one without index.json is refused.
	if _, err := quick(t, "/etc").Relocate(repo.Package{Archive: "file:///etc/shadow"}, "file:///etc/"); !errors.Is(err, ErrNoRepository) {
		t.Errorf("Relocate(file:///etc/shadow) to /etc: %v; want ErrNoRepository", err)
	}
	// Offline, no repository is read, so none is checked: a directory gone since the lock
	// was written is no error (Cache.Fetch then reads the cache alone).
	gone := filepath.Join(t.TempDir(), "gone")
	offline, err := NewSource(gone, Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := offline.Relocate(repo.Package{Archive: "file://" + gone + "/a.tar"}, "file://"+gone+"/"); err != nil || p.Archive != "a.tar" {
		t.Errorf("offline Relocate under a directory gone: %q, %v; want a.tar", p.Archive, err)
	}
}

// TestArchiveBeneath opens archives whose relative names would leave the repository, as no
// index or relocated lockfile holds them: each is refused without being read.
func TestArchiveBeneath(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ location, archive string }{
		{dir, "../outside/a.tar"},
		{dir, "/etc/passwd"},
		{dir, "file:///etc/passwd"}, // a lockfile's URL that Relocate did not make a path
		{dir, "file:///proc/self/environ"},
		{"http://127.0.0.1:1/deep/", "file:///etc/passwd"},
		{"http://127.0.0.1:1/deep/", "%2e%2e/outside/a.tar"},
		{"http://127.0.0.1:1/deep/", "../outside/a.tar"},
	} {
		body, err := quick(t, tt.location).openArchive(context.Background(), nil, repo.Package{Archive: tt.archive}, 0, nil)
		if err == nil {
			body.Close()
		}
		var out *outsideError
		if !errors.As(err, &out) || out.Archive != tt.archive {
			t.Errorf("openArchive(%s) from %s: %v", tt.archive, tt.location, err)
		}
	}
}

// segmentIs reports whether err refuses the path segment seg.
func segmentIs(err error, seg string) bool {
	se := (*segmentError)(nil)
	return errors.As(err, &se) && se.seg == seg
}

package fetch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
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
	for _, tt := range []struct{ path, why string }{
		{"%2e%2e/%2e%2e/outside/a.tar.gz", `segment ".."`},
		{"../a.tar", `segment ".."`},
		{"a/%2E%2E/%2e%2e/b.tar", `segment ".."`},
		{"./a.tar", `segment "."`},
		{"a/%2e/b.tar", `segment "."`},
		{"a//b.tar", `segment ""`},
		{"dir/", `segment ""`},
		{"a%2fb.tar", "encoded slash"},
		{"..%2F..%2Fa.tar", "encoded slash"},
		{"a%5Cb.tar", "encoded slash or backslash"},
		{`a\b.tar`, "backslash"},
		{"a%00.tar", "NUL"},
		{"%252e%252e/a.tar", "encoded percent sign"},
	} {
		archive := from + tt.path
		_, err := s.Relocate(repo.Package{Archive: archive}, from)
		if err == nil || !strings.Contains(err.Error(), "fetch: archive URL "+archive+": path under "+from+": ") ||
			!strings.Contains(err.Error(), tt.why) {
			t.Errorf("Relocate(%s): %v; want an error naming the URL and %q", archive, err, tt.why)
		}
	}
	// A lockfile's repository may name any directory: one without index.json is refused.
	if _, err := quick(t, "/etc").Relocate(repo.Package{Archive: "file:///etc/shadow"}, "file:///etc/"); !errors.Is(err, ErrNoRepository) {
		t.Errorf("Relocate(file:///etc/shadow) to /etc: %v; want ErrNoRepository", err)
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
		body, err := quick(t, tt.location).openArchive(context.Background(), nil, repo.Package{Archive: tt.archive}, 0)
		if err == nil {
			body.Close()
		}
		var out *outsideError
		if !errors.As(err, &out) || out.Archive != tt.archive {
			t.Errorf("openArchive(%s) from %s: %v", tt.archive, tt.location, err)
		}
	}
}

package main

import (
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"pkg/repo"
)

// reservedCases are archives with a member where a root keeps pkg's own: install refuses
// each, naming the first such member.
func reservedCases(t *testing.T) []struct {
	member  string
	archive []byte
} {
	tool := []ent{td("usr/"), td("usr/bin/"), moded(tf("usr/bin/tool", "#!/bin/sh\n"), 0o755)}
	return []struct {
		member  string
		archive []byte
	}{
		{".pkg", pax(t, append(tool, td(".pkg/"), tf(".pkg/db", "x"))...)},
		{"pkgs", pax(t, append(tool, td("pkgs/"), td("pkgs/other/"), tf("pkgs/other/x", "x"))...)},
		{"bin", pax(t, append(tool, tf("bin", "x"))...)},
		{"bin", pax(t, append(tool, tl("bin", "usr/bin"))...)},
	}
}

// TestRepoAddReserved: repo add, and an install of a local file, refuse an archive no
// install can install, naming the member, before anything is written: no index, no copy
// in the repository, nothing in the cache.
func TestRepoAddReserved(t *testing.T) {
	for _, c := range reservedCases(t) {
		base := t.TempDir()
		dir := filepath.Join(base, "repo")
		e := newEnv(t, base, dir)
		file := writeFile(t, base, "tool-1.0.tar", c.archive)
		want := `member "` + c.member + `": `
		_, stderr, code := e.pkg("repo", "add", dir, file, "--name", "tool", "--version", "1.0")
		if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "pkg's own place in a root") {
			t.Errorf("repo add of an archive with %s: exit %d, %q; want it refused naming the member", c.member, code, stderr)
		}
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("repo add of an archive with %s left %s (%v)", c.member, dir, err)
		}
		_, stderr, code = e.pkg("install", file)
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("install of a local archive with %s: exit %d, %q; want it refused naming the member", c.member, code, stderr)
		}
		if got := e.cachedNames(); len(got) != 0 {
			t.Errorf("install of a local archive with %s cached %v", c.member, got)
		}
	}
}

// TestInstallReservedCached: an archive of a repository not published by repo add (an
// index written otherwise) with a member where pkg keeps its own is refused by install, as
// it lands, naming the member. Its cache entry, which the member policy passed, is
// harmless: the next install is refused the same from it without downloading it again,
// nothing is installed, and cache prune removes it, as no root uses it.
func TestInstallReservedCached(t *testing.T) {
	base := t.TempDir()
	c := reservedCases(t)[1]
	addHostile(t, base, repo.Package{Name: "tool", Version: "1.0"}, c.archive)
	var gets atomic.Int32
	files := http.FileServer(http.Dir(filepath.Join(base, "repo")))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".tar") {
			gets.Add(1)
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	e := newEnv(t, base, srv.URL)
	e.initRoot()
	for i := range 2 {
		_, stderr, code := e.pkg("install", "tool")
		if code != 1 || !strings.Contains(stderr, `member "`+c.member+`": `) {
			t.Fatalf("install %d of an archive with %s: exit %d, %q; want it refused naming the member", i+1, c.member, code, stderr)
		}
	}
	if gets.Load() != 1 {
		t.Errorf("two refused installs downloaded the archive %d times, want once", gets.Load())
	}
	if got := e.list(); len(got) != 0 {
		t.Errorf("refused installs installed %v", got)
	}
	e.ok("cache", "prune")
	if got := e.cachedNames(); len(got) != 0 {
		t.Errorf("cache prune kept %v, which no root uses", got)
	}
}

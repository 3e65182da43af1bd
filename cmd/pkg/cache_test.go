package main

import (
	"os"
	"strings"
	"testing"
)

func TestCacheCleanCount(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	for _, tt := range []struct {
		fetch []string
		want  string
	}{
		{[]string{"libgreet"}, "removed 1 cached package, "},
		{[]string{"hello"}, "removed 2 cached packages, "},
		{nil, "removed 0 cached packages, 0 B\n"},
	} {
		if len(tt.fetch) > 0 {
			e.ok(append([]string{"fetch"}, tt.fetch...)...)
		}
		if out, _ := e.ok("cache", "clean"); !strings.HasPrefix(out, tt.want) {
			t.Errorf("cache clean after fetch %v: %q, want %q...", tt.fetch, out, tt.want)
		}
	}
}

// TestCacheMissing checks that the cache commands on a cache that does not exist say so and
// create nothing: a mistyped --cache makes no directory.
func TestCacheMissing(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	for _, args := range [][]string{{"cache", "list"}, {"cache", "clean"}} {
		out, stderr := e.ok(args...)
		if want := "pkg: note: nothing is cached: no cache at " + e.cache + "\n"; out != "" || stderr != want {
			t.Errorf("pkg %s: %q, %q; want no output and %q", strings.Join(args, " "), out, stderr, want)
		}
		if _, err := os.Stat(e.cache); !os.IsNotExist(err) {
			t.Fatalf("pkg %s made the cache: %v", strings.Join(args, " "), err)
		}
	}
}

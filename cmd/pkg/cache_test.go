package main

import (
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

package install

import (
	"strings"
	"testing"
)

// TestPrefixEntriesDirAfterFiles lists a directory after its files, as a tar may: the
// directory's entry keeps its member, not the empty one of a directory only implied.
func TestPrefixEntriesDirAfterFiles(t *testing.T) {
	es := prefixEntries("", 4, func(yield func(string, bool) bool) {
		_ = yield("usr/lib/x/a", false) && yield("usr/lib/x", true) && yield("usr/lib/x", true)
	})
	want := []prefixEntry{{"usr", "", true}, {"usr/lib", "", true}, {"usr/lib/x", "usr/lib/x", true}, {"usr/lib/x/a", "usr/lib/x/a", false}}
	if len(es) != len(want) {
		t.Fatalf("entries %v, want %v", es, want)
	}
	for i := range want {
		if es[i] != want[i] {
			t.Errorf("entry %d: %+v, want %+v", i, es[i], want[i])
		}
	}
}

// TestPrefixTop checks prefixTop against the first component of prefixPath.
func TestPrefixTop(t *testing.T) {
	for _, into := range []string{"", "share", "share/x", "node_modules/.pnpm/a@1.0.0/node_modules/a"} {
		for _, name := range []string{"a", "a/b", "bin", "bin/x", "package/.pkg/y"} {
			p := prefixPath(name, into)
			top, _, more := strings.Cut(p, "/")
			if gotTop, gotMore := prefixTop(name, into); gotTop != top || gotMore != more {
				t.Errorf("prefixTop(%q, %q) = %q, %v; want %q, %v", name, into, gotTop, gotMore, top, more)
			}
		}
	}
}

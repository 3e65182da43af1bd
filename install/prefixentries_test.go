package install

import "testing"

// TestPrefixEntriesDirAfterFiles lists a directory after its files, as a tar may: the
// directory's entry keeps its member, not the empty one of a directory only implied.
func TestPrefixEntriesDirAfterFiles(t *testing.T) {
	es := prefixEntries("", func(yield func(string, bool) bool) {
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

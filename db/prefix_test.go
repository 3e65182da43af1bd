package db

import (
	"path/filepath"
	"reflect"
	"testing"
)

// TestOwnersLinks records the owners of a directory, a file stack and a generated link
// with a pending roll-forward naming the links it moves, and reads them back, one key
// per path; a malformed value is refused rather than misread.
func TestOwnersLinks(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "db"))
	want := map[string]Owners{
		"lib":                        {Dir: true, Names: []string{"a", "b@1.0.0"}},
		"lib/x":                      {Names: []string{"b@1.0.0", "a"}},
		"lib/node_modules/.pnpm/a/x": {Link: "../../b@1.0.0/node_modules/b", Names: []string{"a@2.0.0"}},
	}
	pending := &Pending{Links: []string{"lib/node_modules/.pnpm/a/x"},
		OldLinks: map[string]OldLink{"lib/node_modules/.pnpm/a/x": {Target: "../../b@0.9.0/node_modules/b", Owner: "a@2.0.0"}}}
	if err := d.CommitRequested(nil, nil, nil, nil, &PrefixChange{Paths: want, Pending: pending}); err != nil {
		t.Fatal(err)
	}
	got, err := d.Owners([]string{"lib", "lib/x", "lib/node_modules/.pnpm/a/x", "none"})
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Owners = %+v, %v; want %+v", got, err, want)
	}
	if p, err := d.PrefixPending(); err != nil || !reflect.DeepEqual(p, pending) {
		t.Errorf("PrefixPending = %+v, %v; want %+v", p, err, pending)
	}
	for _, v := range []string{"l\x00a\x00", "lx", "l../x\x00", "q\x00"} {
		if o, err := decodeOwners([]byte(v)); err == nil {
			t.Errorf("decodeOwners(%q) = %+v, want an error", v, o)
		}
	}
}

package db

import (
	"maps"
	"path/filepath"
	"testing"
)

// TestRequested records requests, ignores one for a package not installed, and forgets
// the request of a package removed.
func TestRequested(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "db"))
	ps := []*Record{{Name: "app", Version: "1"}, {Name: "lib", Version: "1"}}
	if err := d.Commit(ps, []*FileList{writeFiles(t, d, nil), writeFiles(t, d, nil)}, nil); err != nil {
		t.Fatal(err)
	}
	if err := d.Request(map[string]string{"app": "app>=1", "ghost": "ghost"}); err != nil {
		t.Fatal(err)
	}
	if got, err := d.Requested(); err != nil || !maps.Equal(got, map[string]string{"app": "app>=1"}) {
		t.Errorf("Requested = %v, %v; want app alone", got, err)
	}
	if err := d.Request(map[string]string{"app": "app", "lib": "lib@1"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.Requested(); !maps.Equal(got, map[string]string{"app": "app", "lib": "lib@1"}) {
		t.Errorf("Requested after a second request = %v", got)
	}
	if err := d.Commit(nil, nil, []string{"app"}); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit([]*Record{{Name: "app", Version: "2"}}, []*FileList{writeFiles(t, d, nil)}, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.Requested(); !maps.Equal(got, map[string]string{"lib": "lib@1"}) {
		t.Errorf("Requested after app was removed and installed again as a dependency = %v", got)
	}
}

// TestCommitRequested records the requests with the packages, in the commit's transaction,
// ignoring those for packages the commit leaves uninstalled.
func TestCommitRequested(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "db"))
	ps := []*Record{{Name: "app", Version: "1"}, {Name: "lib", Version: "1"}}
	err := d.CommitRequested(ps, []*FileList{writeFiles(t, d, nil), writeFiles(t, d, nil)}, nil,
		map[string]string{"app": "app>=1", "gone": "gone"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := d.Requested(); err != nil || !maps.Equal(got, map[string]string{"app": "app>=1"}) {
		t.Errorf("Requested after CommitRequested = %v, %v", got, err)
	}
}

package db

import (
	"maps"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"pkg/repo"
)

// parsed returns texts, requirements by name, parsed, as Request takes them.
func parsed(t *testing.T, texts map[string]string) map[string]repo.Requirement {
	t.Helper()
	reqs := make(map[string]repo.Requirement, len(texts))
	for name, s := range texts {
		r, err := repo.ParseRequirement(s)
		if err != nil {
			t.Fatal(err)
		}
		reqs[name] = r
	}
	return reqs
}

// texts returns reqs, as Requested returns them, as their texts by name.
func texts(reqs map[string]repo.Requirement) map[string]string {
	m := make(map[string]string, len(reqs))
	for name, r := range reqs {
		m[name] = r.String()
	}
	return m
}

// TestRequested records requests, ignores one for a package not installed, and forgets
// the request of a package removed.
func TestRequested(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "db"))
	ps := []*Record{{Name: "app", Version: "1"}, {Name: "lib", Version: "1"}}
	if err := d.Commit(ps, []*FileList{writeFiles(t, d, nil), writeFiles(t, d, nil)}, nil); err != nil {
		t.Fatal(err)
	}
	if err := d.Request(parsed(t, map[string]string{"app": "app>=1", "ghost": "ghost"})); err != nil {
		t.Fatal(err)
	}
	if got, err := d.Requested(); err != nil || !maps.Equal(texts(got), map[string]string{"app": "app>=1"}) {
		t.Errorf("Requested = %v, %v; want app alone", got, err)
	}
	if err := d.Request(parsed(t, map[string]string{"app": "app", "lib": "lib@1"})); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.Requested(); !maps.Equal(texts(got), map[string]string{"app": "app", "lib": "lib@1"}) {
		t.Errorf("Requested after a second request = %v", got)
	}
	if err := d.Request(nil, "lib", "ghost"); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.Requested(); !maps.Equal(texts(got), map[string]string{"app": "app"}) {
		t.Errorf("Requested once lib is no longer asked for = %v", got)
	}
	if err := d.Request(parsed(t, map[string]string{"lib": "lib@1"})); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(nil, nil, []string{"app"}); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit([]*Record{{Name: "app", Version: "2"}}, []*FileList{writeFiles(t, d, nil)}, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.Requested(); !maps.Equal(texts(got), map[string]string{"lib": "lib@1"}) {
		t.Errorf("Requested after app was removed and installed again as a dependency = %v", got)
	}
}

// TestCommitRequested records the requests with the packages, in the commit's transaction,
// ignoring those for packages the commit leaves uninstalled.
func TestCommitRequested(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "db"))
	ps := []*Record{{Name: "app", Version: "1"}, {Name: "lib", Version: "1"}}
	err := d.CommitRequested(ps, []*FileList{writeFiles(t, d, nil), writeFiles(t, d, nil)}, nil,
		parsed(t, map[string]string{"app": "app>=1", "gone": "gone"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := d.Requested(); err != nil || !maps.Equal(texts(got), map[string]string{"app": "app>=1"}) {
		t.Errorf("Requested after CommitRequested = %v, %v", got, err)
	}
}

// TestRequestedText reads a requirement recorded as text, as every root before records it,
// parsed, and writes it back as the same bytes; one that does not parse is an error naming
// its package, not a request left out.
func TestRequestedText(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "db"))
	ps := []*Record{{Name: "app", Version: "1"}, {Name: "jq", Version: "1.7"}, {Name: "lib", Version: "1"}}
	if err := d.Commit(ps, []*FileList{writeFiles(t, d, nil), writeFiles(t, d, nil), writeFiles(t, d, nil)}, nil); err != nil {
		t.Fatal(err)
	}
	old := map[string]string{"app": "team/app>=1,<2", "jq": "jq@1.7", "lib": "lib"}
	put := func(m map[string]string) {
		t.Helper()
		err := d.update("put texts", func(tx *bolt.Tx) error {
			for name, s := range m {
				if err := tx.Bucket(requestedBucket).Put([]byte(name), []byte(s)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	stored := func() map[string]string {
		t.Helper()
		m := make(map[string]string)
		err := d.view(func(tx *bolt.Tx) error {
			return tx.Bucket(requestedBucket).ForEach(func(k, v []byte) error { m[string(k)] = string(v); return nil })
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	put(old)
	got, err := d.Requested()
	if err != nil || got["app"].Repo != "team" || len(got["app"].Constraints) != 2 || got["jq"].Constraints[0].Op != "@" || !maps.Equal(texts(got), old) {
		t.Fatalf("Requested of texts = %+v, %v", got, err)
	}
	put(map[string]string{"app": "", "jq": "", "lib": ""})
	if err := d.Request(got); err != nil {
		t.Fatal(err)
	}
	if m := stored(); !maps.Equal(m, old) {
		t.Errorf("written back = %q; want %q", m, old)
	}
	put(map[string]string{"lib": "lib>="})
	if _, err := d.Requested(); err == nil {
		t.Error("Requested of an unparsable record: no error")
	}
}

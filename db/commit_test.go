package db

import "testing"

// Commit is CommitRequested with no requests and no change to the prefix: the tests'
// commit of packages alone.
func (d *DB) Commit(ps []*Record, files []*FileList, remove []string) error {
	return d.CommitRequested(ps, files, remove, nil, nil)
}

// commitEmpty commits the package name 1, of no files.
func commitEmpty(t testing.TB, d *DB, name string) {
	t.Helper()
	if err := d.Commit([]*Record{{Name: name, Version: "1"}}, []*FileList{writeFiles(t, d, nil)}, nil); err != nil {
		t.Fatal(err)
	}
}

package db

// Commit is CommitRequested with no requests and no change to the prefix: the tests'
// commit of packages alone.
func (d *DB) Commit(ps []*Record, files []*FileList, remove []string) error {
	return d.CommitRequested(ps, files, remove, nil, nil)
}

package db

import (
	"maps"
	"slices"

	bolt "go.etcd.io/bbolt"
)

var (
	// requestedBucket maps the name of a package the user asked for to the requirement
	// they asked for it by ("jq", "jq>=1.6,<2"); a package installed only as a dependency
	// has no entry. Commit deletes a removed package's entry.
	requestedBucket = []byte("requested")
	// saidBucket holds the keys of the standing conditions pkg told the user about once.
	saidBucket = []byte("said")
)

// Requested returns the requirement each installed package was asked for by, by name;
// packages installed only as dependencies are not in it.
func (d *DB) Requested() (map[string]string, error) {
	reqs := make(map[string]string)
	err := d.view(func(tx *bolt.Tx) error {
		return forEach(tx, requestedBucket, func(k, v []byte) error {
			if get(tx, pkgsBucket, k) != nil {
				reqs[string(k)] = string(v)
			}
			return nil
		})
	})
	return reqs, err
}

// Request records that the user asked for each installed package of reqs, a name, by the
// requirement it maps to, replacing what was recorded; names not installed are ignored.
func (d *DB) Request(reqs map[string]string) error {
	return d.update("record requested packages", func(tx *bolt.Tx) error { return putRequests(tx, reqs) })
}

func putRequests(tx *bolt.Tx, reqs map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(reqs)) { // in order: see CommitRequested
		req := reqs[name]
		if tx.Bucket(pkgsBucket).Get([]byte(name)) == nil {
			continue
		}
		if err := tx.Bucket(requestedBucket).Put([]byte(name), []byte(req)); err != nil {
			return err
		}
	}
	return nil
}

package db

import (
	"fmt"
	"maps"
	"slices"

	bolt "go.etcd.io/bbolt"

	"pkg/repo"
)

var (
	// requestedBucket maps the key (Record.Key) of a package the user asked for to the requirement
	// they asked for it by, as its text ("jq", "jq>=1.6,<2"); a package installed only as
	// a dependency has no entry. CommitRequested deletes a removed package's entry.
	requestedBucket = []byte("requested")
	// saidBucket holds the keys of the standing conditions pkg told the user about once.
	saidBucket = []byte("said")
)

// Requested returns the requirement each installed package was asked for by, by key,
// parsed here once; packages installed only as dependencies are not in it. A recorded
// requirement that does not parse is an error naming its package.
func (d *DB) Requested() (map[string]repo.Requirement, error) {
	reqs := make(map[string]repo.Requirement)
	err := d.view(func(tx *bolt.Tx) error {
		return forEach(tx, requestedBucket, func(k, v []byte) error {
			if get(tx, pkgsBucket, k) == nil {
				return nil
			}
			var r repo.Requirement
			if err := r.UnmarshalText(v); err != nil {
				return fmt.Errorf("requested %s: %w", k, err)
			}
			reqs[string(k)] = r
			return nil
		})
	})
	return reqs, err
}

// Request records that the user asked for each installed package of reqs, a key
// (Record.Key), by the requirement it maps to, replacing what was recorded, and that the
// packages unasked (keys) are installed as dependencies alone: their requests go. Keys not
// installed are ignored.
func (d *DB) Request(reqs map[string]repo.Requirement, unasked ...string) error {
	return d.update("record requested packages", func(tx *bolt.Tx) error { return putRequests(tx, reqs, unasked) })
}

// putRequests writes each requirement of reqs as its text (repo.Requirement.MarshalText),
// the bytes Requested reads back, and deletes the requests of unasked.
func putRequests(tx *bolt.Tx, reqs map[string]repo.Requirement, unasked []string) error {
	for _, name := range slices.Sorted(slices.Values(unasked)) {
		if err := tx.Bucket(requestedBucket).Delete([]byte(name)); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(reqs)) { // in order: see CommitRequested
		if tx.Bucket(pkgsBucket).Get([]byte(name)) == nil {
			continue
		}
		text, err := reqs[name].MarshalText()
		if err != nil {
			return err
		}
		if err := tx.Bucket(requestedBucket).Put([]byte(name), text); err != nil {
			return err
		}
	}
	return nil
}

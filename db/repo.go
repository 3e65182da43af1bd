package db

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// reposBucket maps a repository's location to the JSON of its Repo.
var reposBucket = []byte("repos")

// Pin is the last signed index of a repository that the root accepted: a later index
// of that repository may not roll it back, and must verify with a key the root trusts
// for it, such as Keys (the root pinned the repository to them).
type Pin struct {
	Location string    `json:"location"`
	Name     string    `json:"name"`
	Version  uint64    `json:"version"`
	SHA256   string    `json:"sha256"`         // of the index's exact bytes
	KeyID    string    `json:"key"`            // the trusted key that verified it
	Keys     []string  `json:"keys,omitempty"` // the public keys that verified it, as package trust writes them
	Accepted time.Time `json:"accepted"`
}

// Repos returns the records of every repository the root accepted a signed index of.
func (d *DB) Repos() ([]Pin, error) {
	var rs []Pin
	err := d.view(func(tx *bolt.Tx) error {
		return forEach(tx, reposBucket, func(k, v []byte) error {
			var r Pin
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("repository %s: %w", k, err)
			}
			rs = append(rs, r)
			return nil
		})
	})
	return rs, err
}

// Repo returns the record of the repository at location, if the root has one.
func (d *DB) Repo(location string) (r Pin, ok bool, err error) {
	err = d.view(func(tx *bolt.Tx) error {
		v := get(tx, reposBucket, []byte(location))
		if v == nil {
			return nil
		}
		ok = true
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("repository %s: %w", location, err)
		}
		return nil
	})
	return r, ok, err
}

// PutRepo records r, replacing the record of the same location.
func (d *DB) PutRepo(r Pin) error {
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return d.update("record repository "+r.Location, func(tx *bolt.Tx) error {
		return tx.Bucket(reposBucket).Put([]byte(r.Location), v)
	})
}

// DeleteRepo deletes the record of the repository at location, if any.
func (d *DB) DeleteRepo(location string) error {
	return d.update("forget repository "+location, func(tx *bolt.Tx) error {
		return tx.Bucket(reposBucket).Delete([]byte(location))
	})
}

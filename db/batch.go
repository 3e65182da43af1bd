package db

import (
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// SetIntents records intents in one transaction, each replacing any earlier one for the
// same package.
func (d *DB) SetIntents(ins []Intent) error {
	vs := make([][]byte, len(ins))
	for i, in := range ins {
		v, err := json.Marshal(in)
		if err != nil {
			return err
		}
		vs[i] = v
	}
	return d.update(fmt.Sprintf("record %d intents", len(ins)), func(tx *bolt.Tx) error {
		for i, in := range ins {
			if err := tx.Bucket(intentsBucket).Put([]byte(in.Name), vs[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// CommitAll is Commit of several packages and Delete of others in one transaction: files[i]
// are those of ps[i].
func (d *DB) CommitAll(ps []*Package, files [][]File, remove []string) error {
	vs := make([][]byte, len(ps))
	for i, p := range ps {
		v, err := json.Marshal(p)
		if err != nil {
			return err
		}
		vs[i] = v
	}
	what := fmt.Sprintf("record %d packages", len(ps))
	if len(remove) > 0 {
		what += fmt.Sprintf(" and delete %d", len(remove))
	}
	return d.update(what, func(tx *bolt.Tx) error {
		for _, name := range remove {
			for _, b := range [][]byte{filesBucket, pkgsBucket, intentsBucket} {
				if err := tx.Bucket(b).Delete([]byte(name)); err != nil {
					return err
				}
			}
		}
		for i, p := range ps {
			if err := tx.Bucket(filesBucket).Put([]byte(p.Name), encodeFiles(files[i])); err != nil {
				return err
			}
			if err := tx.Bucket(pkgsBucket).Put([]byte(p.Name), vs[i]); err != nil {
				return err
			}
			if err := tx.Bucket(intentsBucket).Delete([]byte(p.Name)); err != nil {
				return err
			}
		}
		return nil
	})
}

package db

import (
	"maps"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// SaidState returns the state the condition key was in when the user was last told of it
// (PutSaid), or "" if they were not, or were told it ended. Said and SaidState share the
// bucket: a key Said recorded has the state "".
func (d *DB) SaidState(key string) (string, error) {
	d.mu.Lock()
	state, later := d.said[key]
	d.mu.Unlock()
	if later {
		return state, nil
	}
	err := d.view(func(tx *bolt.Tx) error {
		state = string(get(tx, saidBucket, []byte(key)))
		return nil
	})
	return state, err
}

// PutSaid records that the user was told of the condition key in state; "" records that it
// ended. In a database held by its command (Options.Hold), the next summed write (the
// command's commit; not a list's chunks written ahead, which a fall back to the last sum
// may lose) or Release records it: a transaction of its own would take bbolt's two
// fdatasyncs, and in a new root's database cost its commit the seal. A command cut short
// before then says it again.
func (d *DB) PutSaid(key, state string) error {
	d.mu.Lock()
	if d.hold {
		if d.said == nil {
			d.said = make(map[string]string)
		}
		d.said[key] = state
		d.mu.Unlock()
		return nil
	}
	d.mu.Unlock()
	return d.update("record what was said of "+key, func(tx *bolt.Tx) error { return putSaid(tx, key, state) })
}

// PutSaidWithCommit has the next CommitRequested, and no other write, record in its
// transaction that the user was told of the condition key in state, for a note said once
// the change is committed: a transaction of its own would take bbolt's two fdatasyncs. A
// commit that fails forgets it, but one failing after its transaction reached the file may
// have recorded it: where SaidState then reads it, the caller says the note.
func (d *DB) PutSaidWithCommit(key, state string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.commitSaid == nil {
		d.commitSaid = make(map[string]string)
	}
	d.commitSaid[key] = state
}

// putSaid records in tx that the user was told of the condition key in state, "" its end.
func putSaid(tx *bolt.Tx, key, state string) error {
	if state == "" {
		return tx.Bucket(saidBucket).Delete([]byte(key))
	}
	return tx.Bucket(saidBucket).Put([]byte(key), []byte(state))
}

// putSaidAll records in tx each key of said in its state (putSaid), in key order: what
// PutSaid left for a summed write (prepare), or PutSaidWithCommit for a commit.
func putSaidAll(tx *bolt.Tx, said map[string]string) error {
	for _, key := range slices.Sorted(maps.Keys(said)) {
		if err := putSaid(tx, key, said[key]); err != nil {
			return err
		}
	}
	return nil
}

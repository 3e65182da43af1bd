package db

import bolt "go.etcd.io/bbolt"

// saidBucket maps the key of a standing condition pkg told the user about to the state it
// was in when told.
var saidBucket = []byte("said")

// Said returns the state the condition key was in when the user was last told of it, or ""
// if they were not, or were told it ended.
func (d *DB) Said(key string) (string, error) {
	var state string
	err := d.view(func(tx *bolt.Tx) error {
		state = string(get(tx, saidBucket, []byte(key)))
		return nil
	})
	return state, err
}

// PutSaid records that the user was told of the condition key in state; "" records
// that it ended.
func (d *DB) PutSaid(key, state string) error {
	return d.update("record what was said of "+key, func(tx *bolt.Tx) error {
		if state == "" {
			return tx.Bucket(saidBucket).Delete([]byte(key))
		}
		return tx.Bucket(saidBucket).Put([]byte(key), []byte(state))
	})
}

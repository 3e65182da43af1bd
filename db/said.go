package db

import bolt "go.etcd.io/bbolt"

// SaidState returns the state the condition key was in when the user was last told of it
// (PutSaid), or "" if they were not, or were told it ended. Said and SaidState share the
// bucket: a key Said recorded has the state "".
func (d *DB) SaidState(key string) (string, error) {
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

package testfs

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// MarkFormat records format as the format of the database at path, in a write of bbolt's
// own (docs/formats.md: the meta bucket's format key), as a newer pkg would mark it.
func MarkFormat(t testing.TB, path string, format uint64) {
	t.Helper()
	b, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = b.Update(func(tx *bolt.Tx) error {
		m, err := tx.CreateBucketIfNotExists([]byte("meta"))
		if err != nil {
			return err
		}
		return m.Put([]byte("format"), binary.BigEndian.AppendUint64(nil, format))
	})
	if err := errors.Join(err, b.Close()); err != nil {
		t.Fatal(err)
	}
}

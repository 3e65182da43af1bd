package db

import (
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// The database records its format in metaBucket under formatKey: a number, 8 bytes
// big-endian, whose encoding never changes. A change that an older pkg would misread (a new
// encoding of a record, a record kept where an older pkg does not look) raises it; one an
// older pkg only ignores (a new bucket, a new JSON field) does not. A pkg refuses a
// database of a format newer than its own (*FormatError); one without the mark, written by
// a pkg from before marks, is read as ever and marked by its first write transaction.
var (
	metaBucket = []byte("meta")
	formatKey  = []byte("format")
)

// format is the newest format this pkg reads, which its write transactions mark: 1, file
// lists in the encoding of a prefix length per path (files.go) and intents kept as names
// (intents.go), with everything an unmarked database may hold.
const format = 1

// FormatError is returned by every transaction on a database of a format newer than this
// pkg reads: a newer pkg wrote it, and what it records could be misread.
type FormatError struct {
	Path   string // the database file
	Format uint64 // the format it records
	Newest uint64 // the newest format this pkg reads
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("open %s: format %d, newer than this pkg reads (%d)", e.Path, e.Format, e.Newest)
}

// errFormatMark is a DamagedError's cause for a format mark that is not 8 bytes.
var errFormatMark = errors.New("format mark is not 8 bytes")

// readFormat returns the format tx records, 0 where it records none.
func readFormat(tx *bolt.Tx) (uint64, error) {
	v := get(tx, metaBucket, formatKey)
	switch {
	case v == nil:
		return 0, nil
	case len(v) != 8:
		return 0, errFormatMark
	}
	return binary.BigEndian.Uint64(v), nil
}

// checkFormat refuses b where its format is newer than this pkg reads (a *FormatError) or
// its mark cannot be read (a *DamagedError).
func (d *DB) checkFormat(b *bolt.DB) error {
	return d.protect(func() error {
		return b.View(func(tx *bolt.Tx) error {
			f, err := readFormat(tx)
			switch {
			case err != nil:
				return d.damaged(err)
			case f > format:
				return &FormatError{Path: d.path, Format: f, Newest: format}
			}
			return nil
		})
	})
}

// mark records this pkg's format in tx where it records an older one or none, and where it
// records none and d did not create it, removes the markers a cut left (sweepMarkers):
// once for each database an older pkg wrote. The buckets exist.
func (d *DB) mark(tx *bolt.Tx) error {
	f, err := readFormat(tx)
	if err != nil || f >= format {
		return err
	}
	if f == 0 && !d.fresh {
		d.sweepMarkers(tx)
	}
	return tx.Bucket(metaBucket).Put(formatKey, binary.BigEndian.AppendUint64(nil, format))
}

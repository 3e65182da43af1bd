package db

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// doneKey holds, in prefixBucket beside a pending roll-forward, its stamp: the marker file
// whose presence says the roll-forward is done, so that a commit's links need no
// transaction of their own (FinishPrefix).
var doneKey = []byte("done")

// stamp names the marker of a pending roll-forward and the packages whose install time
// becomes the marker's (FinishPrefix's names).
type stamp struct {
	ID    uint64   `json:"id"`
	Names []string `json:"names"`
}

// newStamp returns the encoded stamp of a roll-forward stamping names, with an ID of its
// own: a marker left by an earlier roll-forward never stands for a later one.
func newStamp(names []string) ([]byte, error) {
	return json.Marshal(stamp{ID: rand.Uint64() | 1, Names: slices.Sorted(slices.Values(names))})
}

// marker is the name of the marker file of the stamp id, beside the database file.
func (d *DB) marker(id uint64) string {
	return fmt.Sprintf("%s.done-%016x", d.path, id)
}

// markDone says that the pending roll-forward is done without a transaction: it makes
// the marker file its record names beside the database, unsynced, which stands for
// FinishPrefix's transaction until the next write transaction does that work in its place
// and removes it (prepare). Readers meanwhile see no pending roll-forward and the
// packages installed at the marker's change time. False, with nothing done, for a record
// that names no marker (written by an older pkg), or where the filesystem has no room for
// one.
func (d *DB) markDone() (bool, error) {
	var s *stamp
	err := d.view(func(tx *bolt.Tx) (err error) {
		s, err = pendingStamp(tx)
		return err
	})
	if err != nil || s == nil {
		return false, err
	}
	f, err := d.openFile(d.marker(s.ID), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return true, nil
	}
	if full(err) { // no inode for it: the transaction, which the database's free pages may hold
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("mark the prefix done: %w", err)
	}
	return true, f.Close()
}

// pendingStamp returns the stamp of tx's pending roll-forward, nil if there is none or it
// has none.
func pendingStamp(tx *bolt.Tx) (*stamp, error) {
	v := get(tx, prefixBucket, doneKey)
	if v == nil || get(tx, prefixBucket, pendingKey) == nil {
		return nil, nil
	}
	s := new(stamp)
	if err := json.Unmarshal(v, s); err != nil {
		return nil, fmt.Errorf("pending prefix's stamp: %w", err)
	}
	return s, nil
}

// finished returns the stamp of tx's pending roll-forward and its marker's change time
// where the marker says it is done; nil otherwise (a stamp that cannot be read is taken
// for not done: the roll-forward runs again). d.mu is held.
func (d *DB) finished(tx *bolt.Tx) (*stamp, time.Time) {
	s, err := pendingStamp(tx)
	if err != nil || s == nil {
		return nil, time.Time{}
	}
	if d.doneID == s.ID {
		return s, d.doneAt
	}
	var st unix.Stat_t
	name := d.marker(s.ID)
	if d.dir != nil {
		err = unix.Fstatat(int(d.dir.Fd()), filepath.Base(name), &st, unix.AT_SYMLINK_NOFOLLOW)
	} else {
		err = unix.Lstat(name, &st)
	}
	if err != nil {
		return nil, time.Time{}
	}
	d.doneID, d.doneAt = s.ID, time.Unix(st.Ctim.Unix()).UTC()
	return s, d.doneAt
}

// stamped sets p's install time to at where s stamps it; s may be nil.
func (s *stamp) stamped(p *Record, at time.Time) {
	if s != nil && slices.Contains(s.Names, p.Key()) {
		p.Installed = at
	}
}

// finish does, in a write transaction, what a done roll-forward's marker stood for: its
// packages' install times set to the marker's, the pending record deleted, its stamp's ID
// kept under finishedKey; the marker is removed once the transaction committed (write). A
// stamp without a pending record (whose FinishPrefix an older pkg wrote) goes too. d.mu is
// held.
func (d *DB) finish(tx *bolt.Tx) error {
	b := tx.Bucket(prefixBucket)
	if b.Get(doneKey) == nil {
		return nil
	}
	s, at := d.finished(tx)
	if s == nil {
		if b.Get(pendingKey) != nil {
			return nil // not done
		}
		return b.Delete(doneKey)
	}
	if err := setInstalled(tx, s.Names, at); err != nil {
		return err
	}
	d.unmark = s.ID
	if err := b.Put(finishedKey, binary.BigEndian.AppendUint64(nil, s.ID)); err != nil {
		return err
	}
	if err := b.Delete(pendingKey); err != nil {
		return err
	}
	return b.Delete(doneKey)
}

// finishedKey holds, in prefixBucket, the ID of the stamp the last finish did the work of
// (8 bytes, big-endian): its marker may be left where a cut came between that
// transaction's commit and the marker's removal, until the next write transaction removes
// it (unmarkFinished).
var finishedKey = []byte("finished")

// unmarkFinished removes the marker of the stamp under finishedKey, which the committed
// database holds finished, and deletes the key; the marker's removal is not synced, as it
// stands for nothing. A removal that fails leaves the key for the next write. The stamp
// whose marker d removed after its commit (d.unmarked) costs no system call. It runs
// before finish, which may put the key anew. d.mu is held.
func (d *DB) unmarkFinished(tx *bolt.Tx) error {
	b := tx.Bucket(prefixBucket)
	v := b.Get(finishedKey)
	if v == nil {
		return nil
	}
	if len(v) == 8 {
		if id := binary.BigEndian.Uint64(v); id != d.unmarked {
			if err := d.remove(d.marker(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil
			}
		}
	}
	return b.Delete(finishedKey)
}

// sweepMarkers removes the markers beside the database but that of tx's pending
// roll-forward: every other one names a stamp that a transaction committed before tx
// finished (the stamp is written before its marker is made). It reads the directory, so
// mark calls it once, for a database an older pkg wrote, which kept no finishedKey. Best
// effort: a marker left is clutter that nothing reads. d.mu is held.
func (d *DB) sweepMarkers(tx *bolt.Tx) {
	var keep uint64
	if s, err := pendingStamp(tx); err != nil {
		return
	} else if s != nil {
		keep = s.ID
	}
	dir, err := d.openParent()
	if err != nil {
		return
	}
	names, _ := dir.Readdirnames(-1)
	dir.Close()
	prefix := filepath.Base(d.path) + ".done-"
	for _, name := range names {
		hex, ok := strings.CutPrefix(name, prefix)
		if !ok || len(hex) != 16 {
			continue
		}
		if id, err := strconv.ParseUint(hex, 16, 64); err == nil && id != keep && fmt.Sprintf("%016x", id) == hex {
			d.remove(d.marker(id))
		}
	}
}

// openParent opens the directory that holds the database file, to read.
func (d *DB) openParent() (*os.File, error) {
	if d.dir == nil {
		return os.Open(filepath.Dir(d.path))
	}
	fd, err := unix.Openat(int(d.dir.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: filepath.Dir(d.path), Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Dir(d.path)), nil
}

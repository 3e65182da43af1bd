package db

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"pkg/repo"
)

// rawFormat returns the format mark of the database at path, nil where it has none.
func rawFormat(t *testing.T, path string) []byte {
	t.Helper()
	b, err := bolt.Open(path, 0, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var v []byte
	if err := b.View(func(tx *bolt.Tx) error { v = append(v, get(tx, metaBucket, formatKey)...); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(v) == 0 {
		return nil
	}
	return v
}

// noop is a write transaction that changes nothing but what prepare does.
func noop(*bolt.Tx) error { return nil }

// TestFormatMarked checks that a new database records the format from its first write.
func TestFormatMarked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	d := open(t, path)
	if err := d.Request(map[string]repo.Requirement{"a": {Name: "a"}}); err != nil {
		t.Fatal(err)
	}
	if got, want := rawFormat(t, path), binary.BigEndian.AppendUint64(nil, format); !reflect.DeepEqual(got, want) {
		t.Errorf("format mark after the first write = %x, want %x", got, want)
	}
}

// olderDatabase writes at path a database as a pkg from before format marks left it: a
// package recorded, a roll-forward pending with the stamp pending, whose marker says it is
// done, and the markers of two stamps finished long ago, which a cut left.
func olderDatabase(t *testing.T, path string, pending uint64) (left []string) {
	t.Helper()
	stamp, err := json.Marshal(stamp{ID: pending, Names: []string{"old"}})
	if err != nil {
		t.Fatal(err)
	}
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		for _, name := range buckets {
			if string(name) == string(metaBucket) {
				continue
			}
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		rec, err := json.Marshal(Record{Name: "old", Version: "1"})
		if err != nil {
			return err
		}
		p := tx.Bucket(prefixBucket)
		return errors.Join(tx.Bucket(pkgsBucket).Put([]byte("old"), rec),
			p.Put(pendingKey, []byte(`{"new":["old"]}`)), p.Put(doneKey, stamp))
	})
	for _, id := range []uint64{pending, 0x11, 0x2223} {
		name := fmt.Sprintf("%s.done-%016x", path, id)
		if err := os.WriteFile(name, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if id != pending {
			left = append(left, name)
		}
	}
	return left
}

// TestFormatUnmarked checks that a database of a pkg from before format marks reads as
// before, and that its first write marks it and removes the markers a cut left, but the
// pending roll-forward's, which says it is done.
func TestFormatUnmarked(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "db")
	const pending = 0x4005
	left := olderDatabase(t, path, pending)
	d := open(t, path)
	if got, err := d.Get("old"); err != nil || got.Version != "1" {
		t.Fatalf("Get(old) of an unmarked database = %+v, %v", got, err)
	}
	if p, done, err := d.Prefix(); err != nil || p != nil && !done {
		t.Errorf("Prefix with its marker = %+v, %v; want none", p, err)
	}
	if got := rawFormat(t, path); got != nil {
		t.Fatalf("a read marked the database: %x", got)
	}
	// A write that finishes no roll-forward (WriteFiles') keeps the pending one's marker.
	if err := d.write("test", false, false, noop); err != nil {
		t.Fatal(err)
	}
	if got, want := rawFormat(t, path), binary.BigEndian.AppendUint64(nil, format); !reflect.DeepEqual(got, want) {
		t.Errorf("format mark after the first write = %x, want %x", got, want)
	}
	for _, name := range left {
		if _, err := os.Stat(name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("marker %s of a finished stamp after the first write: %v; want it removed", name, err)
		}
	}
	if _, err := os.Stat(d.marker(pending)); err != nil {
		t.Errorf("the pending roll-forward's marker after the first write: %v; want it kept", err)
	}
	if p, done, err := d.Prefix(); err != nil || p != nil && !done {
		t.Errorf("Prefix after the first write = %+v, %v; want none", p, err)
	}
}

// TestFormatNewer checks that a database of a newer format is refused by every read and
// write, with the repair's Unchecked too, and left as it is; and that a mark that cannot be
// read is damage.
func TestFormatNewer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	d := open(t, path)
	if err := d.Request(map[string]repo.Requirement{"a": {Name: "a"}}); err != nil {
		t.Fatal(err)
	}
	newer := binary.BigEndian.AppendUint64(nil, format+1)
	rawUpdate(t, path, func(tx *bolt.Tx) error { return tx.Bucket(metaBucket).Put(formatKey, newer) })
	for _, o := range []Options{{}, {Hold: true}, {Unchecked: true}, {NoCreate: true}} {
		d, err := Open(path, o)
		if err != nil {
			t.Fatal(err)
		}
		for op, err := range map[string]error{
			"List":    func() error { _, err := d.List(); return err }(),
			"Request": d.Request(map[string]repo.Requirement{"b": {Name: "b"}}),
		} {
			var fe *FormatError
			if !errors.As(err, &fe) || *fe != (FormatError{Path: path, Format: format + 1, Newest: format}) {
				t.Errorf("%s with %+v = %v; want a *FormatError of %s, format %d, newest %d", op, o, err, path, format+1, format)
			}
		}
		d.Release()
	}
	if got := rawFormat(t, path); !reflect.DeepEqual(got, newer) {
		t.Errorf("format mark after the refused write = %x, want %x", got, newer)
	}

	rawUpdate(t, path, func(tx *bolt.Tx) error { return tx.Bucket(metaBucket).Put(formatKey, []byte{1}) })
	if _, err := open(t, path).List(); !errors.Is(err, errFormatMark) || !errors.As(err, new(*DamagedError)) {
		t.Errorf("List of a database with a 1-byte format mark = %v; want a *DamagedError of errFormatMark", err)
	}
}

// TestFormatDamaged: a database whose pages are not those its last commit left is
// damaged, whatever its format mark reads: a mark damaged to read above this pkg's format
// is a *DamagedError, which the repair replaces, not a *FormatError, which it refuses.
func TestFormatDamaged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	if err := open(t, path).Request(map[string]repo.Requirement{"a": {Name: "a"}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mark := append(slices.Clone(formatKey), binary.BigEndian.AppendUint64(nil, format)...)
	if bytes.Count(b, mark) == 0 {
		t.Fatalf("no format mark %x in %s", mark, path)
	}
	b = bytes.ReplaceAll(b, mark, append(slices.Clone(formatKey), binary.BigEndian.AppendUint64(nil, format+1)...))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = open(t, path).List()
	if de := (*DamagedError)(nil); !errors.As(err, &de) || de.Path != path || errors.As(err, new(*FormatError)) {
		t.Errorf("List of a database whose mark was damaged to read %d: %v; want a *DamagedError of %s", format+1, err, path)
	}
}

// TestMarkerLeftByCut checks that the marker of a roll-forward whose finish committed, and
// which a cut then left, is removed by the next write transaction, and the stamp forgotten.
func TestMarkerLeftByCut(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "db")
	d := open(t, path)
	if err := d.CommitRequested([]*Record{{Name: "a", Version: "1"}}, []*FileList{writeFiles(t, d, nil)}, nil, nil,
		&PrefixChange{Pending: &Pending{New: []string{"a"}}, Stamp: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	if err := d.FinishPrefix([]string{"a"}, time.Now(), func(bool) error { return nil }); err != nil {
		t.Fatal(err)
	}
	markers, _ := filepath.Glob(filepath.Join(dir, "db.done-*"))
	if len(markers) != 1 {
		t.Fatalf("markers %v after FinishPrefix, want one", markers)
	}
	if err := d.update("finish", noop); err != nil {
		t.Fatal(err)
	}
	// The cut: the process ends once the finish committed, before the marker's removal.
	if err := os.WriteFile(markers[0], nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d = open(t, path)
	if p, done, err := d.Prefix(); err != nil || p != nil && !done {
		t.Errorf("Prefix with a marker left = %+v, %v; want none", p, err)
	}
	if err := d.update("next", noop); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(markers[0]); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the marker left after the next write: %v; want it removed", err)
	}
	if err := d.view(func(tx *bolt.Tx) error {
		if v := get(tx, prefixBucket, finishedKey); v != nil {
			t.Errorf("finished stamp %x kept after the next write", v)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

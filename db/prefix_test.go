package db

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// TestOwnersLinks records the owners of a directory, a file stack and a generated link
// with a pending roll-forward naming the links it moves, and reads them back, one key
// per path; a malformed value is refused rather than misread.
func TestOwnersLinks(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "db"))
	want := map[string]Owners{
		"lib":                        {Dir: true, Names: []string{"a", "b@1.0.0"}},
		"lib/x":                      {Names: []string{"b@1.0.0", "a"}},
		"lib/node_modules/.pnpm/a/x": {Link: "../../b@1.0.0/node_modules/b", Names: []string{"a@2.0.0"}},
	}
	pending := &Pending{Links: []string{"lib/node_modules/.pnpm/a/x"},
		OldLinks: map[string]OldLink{"lib/node_modules/.pnpm/a/x": {Target: "../../b@0.9.0/node_modules/b", Owner: "a@2.0.0"}}}
	if err := d.CommitRequested(nil, nil, nil, nil, &PrefixChange{Paths: want, Pending: pending}); err != nil {
		t.Fatal(err)
	}
	got, err := d.Owners([]string{"lib", "lib/x", "lib/node_modules/.pnpm/a/x", "none"})
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Owners = %+v, %v; want %+v", got, err, want)
	}
	if p, done, err := d.Prefix(); err != nil || done || !reflect.DeepEqual(p, pending) {
		t.Errorf("Prefix = %+v, %v; want %+v", p, err, pending)
	}
	for _, v := range []string{"l\x00a\x00", "lx", "l../x\x00", "q\x00"} {
		if o, err := decodeOwners([]byte(v)); err == nil {
			t.Errorf("decodeOwners(%q) = %+v, want an error", v, o)
		}
	}
}

// TestPrefixDone: a commit's roll-forward finished by its marker stands finished without a
// write of its own or a sync: its record done (until the next write forgets it), and its stamped packages installed at
// the marker's time, which the next write transaction records, removing the marker; a
// record with no stamp (an older pkg's) is finished after its links are synced, by a
// transaction.
func TestPrefixDone(t *testing.T) {
	dir := t.TempDir()
	d := open(t, filepath.Join(dir, "db"))
	at := time.Unix(1700000000, 0).UTC()
	p := &Record{Name: "a", Version: "1", Installed: at}
	pending := &Pending{New: []string{"a"}}
	if err := d.CommitRequested([]*Record{p}, []*FileList{writeFiles(t, d, nil)}, nil, nil,
		&PrefixChange{Pending: pending, Stamp: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	if got, done, err := d.Prefix(); err != nil || done || !reflect.DeepEqual(got, pending) {
		t.Fatalf("Prefix before FinishPrefix = %+v, %v; want %+v", got, err, pending)
	}
	var markers []string // as synced finds them: on btrfs one sync makes them durable with the links
	if err := d.FinishPrefix([]string{"a"}, time.Now(), func(marked bool) error {
		if !marked {
			t.Error("synced told a marked record is not")
		}
		markers, _ = filepath.Glob(filepath.Join(dir, "db.done-*"))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(markers) != 1 {
		t.Fatalf("markers %v when synced, want one", markers)
	}
	var st unix.Stat_t
	if err := unix.Stat(markers[0], &st); err != nil {
		t.Fatal(err)
	}
	stamp := time.Unix(st.Ctim.Unix()).UTC()
	check := func(when string) {
		t.Helper()
		if got, done, err := d.Prefix(); err != nil || got != nil && !done {
			t.Errorf("%s: Prefix = %+v, %v; want none", when, got, err)
		}
		recs, files, err := d.Installed("a")
		if err != nil || len(recs) != 1 || len(files) != 1 || !recs[0].Installed.Equal(stamp) {
			t.Fatalf("%s: Installed = %+v, %v; want a installed at %v", when, recs, err, stamp)
		}
		if got, err := d.Get("a"); err != nil || !got.Installed.Equal(stamp) {
			t.Errorf("%s: Get = %+v, %v; want installed at %v", when, got, err, stamp)
		}
		if got, err := d.List(); err != nil || len(got) != 1 || !got[0].Installed.Equal(stamp) {
			t.Errorf("%s: List = %+v, %v; want installed at %v", when, got, err, stamp)
		}
	}
	check("marked")
	if got, done, err := d.Prefix(); err != nil || !done || !reflect.DeepEqual(got, pending) {
		t.Errorf("Prefix with its marker = %+v, %v, %v; want the record, done", got, done, err)
	}
	if err := d.SetIntents([]Intent{{Op: "install", Name: "b", Staging: "s"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(markers[0]); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the marker after the next write: %v; want it removed", err)
	}
	check("recorded")
	if got, done, err := d.Prefix(); err != nil || got != nil || done {
		t.Errorf("Prefix after the next write = %+v, %v, %v; want none", got, done, err)
	}
	if err := d.view(func(tx *bolt.Tx) error {
		if v := get(tx, prefixBucket, doneKey); v != nil {
			t.Errorf("stamp %q left after the next write", v)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// No stamp: as an older pkg wrote it.
	if err := d.CommitRequested(nil, nil, nil, nil, &PrefixChange{Pending: pending}); err != nil {
		t.Fatal(err)
	}
	if err := d.update("drop the stamp", func(tx *bolt.Tx) error { return tx.Bucket(prefixBucket).Delete(doneKey) }); err != nil {
		t.Fatal(err)
	}
	if got, done, err := d.Prefix(); err != nil || got == nil || done {
		t.Errorf("Prefix of a record without a stamp = %+v, %v; want it", got, err)
	}
	synced := false
	if err := d.FinishPrefix([]string{"a"}, at, func(marked bool) error { synced = !marked; return nil }); err != nil || !synced {
		t.Errorf("FinishPrefix of a record without a stamp: %v, synced %v; want its links synced first", err, synced)
	}
	if got, done, err := d.Prefix(); err != nil || got != nil && !done {
		t.Errorf("Prefix after FinishPrefix = %+v, %v; want none", got, err)
	}
	if got, err := d.Get("a"); err != nil || !got.Installed.Equal(at) {
		t.Errorf("Get after FinishPrefix = %+v, %v; want installed at %v", got, err, at)
	}
}

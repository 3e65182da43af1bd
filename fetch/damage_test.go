package fetch

import (
	"archive/tar"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestDamagedEntry damages a cached tar and checks that Members reports it and removes the
// entry, that Fetch then downloads it again, and that offline Fetch says what happened.
func TestDamagedEntry(t *testing.T) {
	archive, p := testArchive(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, p.Archive), archive, 0o644); err != nil {
		t.Fatal(err)
	}
	online, err := NewSource(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	offline, err := NewSource(dir, Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	cacheDir := filepath.Join(t.TempDir(), "cache")
	open := func() *Cache { // a new Cache, as a new process would open it, checks again
		c, err := OpenCache(cacheDir)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := open()
	if err := fetchOne(c, online, p); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(c.Path(p.SHA256))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := c.Members(p.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	var first int64 = -1 // the data of the first file, which the spot check always hashes
	for _, m := range ms {
		if m.Type == tar.TypeReg && m.Size > 0 {
			first = m.Offset
			break
		}
	}
	damage := func() {
		bad := append([]byte(nil), good...)
		bad[first] ^= 1
		if err := os.WriteFile(c.Path(p.SHA256), bad, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	damage()
	if _, err := c.Members(p.SHA256); err != nil {
		t.Errorf("Members of an entry this Cache checked before: %v; want it checked once", err)
	}
	c = open()
	if _, err := c.Members(p.SHA256); !errors.Is(err, ErrDamaged) {
		t.Fatalf("Members of a damaged entry: %v, want ErrDamaged", err)
	}
	if c.Has(p.SHA256) {
		t.Error("damaged entry still in the cache")
	}
	if err := fetchOne(c, online, p); err != nil {
		t.Fatalf("Fetch after damage: %v", err)
	}
	checkEntry(t, c, p, testFiles())

	damage()
	c = open()
	err = fetchOne(c, offline, p)
	if !errors.Is(err, ErrDamaged) || !errors.Is(err, ErrOffline) {
		t.Errorf("offline Fetch of a damaged entry: %v, want ErrDamaged and ErrOffline", err)
	}
	checkEmpty(t, c)
}

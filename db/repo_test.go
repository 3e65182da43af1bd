package db

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestRepo records, replaces, reopens and deletes a repository's accepted index.
func TestRepo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	d := open(t, path)
	const loc = "https://example.com/repo/"
	if _, ok, err := d.Repo(loc); ok || err != nil {
		t.Fatalf("Repo of an empty database: %v, %v", ok, err)
	}
	r := Pin{Location: loc, Name: "demo", Version: 3, SHA256: "ab", KeyID: "0011223344556677",
		Keys: []string{"pkg-ed25519:AAAA", "pkg-ed25519:BBBB"}, Accepted: time.Unix(1700000000, 0).UTC()}
	for _, v := range []uint64{3, 4} {
		r.Version = v
		if err := d.PutRepo(r); err != nil {
			t.Fatal(err)
		}
	}
	d = open(t, path)
	if got, ok, err := d.Repo(loc); !ok || err != nil || !reflect.DeepEqual(got, r) {
		t.Errorf("Repo after reopening = %+v, %v, %v; want %+v", got, ok, err, r)
	}
	if _, ok, _ := d.Repo("https://example.com/other/"); ok {
		t.Error("Repo of another location found a record")
	}
	if err := d.DeleteRepo(loc); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := d.Repo(loc); ok || err != nil {
		t.Errorf("Repo after DeleteRepo: %v, %v", ok, err)
	}
	if err := d.Check(); err != nil {
		t.Error(err)
	}
}

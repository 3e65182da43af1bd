package db

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func open(t *testing.T, path string) *DB {
	t.Helper()
	d, err := Open(path, Options{Owner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestCommitListFilesDelete(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "db"))
	defer d.Close()
	p := &Package{Name: "hello", Version: "1.2.0", SHA256: "ab", Depends: []string{"libgreet>=1"}, Files: 2, Size: 10,
		Installed: time.Unix(1700000000, 0).UTC()}
	files := []File{{Path: "z", Type: '0', Mode: 0o644, Size: 10}, {Path: "a", Type: '5', Mode: 0o755}}
	if err := d.SetIntent(Intent{Op: "install", Name: "hello", Staging: "s", Inode: 7}); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(p, files); err != nil {
		t.Fatal(err)
	}
	got, err := d.Get("hello")
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Errorf("Get = %+v, %v; want %+v", got, err, p)
	}
	gotFiles, err := d.Files("hello")
	want := []File{files[1], files[0]}
	if err != nil || !reflect.DeepEqual(gotFiles, want) {
		t.Errorf("Files = %+v, %v; want %+v", gotFiles, err, want)
	}
	if ins, _ := d.Intents(); len(ins) != 0 {
		t.Errorf("Commit left intents %+v", ins)
	}
	if err := d.Delete("hello"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get("hello"); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Get after Delete: %v, want ErrNotInstalled", err)
	}
	if ps, _ := d.List(); len(ps) != 0 {
		t.Errorf("List after Delete = %+v", ps)
	}
	if err := d.Check(); err != nil {
		t.Error(err)
	}
}

func TestIntents(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "db"))
	defer d.Close()
	in := Intent{Op: "remove", Name: "x", Staging: ".pkg/trash/x.1"}
	if err := d.SetIntent(in); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.Intents(); !reflect.DeepEqual(got, []Intent{in}) {
		t.Errorf("Intents = %+v", got)
	}
	if err := d.ClearIntent("x"); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.Intents(); len(got) != 0 {
		t.Errorf("Intents after clear = %+v", got)
	}
}

// TestLockWaits holds the database open and checks that a second Open says whom it waits
// for and gives up after its timeout, naming the holder.
func TestLockWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	d := open(t, path)
	defer d.Close()
	var holder string
	_, err := Open(path, Options{Timeout: 200 * time.Millisecond, Waiting: func(h string) { holder = h }})
	if err == nil || !strings.Contains(err.Error(), "locked by pid") {
		t.Errorf("second Open: %v, want a lock error naming the holder", err)
	}
	if !strings.Contains(holder, "(test)") {
		t.Errorf("Waiting got holder %q, want the owner's description", holder)
	}
}

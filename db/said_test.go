package db

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"pkg/internal/testfs"
)

// TestSaidState records, replaces, reopens and forgets what the user was told of a condition.
func TestSaidState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	d := open(t, path)
	const key = "index https://example.com/repo/"
	if got, err := d.SaidState(key); got != "" || err != nil {
		t.Fatalf("Said of an empty database: %q, %v", got, err)
	}
	for _, state := range []string{"unsigned", "signed by 0011223344556677"} {
		if err := d.PutSaid(key, state); err != nil {
			t.Fatal(err)
		}
	}
	d = open(t, path)
	if got, err := d.SaidState(key); got != "signed by 0011223344556677" || err != nil {
		t.Errorf("Said after reopening = %q, %v", got, err)
	}
	if got, _ := d.SaidState("copy"); got != "" {
		t.Errorf("Said of another key = %q", got)
	}
	if err := d.PutSaid(key, ""); err != nil {
		t.Fatal(err)
	}
	if got, err := d.SaidState(key); got != "" || err != nil {
		t.Errorf("Said after the condition ended = %q, %v", got, err)
	}
}

// TestSaidWithCommit: in a new root's database held by its command, what was said is
// recorded by the command's commit, whose one fdatasync (seal) is then the only one, or
// at Release where no write came; SaidState reads it back meanwhile. In a database with
// a commit too, it rides on the next summed write or on Release.
func TestSaidWithCommit(t *testing.T) {
	if dir := os.Getenv("PKG_DB_SAID"); dir != "" { // the process strace watches
		d := openHeld(t, filepath.Join(dir, "db"))
		if err := d.PutSaid("k", "a"); err != nil {
			t.Fatal(err)
		}
		commitEmpty(t, d, "a")
		if err := d.Release(); err != nil {
			t.Fatal(err)
		}
		return
	}
	dir := testfs.Mount(t, "xfs")
	lines := straceSelf(t, "PKG_DB_SAID", dir, "-y", "-e", "trace=fsync,fdatasync")
	if calls := testfs.SyncCalls(lines, dir); !reflect.DeepEqual(calls, map[string]int{"fdatasync": 1}) {
		t.Errorf("a note said before a new root's first commit: syncs = %v, want one fdatasync:\n%s", calls, strings.Join(lines, "\n"))
	}
	if got, err := open(t, filepath.Join(dir, "db")).SaidState("k"); got != "a" || err != nil {
		t.Errorf("SaidState after the commit = %q, %v; want a", got, err)
	}

	path := filepath.Join(dir, "alone")
	d := openHeld(t, path)
	if err := d.PutSaid("k", "b"); err != nil {
		t.Fatal(err)
	}
	if got, err := d.SaidState("k"); got != "b" || err != nil {
		t.Errorf("SaidState before any write = %q, %v; want b", got, err)
	}
	if err := d.Release(); err != nil {
		t.Fatal(err)
	}
	if got, err := open(t, path).SaidState("k"); got != "b" || err != nil {
		t.Errorf("SaidState after Release = %q, %v; want b", got, err)
	}
	// In a database with a commit, too, what was said rides on the next summed write, or on
	// Release where none comes: never a transaction of its own before it.
	d = openHeld(t, path)
	before := lastTxID(t, d)
	if err := d.PutSaid("k", ""); err != nil {
		t.Fatal(err)
	}
	if got, err := d.SaidState("k"); got != "" || err != nil {
		t.Errorf("SaidState of the holder before a write = %q, %v; want the end it was told", got, err)
	}
	commitEmpty(t, d, "b")
	if got, err := open(t, path).SaidState("k"); got != "" || err != nil {
		t.Errorf("another reader's SaidState after the commit = %q, %v; want the end recorded with it", got, err)
	}
	if after := lastTxID(t, d); after != before+1 {
		t.Errorf("the commit after PutSaid took transactions %d to %d: want one, the commit's", before, after)
	}
	if err := d.PutSaid("k", "c"); err != nil {
		t.Fatal(err)
	}
	if err := d.Release(); err != nil {
		t.Fatal(err)
	}
	if got, err := open(t, path).SaidState("k"); got != "c" || err != nil {
		t.Errorf("SaidState after Release = %q, %v; want c", got, err)
	}
}

// TestPutSaidWithCommit: what PutSaidWithCommit leaves is recorded by the next commit's
// transaction, by no other write before it, and by that commit alone.
func TestPutSaidWithCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	d := openHeld(t, path)
	defer d.Release()
	commitEmpty(t, d, "a")
	d.PutSaidWithCommit("path", "/r/bin")
	if err := d.PutRepo(Pin{Location: "https://example.com/repo/"}); err != nil { // a write of its own
		t.Fatal(err)
	}
	if got, err := open(t, path).SaidState("path"); got != "" || err != nil {
		t.Errorf("SaidState after another write = %q, %v; want nothing recorded before the commit", got, err)
	}
	commitEmpty(t, d, "b")
	if got, err := open(t, path).SaidState("path"); got != "/r/bin" || err != nil {
		t.Errorf("SaidState after the commit = %q, %v; want /r/bin", got, err)
	}
	if err := d.PutSaid("path", ""); err != nil {
		t.Fatal(err)
	}
	commitEmpty(t, d, "c")
	if got, err := open(t, path).SaidState("path"); got != "" || err != nil {
		t.Errorf("SaidState after a later commit = %q, %v; want the first commit alone to record it", got, err)
	}
}

// TestPutSaidWithCommitFailed: what PutSaidWithCommit leaves is the next commit's alone,
// even where that commit fails before its transaction (a record json cannot encode): no
// later commit records it, nor one after a Release.
func TestPutSaidWithCommitFailed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	d := openHeld(t, path)
	defer d.Release()
	unencodable := &Record{Name: "a", Version: "1", Installed: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
	d.PutSaidWithCommit("path", "/r/bin")
	if err := d.Commit([]*Record{unencodable}, []*FileList{writeFiles(t, d, nil)}, nil); err == nil {
		t.Fatal("Commit of a record dated past 9999 succeeded")
	}
	commitEmpty(t, d, "b")
	if got, err := open(t, path).SaidState("path"); got != "" || err != nil {
		t.Errorf("SaidState after a later commit = %q, %v; want nothing: the failed commit's note is not said", got, err)
	}
	d.PutSaidWithCommit("path", "/r/bin")
	if err := d.Release(); err != nil {
		t.Fatal(err)
	}
	commitEmpty(t, d, "c")
	if got, err := open(t, path).SaidState("path"); got != "" || err != nil {
		t.Errorf("SaidState after a commit past Release = %q, %v; want nothing", got, err)
	}
}

// TestSaidNotAhead: what PutSaid leaves rides on a summed write, the commit, not on the
// transactions that write a long file list ahead of it, which a database that falls back
// to its last sum may lose.
func TestSaidNotAhead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	d := openHeld(t, path)
	defer d.Release()
	commitEmpty(t, d, "a")
	if err := d.PutSaid("k", "v"); err != nil {
		t.Fatal(err)
	}
	l := writeFiles(t, d, manyFiles("big", aheadFiles))
	if l.gen == 0 {
		t.Fatal("the list was not written ahead")
	}
	if got, err := open(t, path).SaidState("k"); got != "" || err != nil {
		t.Errorf("SaidState after the list written ahead = %q, %v; want nothing before the commit", got, err)
	}
	if err := d.Commit([]*Record{{Name: "big", Version: "1"}}, []*FileList{l}, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := open(t, path).SaidState("k"); got != "v" || err != nil {
		t.Errorf("SaidState after the commit = %q, %v; want v", got, err)
	}
}

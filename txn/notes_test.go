package txn_test

import (
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"pkg/internal/testfs"
)

// lastTx returns the id of the last transaction committed to the database of the root at dir.
func lastTx(t *testing.T, dir string) int {
	t.Helper()
	b, err := bolt.Open(filepath.Join(dir, ".pkg", "db"), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var id int
	b.View(func(tx *bolt.Tx) error { id = int(tx.ID()); return nil })
	return id
}

// TestPathNoteCommitted: the note that a root's bin/ is not on PATH, due once an install
// puts commands there, is recorded by the install's commit, not by a transaction after
// it: a new root's first install writes as many transactions as a quiet one's, which
// records no note; and the note is not said again.
func TestPathNoteCommitted(t *testing.T) {
	w := newWorld(t)
	addPackage(t, w.repo, "tool", "1")
	addPackage(t, w.repo, "other", "1")
	base := t.TempDir()
	noted, quiet := filepath.Join(base, "noted"), filepath.Join(base, "quiet")
	if out := w.installNoted(quiet, "/usr/bin", true, "tool"); out.OffPath != filepath.Join(quiet, "bin") {
		t.Fatalf("quiet install: said %q, want %q", out.OffPath, filepath.Join(quiet, "bin"))
	}
	if out := w.installNoted(noted, "/usr/bin", false, "tool"); out.OffPath != filepath.Join(noted, "bin") {
		t.Fatalf("first install: said %q, want %q", out.OffPath, filepath.Join(noted, "bin"))
	}
	if got, want := lastTx(t, noted), lastTx(t, quiet); got != want {
		t.Errorf("the first install that said the note ended at transaction %d, the quiet one's at %d: want the same", got, want)
	}
	if out := w.installNoted(noted, "/usr/bin", false, "other"); out.OffPath != "" {
		t.Errorf("second install: said %q again", out.OffPath)
	}
	if out := w.installNoted(quiet, "/usr/bin", false, "other"); out.OffPath != filepath.Join(quiet, "bin") {
		t.Errorf("install after a quiet one: said %q, want %q", out.OffPath, filepath.Join(quiet, "bin"))
	}
}

// TestCopyNoteCommitted: the note that a root's installs copy the data (here a root on ext4,
// which shares no blocks, the cache elsewhere), due at its first install, is recorded by
// that install's commit: it writes as many transactions as a quiet one's, which records no
// note; and the note is not said again.
func TestCopyNoteCommitted(t *testing.T) {
	w := newWorld(t)
	addSized(t, w.repo, "big", 256<<10)
	addSized(t, w.repo, "bigger", 256<<10)
	mnt := testfs.Mount(t, "ext4")
	noted, quiet := filepath.Join(mnt, "noted"), filepath.Join(mnt, "quiet")
	if out := w.installNoted(quiet, "", true, "big"); out.Copied == nil {
		t.Fatal("quiet install: nothing said of the copy")
	}
	if out := w.installNoted(noted, "", false, "big"); out.Copied == nil || out.Copied.Name != "big" {
		t.Fatalf("first install: said %v of the copy, want big", out.Copied)
	}
	if got, want := lastTx(t, noted), lastTx(t, quiet); got != want {
		t.Errorf("the first install that said the note ended at transaction %d, the quiet one's at %d: want the same", got, want)
	}
	if out := w.installNoted(noted, "", false, "bigger"); out.Copied != nil {
		t.Errorf("second install: said %v of the copy again", out.Copied.Name)
	}
	if out := w.installNoted(quiet, "", false, "bigger"); out.Copied == nil {
		t.Error("install after a quiet one: nothing said of the copy")
	}
}

package txn_test

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"pkg/install"
	"pkg/internal/testfs"
	"pkg/repo"
	"pkg/txn"
)

// installNoted installs reqs into the root at dir as a command does, with the notes it
// says once per root (install.Notices) and PATH path, and returns the Outcome.
func (w *world) installNoted(dir, path string, quiet bool, reqs ...string) *txn.Outcome {
	w.t.Helper()
	n := &install.Notices{Dir: dir}
	root, err := install.Open(context.Background(), dir, install.Options{NoSync: true})
	if err != nil {
		w.t.Fatal(err)
	}
	defer root.Close()
	n.Hold(root)
	ix := w.index(dir)
	var rs []repo.Requirement
	for _, s := range reqs {
		r, err := repo.ParseRequirement(s)
		if err != nil {
			w.t.Fatal(err)
		}
		rs = append(rs, r)
	}
	recs, err := root.DB().List()
	if err != nil {
		w.t.Fatal(err)
	}
	plan, err := txn.NewPlan(txn.Spec{Action: txn.Install, Requires: rs, Root: root.Dir(), Records: recs, Catalog: ix, Cache: w.cache})
	if err != nil {
		w.t.Fatal(err)
	}
	f := &txn.Fetcher{Source: ix.Source, Jobs: 2, Cache: w.cache}
	plan.Bind(txn.Target{Root: root, Fetcher: f, Requests: rs, Notices: n, Path: path, Quiet: quiet})
	out, err := plan.Apply(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	return out
}

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

// addBig adds to the repository in dir a package of one file, data, of 256 KiB: staged in
// bulk (cloned where the root shares blocks with the cache, else copied).
func addBig(t *testing.T, dir, name string) {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	data := make([]byte, 256<<10)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name + "/data", Mode: 0o644, Size: int64(len(data))}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), name+".tar")
	if err := os.WriteFile(archive, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Add(context.Background(), dir, archive, repo.Package{Name: name, Version: "1"}, false, nil); err != nil {
		t.Fatal(err)
	}
}

// TestCopyNoteCommitted: the note that a root's installs copy the data (here a root on ext4,
// which shares no blocks, the cache elsewhere), due at its first install, is recorded by
// that install's commit: it writes as many transactions as a quiet one's, which records no
// note; and the note is not said again.
func TestCopyNoteCommitted(t *testing.T) {
	w := newWorld(t)
	addBig(t, w.repo, "big")
	addBig(t, w.repo, "bigger")
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

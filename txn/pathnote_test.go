package txn_test

import (
	"context"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"pkg/install"
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

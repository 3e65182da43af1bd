package txn_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"pkg/db"
	"pkg/install"
	"pkg/repo"
	"pkg/txn"
)

// TestUnneeded finds the dependency left behind once the package asked for is removed.
func TestUnneeded(t *testing.T) {
	w := newWorld(t)
	addPackage(t, w.repo, "lib", "1")
	addPackage(t, w.repo, "app", "1", "lib")
	dir := filepath.Join(t.TempDir(), "root")
	w.install(dir, "app")
	root, err := install.Open(context.Background(), dir, install.Options{NoSync: true})
	if err == nil {
		root.Request([]repo.Requirement{{Name: "app"}}) // as pkg install records it
		_, err = root.Apply(context.Background(), nil, nil)
		root.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	unneeded := func() ([]db.Record, []string) {
		t.Helper()
		var recs []db.Record
		var names []string
		err := install.View(dir, install.Options{}, nil, func(d *db.DB) (err error) {
			var requested map[string]repo.Requirement
			recs, requested, err = d.State()
			names = db.Unneeded(recs, requested)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return recs, names
	}
	if recs, names := unneeded(); len(recs) != 2 || len(names) != 0 {
		t.Fatalf("Unneeded with app installed: %d records, %q; want 2, none unneeded", len(recs), names)
	}
	root, err = install.Open(context.Background(), dir, install.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := root.DB().List()
	if err == nil {
		var p *txn.Plan
		if p, err = txn.NewPlan(txn.Spec{Action: txn.Remove, Names: []string{"app"}, Root: dir, Records: recs}); err == nil {
			p.Bind(txn.Target{Root: root})
			_, err = p.Apply(context.Background())
		}
	}
	root.Close()
	if err != nil {
		t.Fatal(err)
	}
	if recs, names := unneeded(); len(recs) != 1 || !slices.Equal(names, []string{"lib"}) {
		t.Errorf("Unneeded after removing app: %d records, %q; want lib", len(recs), names)
	}
}

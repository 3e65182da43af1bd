package txn_test

import (
	"errors"
	"testing"

	"pkg/db"
	"pkg/repo"
	"pkg/txn"
)

// TestUpgradeHold plans upgrades of a root holding semver=7.5.4: one of everything keeps
// it, naming it alone is a *txn.HeldError, and naming it with a new constraint moves it
// within that.
func TestUpgradeHold(t *testing.T) {
	w := newWorld(t)
	old := addPackage(t, w.repo, "semver", "7.5.4")
	addPackage(t, w.repo, "semver", "7.6.0")
	addPackage(t, w.repo, "semver", "7.7.1")
	ix := w.index(t.TempDir())
	before := []db.Record{{Name: "semver", Version: old.Version, SHA256: old.SHA256}}
	requested := map[string]repo.Requirement{"semver": {Name: "semver", Constraints: []repo.Constraint{{Op: "=", Version: "7.5.4"}}}}

	p, err := upgrade(ix, before, nil, requested)
	if err != nil || len(p.Changes) > 0 || len(p.Held) != 1 || p.Held[0].HeldBy != "semver=7.5.4" {
		t.Fatalf("upgrade of all = %+v, %v; want semver held by semver=7.5.4", p, err)
	}
	_, err = upgrade(ix, before, []repo.Requirement{{Name: "semver"}}, requested)
	var he *txn.HeldError
	if !errors.As(err, &he) || len(he.Held) != 1 || he.Held[0].Name != "semver" || he.Held[0].Newest != "7.7.1" {
		t.Errorf("upgrade of semver = %v, want a *txn.HeldError of semver below 7.7.1", err)
	}
	newer, err := repo.ParseRequirement("semver<7.7")
	if err != nil {
		t.Fatal(err)
	}
	p, err = upgrade(ix, before, []repo.Requirement{newer}, requested)
	if err != nil || len(p.Packages()) != 1 || p.Packages()[0].Version != "7.6.0" || len(p.Held) != 1 || p.Held[0].HeldBy != "semver<7.7" {
		t.Errorf("upgrade of semver<7.7 = %+v, %v; want semver 7.6.0, held by semver<7.7", p, err)
	}
	// A hold the installed version does not meet (a record older than holds) holds nothing.
	p, err = upgrade(ix, before, nil, map[string]repo.Requirement{"semver": {Name: "semver", Constraints: []repo.Constraint{{Op: "<", Version: "7"}}}})
	if err != nil || len(p.Packages()) != 1 || p.Packages()[0].Version != "7.7.1" {
		t.Errorf("upgrade with a stale hold = %+v, %v; want semver 7.7.1", p, err)
	}
}

// upgrade is the plan of upgrading reqs (all, with none) in a root holding before, which
// asked for requested.
func upgrade(ix *txn.Catalog, before []db.Record, reqs []repo.Requirement, requested map[string]repo.Requirement) (*txn.Plan, error) {
	return txn.NewPlan(txn.Spec{Action: txn.Upgrade, Requires: reqs, Root: "/r", Records: before, Requested: requested, Catalog: ix})
}

package txn_test

import (
	"testing"

	"pkg/db"
	"pkg/repo"
	"pkg/txn"
)

// TestNewPlanRefuses refuses a Spec giving its action an input it does not read.
func TestNewPlanRefuses(t *testing.T) {
	reqs, names, ix := []repo.Requirement{{Name: "a"}}, []string{"a"}, &txn.Catalog{}
	tests := []struct {
		name string
		s    txn.Spec
	}{
		{"no action", txn.Spec{Names: names}},
		{"keep", txn.Spec{Action: txn.Keep, Names: names}},
		{"remove requirements", txn.Spec{Action: txn.Remove, Requires: reqs}},
		{"reinstall requirements", txn.Spec{Action: txn.Reinstall, Requires: reqs, Catalog: ix}},
		{"install names", txn.Spec{Action: txn.Install, Names: names, Catalog: ix}},
		{"upgrade names", txn.Spec{Action: txn.Upgrade, Names: names, Catalog: ix}},
		{"unneeded install", txn.Spec{Action: txn.Install, Unneeded: true, Catalog: ix}},
		{"unneeded and names", txn.Spec{Action: txn.Remove, Unneeded: true, Names: names}},
		{"install without catalog", txn.Spec{Action: txn.Install, Requires: reqs}},
	}
	for _, tt := range tests {
		if p, err := txn.NewPlan(tt.s); err == nil || p != nil {
			t.Errorf("%s: NewPlan = %v, %v; want it refused", tt.name, p, err)
		}
	}
}

// TestPlanKeepDependency: an install naming a package installed only as another's
// dependency changes no package but records it as asked for, and its plan says so
// (Change.WasDependency), as apt's "set to manually installed"; one asked for already
// is only kept.
func TestPlanKeepDependency(t *testing.T) {
	w := newWorld(t)
	lib, app := addPackage(t, w.repo, "lib", "1.0"), addPackage(t, w.repo, "app", "1.0", "lib")
	ix := w.index(t.TempDir())
	recs := []db.Record{record(lib), record(app)}
	for _, tt := range []struct {
		requested map[string]repo.Requirement
		want      bool
	}{
		{map[string]repo.Requirement{"app": {Name: "app"}}, true},
		{map[string]repo.Requirement{"app": {Name: "app"}, "lib": {Name: "lib"}}, false},
	} {
		p, err := txn.NewPlan(txn.Spec{Action: txn.Install, Requires: []repo.Requirement{{Name: "lib"}}, Root: "/r", Records: recs, Requested: tt.requested, Catalog: ix})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Changes) != 0 || len(p.Unchanged) != 1 || p.Unchanged[0].Action != txn.Keep || p.Unchanged[0].WasDependency != tt.want {
			t.Errorf("install lib, asked for %v: changes %+v, unchanged %+v; want lib kept, was a dependency %v", tt.requested, p.Changes, p.Unchanged, tt.want)
		}
	}
}

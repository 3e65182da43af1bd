package txn_test

import (
	"testing"

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
		{"remove with catalog", txn.Spec{Action: txn.Remove, Names: names, Catalog: ix}},
	}
	for _, tt := range tests {
		if p, err := txn.NewPlan(tt.s); err == nil || p != nil {
			t.Errorf("%s: NewPlan = %v, %v; want it refused", tt.name, p, err)
		}
	}
}

package txn

import (
	"slices"
	"testing"

	"pkg/repo"
)

// TestLockAsksCombines: two requirements of a lockfile on one name are recorded as one
// request holding the constraints of both, as two on one name given to install are.
func TestLockAsksCombines(t *testing.T) {
	reqs, err := repo.ParseRequirements([]string{"tool>=1", "tool<2"})
	if err != nil {
		t.Fatal(err)
	}
	reqs[1].Repo = "team" // the later one pinned: the pin is kept, as an install keeps it
	want := []repo.Package{{Name: "tool", Version: "1.5"}}
	asks, _ := lockAsks(nil, nil, want, reqs)
	if got, all := asks["tool"].Constraints, append(slices.Clone(reqs[0].Constraints), reqs[1].Constraints...); !slices.Equal(got, all) {
		t.Errorf("recorded constraints of tool: %v; want %v, both requirements'", got, all)
	}
	if got := asks["tool"].Repo; got != "team" {
		t.Errorf("recorded repository pin of tool: %q; want the later requirement's, team", got)
	}
}

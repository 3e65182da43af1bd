package db

import (
	"testing"

	"pkg/repo"
)

func TestRequirements(t *testing.T) {
	got := requirements(map[string]string{"a": "a>=1", "b": "b", "c": "c>>"})
	if len(got) != 2 {
		t.Errorf("requirements = %v, want a>=1 and b", got)
	}
	for _, r := range got {
		if r.Name == "a" && (len(r.Constraints) != 1 || r.Constraints[0] != (repo.Constraint{Op: ">=", Version: "1"})) {
			t.Errorf("a>=1 parsed as %v", r)
		}
	}
}

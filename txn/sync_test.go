package txn

import (
	"errors"
	"testing"

	"pkg/fetch"
	"pkg/repo"
)

func TestCheckInputs(t *testing.T) {
	reqs := func(args ...string) []repo.Requirement {
		r, err := repo.ParseRequirements(args)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	l := &repo.Lock{Requires: reqs("app", "tool<1.5")}
	tests := []struct {
		given []repo.Requirement
		stale bool
	}{
		{nil, false},
		{reqs("tool<1.5", "app"), false},
		{reqs("app"), true},
		{reqs("app", "tool<2"), true},
	}
	for _, tt := range tests {
		err := CheckInputs(l, tt.given, "pkg.lock")
		var se *StaleLockError
		if errors.As(err, &se) != tt.stale {
			t.Errorf("CheckInputs(%v) = %v, want stale %v", tt.given, err, tt.stale)
		}
		if tt.stale && err.Error() != "pkg.lock is out of date: it locks app tool<1.5, not "+repo.JoinRequirements(tt.given) {
			t.Errorf("CheckInputs(%v) says %q", tt.given, err)
		}
	}
}

// TestFirstSource: a lockfile of one repository names its source ""; of several, the
// first repository's name does.
func TestFirstSource(t *testing.T) {
	one, two := &fetch.Source{}, &fetch.Source{}
	srcs := map[string]*fetch.Source{"": one, "main": two, "extra": one}
	if got := FirstSource(&repo.Lock{}, srcs); got != one {
		t.Errorf("FirstSource(one repository) = %p, want %p", got, one)
	}
	if got := FirstSource(&repo.Lock{Repos: []repo.LockRepo{{Name: "main"}, {Name: "extra"}}}, srcs); got != two {
		t.Errorf("FirstSource(main, extra) = %p, want %p", got, two)
	}
}

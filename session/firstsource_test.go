package session

import (
	"testing"

	"pkg/fetch"
	"pkg/repo"
)

// TestFirstSource: a lockfile of one repository names its source ""; of several, the
// first repository's name does.
func TestFirstSource(t *testing.T) {
	one, two := &fetch.Source{}, &fetch.Source{}
	srcs := map[string]*fetch.Source{"": one, "main": two, "extra": one}
	if got := firstSource(&repo.Lock{}, srcs); got != one {
		t.Errorf("firstSource(one repository) = %p, want %p", got, one)
	}
	if got := firstSource(&repo.Lock{Repos: []repo.LockRepo{{Name: "main"}, {Name: "extra"}}}, srcs); got != two {
		t.Errorf("firstSource(main, extra) = %p, want %p", got, two)
	}
}

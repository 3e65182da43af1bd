package txn

import (
	"errors"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
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
		err := checkInputs(l, tt.given, "pkg.lock")
		var se *StaleLockError
		if errors.As(err, &se) != tt.stale {
			t.Errorf("checkInputs(%v) = %v, want stale %v", tt.given, err, tt.stale)
		}
		if tt.stale && (se.Path != "pkg.lock" || !reflect.DeepEqual(se.Locks, l.Requires) || !reflect.DeepEqual(se.Given, tt.given)) {
			t.Errorf("checkInputs(%v) = %+v, want pkg.lock's %v", tt.given, se, l.Requires)
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

// TestReadLock: a lockfile is read and checked against the requirements given; a missing
// one is fs.ErrNotExist, as the command reports it.
func TestReadLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pkg.lock")
	if _, err := ReadLock(path, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadLock(missing) = %v, want fs.ErrNotExist", err)
	}
	reqs, err := repo.ParseRequirements([]string{"app"})
	if err != nil {
		t.Fatal(err)
	}
	l := &repo.Lock{Repo: "file:///srv/r/", Requires: reqs, Packages: []repo.Package{{Name: "app", Version: "1", Archive: "file:///srv/r/app.tar", Size: 1, SHA256: strings.Repeat("a", 64)}}}
	if err := repo.WriteLock(path, l); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadLock(path, nil); err != nil || len(got.Packages) != 1 {
		t.Errorf("ReadLock = %+v, %v", got, err)
	}
	other, _ := repo.ParseRequirements([]string{"tool"})
	var se *StaleLockError
	if _, err := ReadLock(path, other); !errors.As(err, &se) || se.Path != path {
		t.Errorf("ReadLock(tool) = %v, want a *StaleLockError", err)
	}
}

package repo

import (
	"errors"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCheckInputs(t *testing.T) {
	reqs := func(args ...string) []Requirement {
		r, err := ParseRequirements(args)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	l := &Lock{Requires: reqs("app", "tool<1.5")}
	tests := []struct {
		given []Requirement
		stale bool
	}{
		{nil, false},
		{reqs("tool<1.5", "app"), false},
		{reqs("app"), true},
		{reqs("app", "tool<2"), true},
	}
	for _, tt := range tests {
		err := checkInputs(l, tt.given, "pkg.lock")
		var se *InputsError
		if errors.As(err, &se) != tt.stale {
			t.Errorf("checkInputs(%v) = %v, want stale %v", tt.given, err, tt.stale)
		}
		if tt.stale && (se.Path != "pkg.lock" || !reflect.DeepEqual(se.Locks, l.Requires) || !reflect.DeepEqual(se.Given, tt.given)) {
			t.Errorf("checkInputs(%v) = %+v, want pkg.lock's %v", tt.given, se, l.Requires)
		}
	}
}

// TestReadLockFor: a lockfile is read and checked against the requirements given; a missing
// one is fs.ErrNotExist, as the command reports it.
func TestReadLockFor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pkg.lock")
	if _, err := ReadLockFor(path, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadLockFor(missing) = %v, want fs.ErrNotExist", err)
	}
	reqs, err := ParseRequirements([]string{"app"})
	if err != nil {
		t.Fatal(err)
	}
	l := &Lock{Repo: "file:///srv/r/", Requires: reqs, Packages: []Package{{Name: "app", Version: "1", Archive: "file:///srv/r/app.tar", Size: 1, SHA256: strings.Repeat("a", 64)}}}
	if err := WriteLock(path, l); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadLockFor(path, nil); err != nil || len(got.Packages) != 1 {
		t.Errorf("ReadLockFor = %+v, %v", got, err)
	}
	other, _ := ParseRequirements([]string{"tool"})
	var se *InputsError
	if _, err := ReadLockFor(path, other); !errors.As(err, &se) || se.Path != path {
		t.Errorf("ReadLockFor(tool) = %v, want an *InputsError", err)
	}
}

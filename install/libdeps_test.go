package install

import (
	"strings"
	"testing"

	"pkg/db"
	"pkg/pkgtest/testrepo"
)

// TestLibDeps: the packages whose library directories a command gets are those that meet
// its package's depends as Requirement.Met has it, through a provides or an alternative
// too, in the order of the depends.
func TestLibDeps(t *testing.T) {
	all := named([]db.Record{
		{Name: "app", Version: "1", Depends: testrepo.Requires("libz1", "x>=2|y", "plain")},
		{Name: "zlib1g", Version: "1", Provides: testrepo.Requires("libz1"), Lib: []string{"lib"}},
		{Name: "x", Version: "1"},
		{Name: "y", Version: "1", Lib: []string{"usr/lib"}},
		{Name: "plain", Version: "1"},
	})
	libs := newLibIndex(all)
	var got []string
	for _, d := range libs.deps(all["app"]) {
		got = append(got, d.Name)
	}
	if want := "zlib1g y plain"; strings.Join(got, " ") != want {
		t.Errorf("deps(app) = %q, want %s", got, want)
	}
	if libs.none(all["app"]) {
		t.Errorf("none(app) = true, want false: zlib1g, which provides its libz1, has a lib")
	}
}

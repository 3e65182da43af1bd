package main

import (
	"path/filepath"
	"pkg/pkgtest/testrepo"
	"strings"
	"testing"

	"pkg/repo"
)

// TestInfoOmitsEmpty checks that info leaves out the fields a package does not have.
func TestInfoOmitsEmpty(t *testing.T) {
	tests := []struct {
		p    repo.Package
		want []string // the lines between version and files, spaces collapsed
	}{
		{repo.Package{Name: "bare", Version: "1"}, nil},
		{repo.Package{Name: "lib", Version: "1", Bin: testrepo.Commands("bin/lib")}, []string{"bin: bin/lib"}},
		{repo.Package{Name: "app", Version: "2", Summary: "an app", Depends: testrepo.Requires("lib>=1", "bare")},
			[]string{"summary: an app", "depends: lib>=1, bare"}},
	}
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	e := newEnv(t, base, dir)
	for _, tt := range tests {
		addHostile(t, base, tt.p, packageTar(t, tt.p.Name, tt.p.Version, 'i'))
		e.ok("install", tt.p.Name)
		want := append(append([]string{"name: " + tt.p.Name, "version: " + tt.p.Version}, tt.want...), "files: 3")
		out, _ := e.ok("info", tt.p.Name)
		var got []string
		for _, line := range strings.Split(out, "\n") {
			got = append(got, strings.Join(strings.Fields(line), " "))
		}
		if len(got) < len(want) || strings.Join(got[:len(want)], "\n") != strings.Join(want, "\n") {
			t.Errorf("info %s:\n%s\nwant it to begin with %q", tt.p.Name, out, want)
		}
	}
}

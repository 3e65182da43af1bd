package main

import (
	"path/filepath"
	"regexp"
	"testing"

	"pkg/repo"
)

// TestInfoOmitsEmpty checks that info leaves out the fields a package does not have.
func TestInfoOmitsEmpty(t *testing.T) {
	tests := []struct {
		p    repo.Package
		want string // the lines after version, to files
	}{
		{repo.Package{Name: "bare", Version: "1"}, ""},
		{repo.Package{Name: "lib", Version: "1", Bin: []string{"bin/lib"}}, "bin: +bin/lib\n"},
		{repo.Package{Name: "app", Version: "2", Summary: "an app", Depends: []string{"lib>=1", "bare"}},
			"summary: +an app\ndepends: +lib>=1, bare\n"},
	}
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	e := newEnv(t, base, dir)
	for _, tt := range tests {
		addHostile(t, base, tt.p, packageTar(t, tt.p.Name, tt.p.Version, 'i'))
		e.ok("install", tt.p.Name)
		want := regexp.MustCompile(`^name: +` + tt.p.Name + `\nversion: +` + tt.p.Version + `\n` + tt.want + `files: +3\n`)
		if out, _ := e.ok("info", tt.p.Name); !want.MatchString(out) {
			t.Errorf("info %s:\n%s\nwant it to match %s", tt.p.Name, out, want)
		}
	}
}

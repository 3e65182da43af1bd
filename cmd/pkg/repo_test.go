package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepoAddCycle checks that repo add refuses a package that would make a dependency
// cycle, leaving the repository as it was.
func TestRepoAddCycle(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	e := newEnv(t, base, dir)
	tests := []struct {
		name    string
		depends []string
		want    string // the error, or "" for none
	}{
		{"selfy", []string{"selfy"}, "package selfy@1: dependency cycle: selfy 1 -> selfy 1"},
		{"cyca", []string{"cycb>=0,<2"}, ""}, // one value with a comma: one constraint
		{"cycb", []string{"cyca>=1"}, "package cycb@1: dependency cycle: cycb 1 -> cyca 1 -> cycb 1"},
	}
	for _, tt := range tests {
		archive := filepath.Join(base, tt.name+"-1.tar")
		if err := os.WriteFile(archive, packageTar(t, tt.name, "1", 'x'), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"repo", "add", dir, archive, "--name", tt.name, "--version", "1"}
		for _, d := range tt.depends {
			args = append(args, "--depends", d)
		}
		if tt.want == "" {
			e.ok(args...)
			continue
		}
		before, _ := os.ReadFile(filepath.Join(dir, "index.json"))
		if _, stderr, code := e.pkg(args...); code != 1 || stderr != "pkg: add "+archive+" to "+dir+": "+tt.want+"\n" {
			t.Errorf("repo add %s: exit %d, %q; want 1 and %q", tt.name, code, stderr, tt.want)
		}
		if after, _ := os.ReadFile(filepath.Join(dir, "index.json")); !bytes.Equal(after, before) {
			t.Errorf("refused repo add %s changed index.json:\n%s", tt.name, after)
		}
		if _, err := os.Stat(filepath.Join(dir, tt.name+"-1.tar")); !os.IsNotExist(err) {
			t.Errorf("refused repo add %s copied its archive: %v", tt.name, err)
		}
	}
	if out, _ := e.ok("search"); !strings.HasPrefix(out, "cyca ") || strings.Count(out, "\n") != 1 {
		t.Errorf("search after the refused adds: %q", out)
	}
}

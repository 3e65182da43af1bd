package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pkg/internal/testfs"

	"pkg/repo"
)

// TestCommandClashInOneInstall installs two packages that both provide command x in one
// command: it must fail naming both, and change nothing.
func TestCommandClashInOneInstall(t *testing.T) {
	base := t.TempDir()
	for _, name := range []string{"left", "right"} {
		archive := pax(t, td("bin/"), tf("bin/x", "#!/bin/sh\necho "+name+"\n"))
		addHostile(t, base, repo.Package{Name: name, Version: "1", Bin: []string{"bin/x"}}, archive)
	}
	e := newEnv(t, base, filepath.Join(base, "repo"))
	e.initRoot()
	before := rootTree(t, e.root)
	_, stderr, code := e.pkg("install", "left", "right")
	if code != 1 || !strings.Contains(stderr, `install left 1: command "x" is also provided by right, installed with it`) {
		t.Fatalf("install left right: exit %d, stderr %q; want a clash naming both", code, stderr)
	}
	testfs.SameTree(t, "root", rootTree(t, e.root), before)
	if _, err := os.Lstat(filepath.Join(e.root, "bin", "x")); !os.IsNotExist(err) {
		t.Errorf("bin/x after the refused install: %v", err)
	}
}

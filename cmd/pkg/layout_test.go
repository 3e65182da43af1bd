package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"pkg/db"
	"pkg/internal/testfs"
)

// TestSymlinkedTrash is issue 17's first hole: whoever may write a root replaces its trash
// with a symlink to a directory of someone else's. Every command that opens the root then
// fails, saying what is wrong with which part of the root, and nothing changes: not that
// directory (a start emptied it), not the root, not its records.
func TestSymlinkedTrash(t *testing.T) {
	base := t.TempDir()
	e := newEnv(t, base, demoRepo)
	e.ok("install", "hello")
	theirs := filepath.Join(base, "theirs")
	if err := os.MkdirAll(filepath.Join(theirs, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(theirs, "sub", "file"), []byte("not pkg's"), 0o644); err != nil {
		t.Fatal(err)
	}
	trash := filepath.Join(e.root, ".pkg", "trash")
	if err := os.Remove(trash); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(theirs, trash); err != nil {
		t.Fatal(err)
	}
	records := func() []db.Record {
		d, err := db.Open(filepath.Join(e.root, ".pkg", "db"), db.Options{NoCreate: true})
		if err != nil {
			t.Fatal(err)
		}
		ps, err := d.List()
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	before, beforeTheirs, recs := rootTree(t, e.root), testfs.Tree(t, theirs), records()
	want := "pkg: root " + e.root + ": .pkg/trash is a symlink, not the directory pkg made: remove it\n"
	for _, args := range [][]string{{"remove", "hello"}, {"install", "fortunes"}, {"verify"}, {"list"}} {
		if _, stderr, code := e.pkg(args...); code != 1 || !strings.HasPrefix(stderr, want) {
			t.Errorf("pkg %v: exit %d, %q; want 1, %q", args, code, stderr, want)
		}
	}
	testfs.SameTree(t, "root", rootTree(t, e.root), before)
	testfs.SameTree(t, "theirs", testfs.Tree(t, theirs), beforeTheirs)
	if got := records(); !reflect.DeepEqual(got, recs) {
		t.Errorf("records after: %+v, want %+v", got, recs)
	}
}

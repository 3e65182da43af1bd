package testfs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Tree describes every entry under dir by its path relative to dir, for before-and-after
// checks: a directory's permissions, a file's permissions and content digest, a symlink's
// target. The relative paths in skip are left out, with everything under them.
func Tree(t testing.TB, dir string, skip ...string) map[string]string {
	t.Helper()
	return walk(t, dir, skip, describe)
}

// RootTree describes a pkg root as Tree does, leaving out the database's files, whose
// bytes change with every command, with its intents and markers (db.intents/, db.done-ID),
// which follow its transactions: tests compare records instead.
func RootTree(t testing.TB, root string) map[string]string {
	t.Helper()
	tree := Tree(t, root, ".pkg/db", ".pkg/db.sum", ".pkg/lock", ".pkg/db.intents")
	maps.DeleteFunc(tree, func(p, _ string) bool { return strings.HasPrefix(p, ".pkg/db.done-") })
	return tree
}

// walk describes every entry under dir, but those at the relative paths in skip, with what.
func walk(t testing.TB, dir string, skip []string, what func(p string, info fs.FileInfo) (string, error)) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if slices.Contains(skip, rel) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		got[rel], err = what(p, info)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func describe(p string, info fs.FileInfo) (string, error) {
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(p)
		return "symlink " + target, err
	case info.IsDir():
		return fmt.Sprintf("dir %v", info.Mode().Perm()), nil
	}
	data, err := os.ReadFile(p)
	sum := sha256.Sum256(data)
	return fmt.Sprintf("file %v %s", info.Mode().Perm(), hex.EncodeToString(sum[:8])), err
}

// SameTree reports, as errors of t, the first ten entries in which got and want (from
// Tree) differ.
func SameTree(t testing.TB, what string, got, want map[string]string) {
	t.Helper()
	n := 0
	report := func(format string, args ...any) {
		if n++; n <= 10 {
			t.Errorf(what+": "+format, args...)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(want)) {
		if got[p] != want[p] {
			report("%s is %q, want %q", p, got[p], want[p])
		}
	}
	for _, p := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[p]; !ok {
			report("unexpected %s (%s)", p, got[p])
		}
	}
}

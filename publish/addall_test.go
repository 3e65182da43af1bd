package publish

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pkg/repo"
)

// TestAddAll adds npm tarballs in one index write, each as its package.json says: the
// dependency of one on another added with it is not missing, one on a package none
// offers is.
func TestAddAll(t *testing.T) {
	dir := t.TempDir()
	a := npmTarball(t, `{"name":"a","version":"1.0.0","dependencies":{"b":"^1","c":"^2"},"scripts":{"install":"x"}}`)
	b := npmTarball(t, `{"name":"b","version":"1.0.0"}`)
	res, err := AddAll(t.Context(), dir, []string{a.Path, b.Path}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Package.Name != "a" || res[1].Package.Name != "b" || !res[0].Created || res[0].Meta != res[1].Meta {
		t.Fatalf("AddAll: %+v", res)
	}
	if len(res[0].Missing) != 1 || res[0].Missing[0].Name != "c" || res[1].Missing != nil {
		t.Errorf("missing: a %q, b %q; want c, none", res[0].Missing, res[1].Missing)
	}
	if !slices.Equal(res[0].Scripts, []string{"install"}) {
		t.Errorf("a's scripts: %q", res[0].Scripts)
	}
	if ix := repo.ReadDir(dir); len(ix.Packages) != 2 {
		t.Errorf("index: %+v", ix.Packages)
	}
}

// TestAddAllNothing refuses an add whose one archive is refused, by its check or by the
// repository's index under its lock: the directory is as it was, no archive copied in.
func TestAddAllNothing(t *testing.T) {
	dir := t.TempDir()
	old := npmTarball(t, `{"name":"old","version":"1.0.0"}`)
	if _, err := AddAll(t.Context(), dir, []string{old.Path}, false, nil); err != nil {
		t.Fatal(err)
	}
	before := dirState(t, dir)
	good := npmTarball(t, `{"name":"good","version":"1.0.0"}`)
	plain := filepath.Join(t.TempDir(), "plain.tar")
	writeTar(t, plain, "bin/x")
	republished := npmTarball(t, `{"name":"old","version":"1.0.0","description":"other"}`)
	for _, tt := range []struct {
		name     string
		archives []string
		match    func(error) bool
	}{
		{"nameless", []string{good.Path, plain}, func(err error) bool {
			var ne *NamelessError
			return errors.As(err, &ne) && ne.Location == plain
		}},
		{"missing", []string{good.Path, filepath.Join(t.TempDir(), "none.tgz")}, func(err error) bool { return errors.Is(err, os.ErrNotExist) }},
		{"republished", []string{good.Path, republished.Path}, func(err error) bool {
			var re *repo.RepublishError
			return errors.As(err, &re) && re.Had.Name == "old"
		}},
		{"twice", []string{good.Path, good.Path}, func(err error) bool { return err != nil }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := AddAll(t.Context(), dir, tt.archives, false, nil)
			var na *NotAddedError
			if !errors.As(err, &na) || na.Dir != dir || na.N != 2 || !tt.match(err) {
				t.Fatalf("AddAll: %v", err)
			}
			if n := strings.Count(err.Error(), dir); n != 1 {
				t.Errorf("AddAll: %v: names %s %d times, want once", err, dir, n)
			}
			if after := dirState(t, dir); !slices.Equal(after, before) {
				t.Errorf("%s after a refused add:\n%q\nwant as before:\n%q", dir, after, before)
			}
		})
	}
}

// dirState returns the names of dir's files and index.json's text.
func dirState(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var state []string
	for _, e := range entries {
		state = append(state, e.Name())
	}
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	return append(state, string(data))
}

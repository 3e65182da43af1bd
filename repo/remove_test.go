package repo

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// removeRepo is a repository of jq 1.6 and 1.7, jq 1.7+1 naming 1.7's archive (as an
// index written by hand may), lib 1 and 2, and app 1 needing lib>=1 and app 2 needing lib>=2.
func removeRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	jq17 := writeArchive(t, "jq-1.7.tar", "jq 1.7")
	for _, p := range []struct {
		archive string
		p       Package
	}{
		{writeArchive(t, "jq-1.6.tar", "jq 1.6"), Package{Name: "jq", Version: "1.6"}},
		{jq17, Package{Name: "jq", Version: "1.7"}},
		{jq17, Package{Name: "jq", Version: "1.7+1"}},
		{writeArchive(t, "lib-1.tar", "lib 1"), Package{Name: "lib", Version: "1"}},
		{writeArchive(t, "lib-2.tar", "lib 2"), Package{Name: "lib", Version: "2"}},
		{writeArchive(t, "app-1.tar", "app 1"), Package{Name: "app", Version: "1", Depends: deps("lib>=1")}},
		{writeArchive(t, "app-2.tar", "app 2"), Package{Name: "app", Version: "2", Depends: deps("lib>=2")}},
	} {
		if _, err := addUnsigned(dir, p.archive, p.p); err != nil {
			t.Fatal(err)
		}
	}
	ix := readIndexFile(t, dir)
	for i, p := range ix.Packages {
		if p.Version == "1.7+1" {
			if err := os.Remove(filepath.Join(dir, p.Archive)); err != nil {
				t.Fatal(err)
			}
			ix.Packages[i].Archive = "jq-1.7.tar"
		}
	}
	if err := writeFile(dir, indexName, ix.encode); err != nil {
		t.Fatal(err)
	}
	return dir
}

func entries(ix *Index) string {
	var ids []string
	for _, p := range ix.Packages {
		ids = append(ids, p.Name+" "+p.Version)
	}
	return strings.Join(ids, ", ")
}

func TestRemove(t *testing.T) {
	tests := []struct {
		rm       Removal
		removed  []string // versions
		archives []string // deleted
		left     string
		broken   []Need
	}{
		{Removal{Name: "jq"}, []string{"1.6", "1.7", "1.7+1"}, []string{"jq-1.6.tar", "jq-1.7.tar"},
			"app 1, app 2, lib 1, lib 2", nil},
		{Removal{Name: "jq", Version: "1.6"}, []string{"1.6"}, []string{"jq-1.6.tar"},
			"app 1, app 2, jq 1.7, jq 1.7+1, lib 1, lib 2", nil},
		{Removal{Name: "jq", Version: "1.7"}, []string{"1.7"}, nil, // 1.7+1 has its archive
			"app 1, app 2, jq 1.6, jq 1.7+1, lib 1, lib 2", nil},
		{Removal{Name: "lib", Version: "1"}, []string{"1"}, []string{"lib-1.tar"}, // app 1 takes lib 2
			"app 1, app 2, jq 1.6, jq 1.7, jq 1.7+1, lib 2", nil},
		{Removal{Name: "app"}, []string{"1", "2"}, []string{"app-1.tar", "app-2.tar"},
			"jq 1.6, jq 1.7, jq 1.7+1, lib 1, lib 2", nil},
		{Removal{Name: "lib", Force: true}, []string{"1", "2"}, []string{"lib-1.tar", "lib-2.tar"},
			"app 1, app 2, jq 1.6, jq 1.7, jq 1.7+1",
			[]Need{{"app", "1", deps("lib>=1")[0]}, {"app", "2", deps("lib>=2")[0]}}},
	}
	for _, tt := range tests {
		t.Run(tt.rm.String(), func(t *testing.T) {
			dir := removeRepo(t)
			res, err := Remove(t.Context(), dir, tt.rm, nil)
			if err != nil {
				t.Fatal(err)
			}
			var removed []string
			for _, p := range res.Packages {
				if p.Name != tt.rm.Name {
					t.Errorf("removed %s %s", p.Name, p.Version)
				}
				removed = append(removed, p.Version)
			}
			if !slices.Equal(removed, tt.removed) || !slices.Equal(res.Deleted, tt.archives) || !reflect.DeepEqual(res.Broken, tt.broken) {
				t.Errorf("Remove = %q, archives %q, broken %v; want %q, %q, %v", removed, res.Deleted, res.Broken, tt.removed, tt.archives, tt.broken)
			}
			ix := readIndexFile(t, dir)
			if got := entries(ix); got != tt.left {
				t.Errorf("index holds %s, want %s", got, tt.left)
			}
			want := []string{indexName}
			for _, p := range ix.Packages {
				if !slices.Contains(want, p.Archive) {
					want = append(want, p.Archive)
				}
			}
			checkDir(t, dir, want...)
		})
	}
}

// TestRemoveRefuses changes nothing, naming the package, when the index lacks it or
// packages left would lack a dependency.
func TestRemoveRefuses(t *testing.T) {
	tests := []struct {
		rm    Removal
		want  error  // a *notFoundError or *NeededError, or ErrName or ErrVersion
		value string // for ErrName or ErrVersion, the value refused
	}{
		{Removal{Name: "nope"}, &notFoundError{Removal: Removal{Name: "nope"}}, ""},
		{Removal{Name: "jq", Version: "1.8"}, &notFoundError{Removal: Removal{Name: "jq", Version: "1.8"}, Have: []string{"1.6", "1.7", "1.7+1"}}, ""},
		{Removal{Name: "lib"}, &NeededError{Removal: Removal{Name: "lib"}, Needs: []Need{{"app", "1", parseReqs(t, "lib>=1")[0]}, {"app", "2", parseReqs(t, "lib>=2")[0]}}}, ""},
		{Removal{Name: "lib", Version: "2"}, &NeededError{Removal: Removal{Name: "lib", Version: "2"}, Needs: []Need{{"app", "2", parseReqs(t, "lib>=2")[0]}}}, ""},
		{Removal{Name: "J+q"}, ErrName, "J+q"},
		{Removal{Name: "jq", Version: "x"}, ErrVersion, "x"},
	}
	for _, tt := range tests {
		t.Run(tt.rm.String(), func(t *testing.T) {
			dir := removeRepo(t)
			before := dirState(t, dir)
			_, err := Remove(t.Context(), dir, tt.rm, nil)
			var nf *notFoundError
			var ne *NeededError
			switch want := tt.want.(type) {
			case *notFoundError:
				if !errors.As(err, &nf) || !reflect.DeepEqual(nf, want) {
					t.Errorf("Remove: %#v, want %#v", err, want)
				}
			case *NeededError:
				if !errors.As(err, &ne) || !reflect.DeepEqual(ne, want) {
					t.Errorf("Remove: %#v, want %#v", err, want)
				}
			default:
				if ve := (*valueError)(nil); !errors.Is(err, tt.want) || !errors.As(err, &ve) || ve.value != tt.value {
					t.Errorf("Remove: %v, want %v of %q", err, tt.want, tt.value)
				}
			}
			if err != nil && !strings.Contains(err.Error(), dir) {
				t.Errorf("Remove: %v does not name %s", err, dir)
			}
			if after := dirState(t, dir); !reflect.DeepEqual(after, before) {
				t.Errorf("a refused Remove changed %s", dir)
			}
		})
	}
	var ne *NeededError
	if _, err := Remove(t.Context(), removeRepo(t), Removal{Name: "lib"}, nil); !errors.As(err, &ne) || len(ne.Needs) != 2 {
		t.Errorf("Remove of a needed package: %v, want a *NeededError of two needs", err)
	}
	var nf *notFoundError
	if _, err := Remove(t.Context(), removeRepo(t), Removal{Name: "nope"}, nil); !errors.As(err, &nf) {
		t.Errorf("Remove of a missing package: %v, want a *notFoundError", err)
	}
	var pe *fs.PathError
	if _, err := Remove(t.Context(), t.TempDir(), Removal{Name: "jq"}, nil); !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || filepath.Base(pe.Path) != "index.json" {
		t.Errorf("Remove from a directory without an index: %v, want fs.ErrNotExist naming index.json", err)
	}
}

// dirState returns the contents of every file in dir.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	state := make(map[string]string)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		state[e.Name()] = string(data)
	}
	return state
}

// TestRemoveSigned signs the index it writes with the next version, as Add does,
// and refuses, changing nothing, to rewrite a signed index unsigned.
func TestRemoveSigned(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "main")
	expires := time.Now().Add(time.Hour)
	for _, v := range []string{"1", "2"} {
		if _, err := Add(t.Context(), dir, writeArchive(t, "a-"+v+".tar", v), Package{Name: "a", Version: v}, false, testSigner("", expires)); err != nil {
			t.Fatal(err)
		}
	}
	before := dirState(t, dir)
	if _, err := Remove(t.Context(), dir, Removal{Name: "a", Version: "1"}, nil); !errors.Is(err, ErrSigned) {
		t.Errorf("unsigned Remove from a signed repository: %v", err)
	}
	if !reflect.DeepEqual(dirState(t, dir), before) {
		t.Errorf("a refused Remove changed %s", dir)
	}
	res, err := Remove(t.Context(), dir, Removal{Name: "a", Version: "1"}, testSigner("", expires))
	if err != nil {
		t.Fatal(err)
	}
	ix := checkSigned(t, dir)
	if ix.Version != 3 || res.Meta != ix.Meta || entries(ix) != "a 2" {
		t.Errorf("signed remove: index version %d, %s, meta %+v; want version 3, a 2, %+v", ix.Version, entries(ix), res.Meta, ix.Meta)
	}
	if index, _ := os.ReadFile(filepath.Join(dir, indexName)); bytes.Contains(index, []byte("a-1.tar")) {
		t.Errorf("index still names a-1.tar")
	}
	checkDir(t, dir, indexName, SignatureName, "a-2.tar")
}

// TestRemoveProvider refuses to remove the one entry that provides what another needs, and
// removes it when another entry provides it too.
func TestRemoveProvider(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo")
	for _, p := range []Package{
		{Name: "curl", Version: "8", Depends: deps("libz1")},
		{Name: "zlib1g", Version: "1", Provides: deps("libz1")},
		{Name: "zlib-ng", Version: "2", Provides: deps("libz1")},
	} {
		if _, err := addUnsigned(dir, writeArchive(t, p.Name+".tar", p.Name), p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Remove(t.Context(), dir, Removal{Name: "zlib1g"}, nil); err != nil {
		t.Fatalf("Remove(zlib1g) while zlib-ng provides libz1: %v", err)
	}
	var ne *NeededError
	if _, err := Remove(t.Context(), dir, Removal{Name: "zlib-ng"}, nil); !errors.As(err, &ne) || len(ne.Needs) != 1 || ne.Needs[0].Depends.String() != "libz1" {
		t.Errorf("Remove(zlib-ng), the last provider of libz1: %v, want a *NeededError for curl's libz1", err)
	}
}

// TestRemoveConfined: an entry whose archive is reached through a symlink out of the
// directory (an index written by hand) deletes nothing out there: the index is written
// without the entry, and the archive is Left, ErrOutside naming it.
func TestRemoveConfined(t *testing.T) {
	dir := t.TempDir()
	if _, err := addUnsigned(dir, writeArchive(t, "a.tar", "a"), Package{Name: "a", Version: "1"}); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	victim := filepath.Join(out, "a-1.tar")
	if err := os.Rename(filepath.Join(dir, "a-1.tar"), victim); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, filepath.Join(dir, "pool")); err != nil {
		t.Fatal(err)
	}
	ix := readIndexFile(t, dir)
	ix.Packages[0].Archive = "pool/a-1.tar"
	if err := writeFile(dir, indexName, ix.encode); err != nil {
		t.Fatal(err)
	}
	res, err := Remove(t.Context(), dir, Removal{Name: "a"}, nil)
	if err != nil {
		t.Fatalf("Remove through a symlink out of the directory: %v", err)
	}
	pe := (*fs.PathError)(nil)
	if len(res.Left) != 1 || res.Left[0].Archive != "pool/a-1.tar" || !errors.Is(res.Left[0].Err, ErrOutside) ||
		!errors.As(res.Left[0].Err, &pe) || pe.Path != filepath.Join(dir, "pool", "a-1.tar") || res.Deleted != nil {
		t.Errorf("Remove through a symlink out of the directory: deleted %q, left %+v; want pool/a-1.tar left, ErrOutside naming it", res.Deleted, res.Left)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("the file out of the directory: %v", err)
	}
	if got := entries(readIndexFile(t, dir)); got != "" {
		t.Errorf("index holds %s, want none", got)
	}
}

package txn_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"pkg/fetch"
	"pkg/repo"
	"pkg/txn"
)

// TestLargestFirst: a Fetcher begins the packages by archive size, the largest first, and
// packages of one size in the order given.
func TestLargestFirst(t *testing.T) {
	for _, tt := range []struct {
		sizes []int64
		want  []int
	}{
		{nil, []int{}},
		{[]int64{7}, []int{0}},
		{[]int64{5, 30, 10, 30}, []int{1, 3, 2, 0}},
		{[]int64{1, 2, 3}, []int{2, 1, 0}},
	} {
		pkgs := make([]repo.Package, len(tt.sizes))
		for i, n := range tt.sizes {
			pkgs[i].Size = n
		}
		if got := txn.LargestFirst(pkgs); !slices.Equal(got, tt.want) {
			t.Errorf("sizes %v: order %v, want %v", tt.sizes, got, tt.want)
		}
	}
}

// TestFetchLargestFirst: with one job, Fetch hands the packages to ready in the order of
// largestFirst, not in the order given.
func TestFetchLargestFirst(t *testing.T) {
	w := newWorld(t)
	pkgs := addSizes(t, w.repo, 100, 5000, 100, 20000)
	f := &txn.Fetcher{Source: w.index("").Source, Jobs: 1, Cache: w.cache}
	var mu sync.Mutex
	var got []int
	err := f.Fetch(context.Background(), pkgs, func(_ context.Context, i int, _ string) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, i)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{3, 1, 0, 2}; !slices.Equal(got, want) {
		t.Errorf("ready's order %v, want %v: by size, the largest first", got, want)
	}
}

// addSizes adds to the repository in dir a package of each of sizes, p0, p1 and so on
// (addSized).
func addSizes(t *testing.T, dir string, sizes ...int) []repo.Package {
	t.Helper()
	pkgs := make([]repo.Package, len(sizes))
	for i, size := range sizes {
		pkgs[i] = addSized(t, dir, fmt.Sprintf("p%d", i), size)
	}
	return pkgs
}

// addSized adds to the repository in dir the package name at version 1, whose one file,
// data/name, holds size bytes.
func addSized(t *testing.T, dir, name string, size int) repo.Package {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "data/" + name, Mode: 0o644, Size: int64(size)}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(bytes.Repeat([]byte{'x'}, size)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), name+".tar")
	if err := os.WriteFile(archive, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := repo.Add(context.Background(), dir, archive, repo.Package{Name: name, Version: "1"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Package
}

// TestFetchNamesUnfetched: a fetch stopped by one archive's failure names, with that
// failure, the packages of the archives it did not fetch, three and a count of the rest.
func TestFetchNamesUnfetched(t *testing.T) {
	w := newWorld(t)
	pkgs := addSizes(t, w.repo, 100, 5000, 3000, 20000, 1500, 800)
	f := &txn.Fetcher{Source: w.index("").Source, Jobs: 1, Cache: w.cache}
	if err := os.Remove(filepath.Join(w.repo, pkgs[3].Archive)); err != nil { // the largest, fetched first
		t.Fatal(err)
	}
	err := f.Fetch(context.Background(), pkgs, nil)
	if !errors.Is(err, fetch.ErrGone) {
		t.Fatalf("fetch with p3's archive gone: %v; want fetch.ErrGone", err)
	}
	// The largest archives first: p1, p2, p4, then p5 and p0.
	if want := "; p1 1, p2 1, p4 1 and 2 more not fetched either"; !strings.HasSuffix(err.Error(), want) {
		t.Errorf("error %q, want it ending %q", err, want)
	}
}

// TestFetchReadyFails: where ready (staging) fails, Fetch returns its error as it is, naming
// no package as not fetched: those are in the cache or not, and the change failed for
// another reason.
func TestFetchReadyFails(t *testing.T) {
	w := newWorld(t)
	pkgs := addSizes(t, w.repo, 100, 5000, 3000, 20000, 1500, 800)
	f := &txn.Fetcher{Source: w.index("").Source, Jobs: 1, Cache: w.cache}
	full := errors.New("no space left for p3")
	err := f.Fetch(context.Background(), pkgs, func(_ context.Context, i int, _ string) error {
		if pkgs[i].Name == "p3" { // the largest, the first ready
			return full
		}
		return nil
	})
	if err != full {
		t.Fatalf("fetch whose ready failed for p3: %v; want ready's error as it is", err)
	}
}

// hows records how each package came to be in the cache.
type hows struct {
	txn.Observer
	mu  sync.Mutex
	got []txn.How
}

func (h *hows) Fetching(repo.Package) io.Writer { return nil }
func (h *hows) Fetched(ev txn.Fetched) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = append(h.got, ev.How)
}

// TestFetchEntryPart: an entry of which the cache holds the tar or the index alone is
// downloaded again, not taken as cached, and one it holds whole is taken as cached.
func TestFetchEntryPart(t *testing.T) {
	for _, tt := range []struct {
		remove string
		want   txn.How
	}{
		{"", txn.Cached},
		{".tar", txn.Downloaded},
		{".idx", txn.Downloaded},
	} {
		t.Run("without "+tt.remove, func(t *testing.T) {
			w := newWorld(t)
			p := addSized(t, w.repo, "p", 5000)
			f := &txn.Fetcher{Source: w.index("").Source, Cache: w.cache}
			ready := func(context.Context, int, string) error { return nil }
			if err := f.Fetch(context.Background(), []repo.Package{p}, ready); err != nil {
				t.Fatal(err)
			}
			if tt.remove != "" {
				tars := filepath.Join(filepath.Dir(w.repo), "cache", "tars")
				if err := os.Remove(filepath.Join(tars, p.SHA256+tt.remove)); err != nil {
					t.Fatal(err)
				}
			}
			obs := &hows{}
			f = &txn.Fetcher{Source: w.index("").Source, Cache: w.cache, Observer: obs}
			if err := f.Fetch(context.Background(), []repo.Package{p}, ready); err != nil {
				t.Fatal(err)
			}
			if want := []txn.How{tt.want}; !slices.Equal(obs.got, want) {
				t.Errorf("fetch: %v, want %v", obs.got, want)
			}
			if !w.cache.Has(p.SHA256) {
				t.Errorf("the entry is not in the cache after the fetch")
			}
		})
	}
}

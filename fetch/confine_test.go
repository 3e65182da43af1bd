package fetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pkg/internal/testfs"
	"pkg/repo"
)

// Each swap test runs rounds of commands until the directory was swapped swapMin times
// and swapRounds rounds opened the cache, for at most swapTime.
const (
	swapMin    = 300
	swapRounds = 100
	swapTime   = 3 * time.Second
)

// TestSwappedSubdirs swaps each directory of a cache for a symlink to a decoy, in a loop,
// while processes' worth of Caches fetch (over HTTP and from a local repository), read
// and keep an index, record, list and forget roots, settle, and prune: nothing in the
// decoy changes, and the cache is whole afterwards (#30).
func TestSwappedSubdirs(t *testing.T) {
	for _, sub := range []string{"tars", "tmp", "index", "roots"} {
		t.Run(sub, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cache")
			pkgs, remote, local := swapRepos(t)
			c, err := OpenCache(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
			decoy := swapDecoy(t, pkgs, remote)
			before := testfs.Snapshot(t, decoy)
			swapper := testfs.Swap(t, filepath.Join(dir, sub), decoy)
			deadline := time.Now().Add(swapTime)
			rounds, opened := 0, 0
			for ; (opened < swapRounds || swapper.Swaps() < swapMin) && time.Now().Before(deadline); rounds++ {
				if swapRound(t, dir, pkgs[rounds%len(pkgs)], remote, local) {
					opened++
				}
			}
			swaps := swapper.Stop()
			t.Logf("%d rounds, %d of them with the cache open, %d swaps", rounds, opened, swaps)
			if opened == 0 || swaps == 0 {
				t.Fatal("no round opened the cache while it was swapped: nothing was tested")
			}
			testfs.SameTree(t, "the decoy", testfs.Snapshot(t, decoy), before)
			checkWhole(t, dir, local, pkgs)
		})
	}
}

// swapRepos publishes small packages on an HTTP repository and in a local one.
func swapRepos(t *testing.T) (pkgs []repo.Package, remote, local string) {
	t.Helper()
	local = t.TempDir()
	archives := map[string][]byte{}
	for i := range 3 {
		files := []file{{"bin/tool", []byte(fmt.Sprintf("#!/bin/sh\necho %d\n", i))}, {"share/data", []byte(strings.Repeat("x", 5000+i))}}
		archive := gzipped(t, makeTar(t, files))
		p := entry(fmt.Sprintf("tool%d", i), archive, files)
		archives[p.Archive] = archive
		if err := os.WriteFile(filepath.Join(local, p.Archive), archive, 0o644); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	index := writeIndex(t, pkgs...)
	if err := os.WriteFile(filepath.Join(local, "index.json"), index, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/repo/")
		if name == "index.json" {
			w.Write(index)
			return
		}
		if a, ok := archives[name]; ok {
			serveArchive(w, r, a)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return pkgs, srv.URL + "/repo/", local
}

// swapDecoy makes a directory holding what pkg would write in each of the cache's
// directories, for the packages pkgs and the index at remote.
func swapDecoy(t *testing.T, pkgs []repo.Package, remote string) string {
	t.Helper()
	decoy := t.TempDir()
	names := []string{indexName(remote + "index.json"), "fetch-" + pkgs[0].SHA256, "demo-1.tar", "idx-1"}
	for _, p := range pkgs {
		names = append(names, p.SHA256+".tar", p.SHA256+".idx")
	}
	sum := sha256.Sum256([]byte("/some/root"))
	names = append(names, hex.EncodeToString(sum[:8]))
	testfs.OldFiles(t, decoy, names...)
	return decoy
}

// swapRound does, with a Cache of its own as a process would, what uses each directory of
// the cache at dir, in as many ways as it can, and reports whether it could open the
// cache; it fails on nothing, as a swap may make a step fail.
func swapRound(t *testing.T, dir string, p repo.Package, remote, local string) bool {
	ctx := context.Background()
	c, err := OpenCache(context.Background(), dir)
	if err != nil {
		return false // a symlink in place of a directory at the time
	}
	defer c.Close()
	c.NoSync = true
	srcs := []*Source{quick(t, remote), quick(t, local)}
	for _, s := range srcs {
		c.VerifiedIndex(ctx, s)
		c.IndexTime(s)
	}
	for _, s := range srcs {
		if _, err := c.Fetch(ctx, s, p, nil); err == nil {
			c.Members(p.SHA256)
			c.Settle(p.SHA256)
		}
	}
	root := filepath.Join(t.TempDir(), "root")
	c.AddRoot(root)
	c.Roots()
	c.ForgetRoot(root)
	c.List()
	if ok, _ := c.TryExclusive(); ok {
		c.RemoveUnfinished()
		c.Trim(Limits{}, func(e Entry) bool { return e.SHA256 != p.SHA256 })
		c.MarkPruned()
	}
	c.ForgetIndex(srcs[0])
	return true
}

// checkWhole fails unless the cache at dir holds only whole entries, of pkgs, and is
// usable: every entry's digests match its tar, and each package fetches.
func checkWhole(t *testing.T, dir, local string, pkgs []repo.Package) {
	t.Helper()
	c, err := OpenCache(context.Background(), dir)
	if err != nil {
		t.Fatalf("cache after the swaps: %v", err)
	}
	defer c.Close()
	es, err := c.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.Err != nil {
			t.Errorf("entry %s: %v", e.SHA256, e.Err)
		} else if _, err := c.Members(e.SHA256); err != nil {
			t.Errorf("entry %s %s: %v", e.Name, e.Version, err)
		}
	}
	s := quick(t, local)
	for _, p := range pkgs {
		if err := fetchOne(c, s, p); err != nil {
			t.Errorf("fetch %s after the swaps: %v", p.Name, err)
		}
	}
	for _, sub := range []string{"tars", "tmp", "index", "roots"} {
		if info, err := os.Lstat(filepath.Join(dir, sub)); err != nil || !info.IsDir() {
			t.Errorf("%s after the swaps: %v, %v", sub, info, err)
		}
	}
}

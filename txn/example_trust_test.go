package txn_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"pkg/fetch"
	"pkg/install"
	"pkg/repo"
	"pkg/txn"
)

// Offline, a change needs every archive it installs in the cache: CheckCached names what
// is missing, and what the cache holds in its place.
func ExampleCheckCached() {
	base, err := os.MkdirTemp("", "txn-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(base)
	dir := filepath.Join(base, "repo")
	v1, _ := publish(dir, base, "hello", "1.1")
	v2, _ := publish(dir, base, "hello", "1.2")
	cache, err := fetch.OpenCache(context.Background(), filepath.Join(base, "cache"))
	if err != nil {
		panic(err)
	}
	defer cache.Close()
	src, err := fetch.NewSource(dir, fetch.Options{})
	if err != nil {
		panic(err)
	}
	f := &txn.Fetcher{Source: src, Jobs: 1}
	f.UseCache(cache, 0)
	if err := f.Fetch(context.Background(), []repo.Package{v1}, nil); err != nil {
		panic(err)
	}

	fmt.Println(txn.CheckCached(cache, []repo.Package{v1}, false))
	err = txn.CheckCached(cache, []repo.Package{v2}, false)
	fmt.Println(err)
	var nc *txn.NotCachedError
	if errors.As(err, &nc) {
		fmt.Println(nc.Missing[0].Package.Name, nc.Missing[0].Versions)
	}
	// Output:
	// <nil>
	// offline: not in the cache: hello 1.2 (the cache holds hello 1.1: ask for hello=1.1)
	// hello [1.1]
}

// A prune removes from a cache no other process uses what no root installing from it
// uses, within the limits (none: all of it).
func ExamplePrune() {
	base, err := os.MkdirTemp("", "txn-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(base)
	dir := filepath.Join(base, "repo")
	hello, _ := publish(dir, base, "hello", "1")
	old, _ := publish(dir, base, "old", "1")
	cache, err := fetch.OpenCache(context.Background(), filepath.Join(base, "cache"))
	if err != nil {
		panic(err)
	}
	defer cache.Close()
	rootDir := filepath.Join(base, "root")
	ctx := context.Background()
	ix, err := txn.ReadIndex(ctx, cache, rootDir, install.Options{}, dir, fetch.Options{})
	if err != nil {
		panic(err)
	}
	f := &txn.Fetcher{Source: ix.Source, Jobs: 1}
	f.UseCache(cache, 0)
	if err := f.Fetch(ctx, []repo.Package{old}, nil); err != nil { // cached, not installed
		panic(err)
	}
	root, err := install.Open(ctx, rootDir, install.Options{NoSync: true})
	if err != nil {
		panic(err)
	}
	plan, err := txn.InstallPlan(root.Dir(), ix, nil, []repo.Requirement{{Name: "hello"}}, nil, cache)
	if err == nil {
		plan.Bind(txn.Target{Root: root, Fetcher: f})
		_, err = plan.Apply(ctx)
	}
	root.Close()
	if err != nil {
		panic(err)
	}

	if err := cache.Exclusive(ctx, nil); err != nil {
		panic(err)
	}
	t, forgot, err := txn.Prune(cache, rootDir, install.Options{}, fetch.Limits{})
	if err != nil {
		panic(err)
	}
	for _, e := range t.Removed {
		fmt.Println("removed", e.Name, e.Version)
	}
	fmt.Println("forgot", len(forgot), "roots; hello kept:", cache.Has(hello.SHA256))
	// Output:
	// removed old 1
	// forgot 0 roots; hello kept: true
}

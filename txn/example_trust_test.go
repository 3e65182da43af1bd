package txn_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"pkg/fetch"
	"pkg/repo"
	"pkg/txn"
)

// Offline, a change needs every archive it installs in the cache: Fetch refuses naming what
// is missing, and what the cache holds in its place.
func ExampleFetcher_Fetch_offline() {
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
	f := &txn.Fetcher{Source: src, Jobs: 1, Cache: cache}
	if err := f.Fetch(context.Background(), []repo.Package{v1}, nil); err != nil {
		panic(err)
	}

	f.Offline = true
	fmt.Println(f.Fetch(context.Background(), []repo.Package{v1}, nil))
	err = f.Fetch(context.Background(), []repo.Package{v2}, nil)
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

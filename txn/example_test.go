package txn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"pkg/fetch"
	"pkg/install"
	"pkg/repo"
	"pkg/txn"
)

// The transaction of an install: read the index for the root, plan, show the plan, apply.
func ExamplePlan() {
	ctx := context.Background()
	base, err := os.MkdirTemp("", "txn-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(base)
	dir := filepath.Join(base, "repo")
	publish(dir, base, "libgreet", "1")
	publish(dir, base, "hello", "1", "libgreet>=1")

	cache, err := fetch.OpenCache(context.Background(), filepath.Join(base, "cache"))
	if err != nil {
		panic(err)
	}
	defer cache.Close()
	root, err := install.Open(ctx, filepath.Join(base, "root"), install.Options{})
	if err != nil {
		panic(err)
	}
	defer root.Close()

	ix, err := txn.ReadIndex(ctx, cache, root.Dir(), install.Options{}, dir, fetch.Options{})
	if err != nil {
		panic(err)
	}
	plan, err := txn.NewPlan(txn.Spec{Action: txn.Install, Requires: []repo.Requirement{{Name: "hello"}}, Root: root.Dir(), Catalog: ix, Cache: cache})
	if err != nil {
		panic(err)
	}
	for _, c := range plan.Changes {
		fmt.Printf("%s %s %s: %s\n", c.Action, c.Name, c.Version, c.Why)
	}

	f := &txn.Fetcher{Source: ix.Source, Jobs: 2, Cache: cache}
	plan.Bind(txn.Target{Root: root, Fetcher: f}) // the plan owns the root from here
	out, err := plan.Apply(ctx)
	if err != nil {
		panic(err)
	}
	for _, r := range out.Results {
		fmt.Printf("installed %s %s: %d files\n", r.Name, r.Version, r.Files)
	}
	// Output:
	// install libgreet 1: dependency of hello
	// install hello 1: requested
	// installed libgreet 1: 1 files
	// installed hello 1: 1 files
}

// A plan's JSON form is what a dry run prints with --json (docs/json/plan.md).
func ExampleNewPlan() {
	plan, err := txn.NewPlan(txn.Spec{Action: txn.Remove, Names: []string{"hello"}, Root: "/opt/root"})
	if err != nil {
		panic(err)
	}
	b, err := json.Marshal(plan)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
	// Output:
	// {"schema":"pkg.plan/1","root":"/opt/root","changes":[{"action":"remove","name":"hello","version":"","download_bytes":0,"why":"requested"}],"download_bytes":0,"disk_bytes":0}
}

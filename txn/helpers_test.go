package txn_test

import (
	"context"
	"path/filepath"
	"pkg/db"
	"testing"

	"pkg/fetch"
	"pkg/install"
	"pkg/pkgtest/testrepo"
	"pkg/repo"
	"pkg/txn"
)

// addPackage adds to the repository in dir a package holding one command, bin/NAME.
func addPackage(t testing.TB, dir, name, version string, depends ...string) repo.Package {
	t.Helper()
	p, err := publish(dir, t.TempDir(), name, version, depends...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// publish adds a package to the repository in dir (testrepo.Publish).
var publish = testrepo.Publish

// world is a repository, a cache and roots installing from them.
type world struct {
	t     testing.TB
	repo  string
	cache *fetch.Cache
}

func newWorld(t testing.TB) *world {
	t.Helper()
	base := t.TempDir()
	cache, err := fetch.OpenCache(context.Background(), filepath.Join(base, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cache.Close() })
	return &world{t: t, repo: filepath.Join(base, "repo"), cache: cache}
}

// index reads the repository's index for the root at dir.
func (w *world) index(dir string) *txn.Catalog {
	w.t.Helper()
	ix, err := txn.ReadIndex(context.Background(), w.cache, dir, install.Options{}, w.repo, fetch.Options{})
	if err != nil {
		w.t.Fatal(err)
	}
	return ix
}

// install installs reqs into the root at dir.
func (w *world) install(dir string, reqs ...string) *txn.Outcome {
	w.t.Helper()
	return w.installWith(dir, nil, reqs...)
}

// installNoted installs reqs into the root at dir with the notes a command says once per
// root (install.Notices), PATH path, showing none if quiet.
func (w *world) installNoted(dir, path string, quiet bool, reqs ...string) *txn.Outcome {
	w.t.Helper()
	return w.installWith(dir, func(root *install.Root, t *txn.Target) {
		n := &install.Notices{Dir: dir}
		n.Hold(root)
		t.Notices, t.Path, t.Quiet = n, path, quiet
	}, reqs...)
}

// installWith installs reqs into the root at dir, the change's Target set by with, if
// not nil.
func (w *world) installWith(dir string, with func(*install.Root, *txn.Target), reqs ...string) *txn.Outcome {
	w.t.Helper()
	root, err := install.Open(context.Background(), dir, install.Options{NoSync: true})
	if err != nil {
		w.t.Fatal(err)
	}
	defer root.Close()
	ix := w.index(dir)
	var rs []repo.Requirement
	for _, s := range reqs {
		r, err := repo.ParseRequirement(s)
		if err != nil {
			w.t.Fatal(err)
		}
		rs = append(rs, r)
	}
	recs, err := root.DB().List()
	if err != nil {
		w.t.Fatal(err)
	}
	plan, err := txn.NewPlan(txn.Spec{Action: txn.Install, Requires: rs, Root: root.Dir(), Records: recs, Catalog: ix, Cache: w.cache})
	if err != nil {
		w.t.Fatal(err)
	}
	target := txn.Target{Root: root, Fetcher: &txn.Fetcher{Source: ix.Source, Jobs: 2, Cache: w.cache}}
	if with != nil {
		with(root, &target)
	}
	plan.Bind(target)
	out, err := plan.Apply(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	return out
}

// openRoot opens a new root in a temporary directory, without syncs, closed at the test's end.
func openRoot(t *testing.T) *install.Root {
	t.Helper()
	root, err := install.Open(context.Background(), filepath.Join(t.TempDir(), "root"), install.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root
}

// record is the record of p as an install of it writes one: its entry with its archive.
func record(p repo.Package) db.Record {
	return db.Record{Name: p.Name, Version: p.Version, Kind: p.Kind, SHA256: p.SHA256, Depends: p.Depends, Optional: p.Optional,
		Peers: p.Peers, Bin: p.Bin, Lib: p.Lib, Summary: p.Summary, Provides: p.Provides, Conflicts: p.Conflicts,
		Replaces: p.Replaces, Into: p.Into, Env: p.Env}
}

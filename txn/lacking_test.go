package txn_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pkg/db"
	"pkg/pkgtest/testrepo"
	"pkg/repo"
	"pkg/txn"
)

// TestReinstallLacking plans reinstalls in a root whose records lack dependencies (app's
// lib, tool's foo, as a repair that could not record their deleted trees leaves them): a
// reinstall of app installs lib with it, at the newest version app allows, as app's
// dependency, and moves app to no newer version; tool's lack is not its business. A
// reinstall of tool, whose foo no repository offers, is refused naming both; one that
// could install what a package lacks only by changing an installed package is refused,
// naming that package.
func TestReinstallLacking(t *testing.T) {
	w := newWorld(t)
	app := addPackage(t, w.repo, "app", "1.0", "lib>=1")
	addPackage(t, w.repo, "app", "1.1", "lib>=1")
	addPackage(t, w.repo, "lib", "1.0")
	addPackage(t, w.repo, "lib", "2.0")
	tool := addPackage(t, w.repo, "tool", "1.0")
	tool.Depends = []repo.Requirement{{Name: "foo"}} // foo was offered once
	ix := w.index("")
	recs := []db.Record{record(app), record(tool)}
	requested := map[string]repo.Requirement{"app": {Name: "app"}, "tool": {Name: "tool"}}
	reinstall := func(recs []db.Record, names ...string) (*txn.Plan, error) {
		return txn.NewPlan(txn.Spec{Action: txn.Reinstall, Names: names, Records: recs, Requested: requested, Catalog: ix})
	}

	p, err := reinstall(recs, "app")
	if err != nil {
		t.Fatalf("reinstall app lacking lib: %v", err)
	}
	want := []txn.Change{
		{Action: txn.Install, Name: "lib", Version: "2.0", Why: "dependency of app"},
		{Action: txn.Reinstall, Name: "app", Version: "1.0", Why: "requested"},
	}
	checkChanges(t, "reinstall app lacking lib", p, want)

	_, err = reinstall(recs, "tool")
	if err == nil || !strings.Contains(err.Error(), "tool 1.0 lacks (foo)") || !strings.Contains(err.Error(), `"foo" not found`) {
		t.Errorf("reinstall tool lacking foo, which no repository offers: %v", err)
	}

	lib, err := ix.Lookup(repo.Requirement{Name: "lib", Constraints: []repo.Constraint{{Op: "=", Version: "1.0"}}})
	if err != nil {
		t.Fatal(err)
	}
	recs[0].Depends = []repo.Requirement{{Name: "lib", Constraints: []repo.Constraint{{Op: ">=", Version: "2"}}}}
	_, err = reinstall(append(recs, record(lib)), "app")
	if err == nil || !strings.Contains(err.Error(), "would change lib 1.0 to 2.0") {
		t.Errorf("reinstall app lacking lib>=2, lib 1.0 installed: %v; want it refused as it would change lib", err)
	}
}

// TestReinstallTreeless: a reinstall of app puts back lib, installed and recorded, whose
// tree was deleted by hand, at its installed version (not the newest), as app's
// dependency; one of a version no repository offers any more is a *repo.NotOfferedError.
func TestReinstallTreeless(t *testing.T) {
	w := newWorld(t)
	app := addPackage(t, w.repo, "app", "1.0", "lib>=1")
	lib := addPackage(t, w.repo, "lib", "1.0")
	addPackage(t, w.repo, "lib", "2.0")
	ix := w.index("")
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "pkgs", "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	recs := []db.Record{record(app), record(lib)}
	requested := map[string]repo.Requirement{"app": {Name: "app"}}
	p, err := txn.NewPlan(txn.Spec{Action: txn.Reinstall, Names: []string{"app"}, Root: root, Records: recs, Requested: requested, Catalog: ix})
	if err != nil {
		t.Fatalf("reinstall app, lib's tree gone: %v", err)
	}
	checkChanges(t, "reinstall app, lib's tree gone", p, []txn.Change{
		{Action: txn.Reinstall, Name: "lib", Version: "1.0", Why: "dependency of app"},
		{Action: txn.Reinstall, Name: "app", Version: "1.0", Why: "requested"},
	})

	old := record(lib)
	old.Version = "0.9"
	_, err = txn.NewPlan(txn.Spec{Action: txn.Reinstall, Names: []string{"lib"}, Root: root, Records: []db.Record{old}, Catalog: ix})
	var ne *repo.NotOfferedError
	if !errors.As(err, &ne) || ne.Name != "lib" || ne.Version != "0.9" || ne.Cached {
		t.Errorf("reinstall lib 0.9, offered no more: %v; want a *repo.NotOfferedError, not cached", err)
	}
}

// TestReinstallBare: a reinstall of a package a repair recorded Bare, its relations
// unknown, takes them from the index's entry, and installs what they need with it; one
// of a package recorded with its relations keeps them.
func TestReinstallBare(t *testing.T) {
	w := newWorld(t)
	app := addPackage(t, w.repo, "app", "1.0", "lib>=1")
	addPackage(t, w.repo, "lib", "1.0")
	ix := w.index("")
	bare := record(app)
	bare.Depends, bare.Bare = nil, true
	p, err := txn.NewPlan(txn.Spec{Action: txn.Reinstall, Names: []string{"app"}, Records: []db.Record{bare}, Catalog: ix})
	if err != nil {
		t.Fatalf("reinstall app recorded Bare: %v", err)
	}
	var got []string
	for _, pk := range p.Packages() {
		deps := make([]string, len(pk.Depends))
		for i, d := range pk.Depends {
			deps[i] = d.String()
		}
		got = append(got, pk.Name+" "+strings.Join(deps, ","))
	}
	if want := []string{"lib ", "app lib>=1"}; !slices.Equal(got, want) {
		t.Errorf("reinstall app recorded Bare installs %q; want %q", got, want)
	}

	kept := record(app)
	kept.Depends = nil // as the record has it, whatever the index says
	p, err = txn.NewPlan(txn.Spec{Action: txn.Reinstall, Names: []string{"app"}, Records: []db.Record{kept}, Catalog: ix})
	if err != nil {
		t.Fatalf("reinstall app: %v", err)
	}
	if pks := p.Packages(); len(pks) != 1 || len(pks[0].Depends) != 0 {
		t.Errorf("reinstall app recorded without dependencies installs %+v; want app alone, as recorded", pks)
	}
}

// TestReinstallBareProvides: a plan reads a Bare record's relations as its entry's
// wherever it reads them: tool needs virt, which only app's entry provides, so a
// reinstall of both finds nothing lacking but app's lib, which it installs as app's
// dependency; where no repository offers lib, the refusal names app's lack alone. A
// reinstall of tool alone finds virt provided by app, as app's entry says.
func TestReinstallBareProvides(t *testing.T) {
	for _, offered := range []bool{true, false} {
		reinstallBareProvides(t, offered)
	}
}

func reinstallBareProvides(t *testing.T, libOffered bool) {
	w := newWorld(t)
	archive := filepath.Join(t.TempDir(), "app-1.0.tar")
	if err := os.WriteFile(archive, make([]byte, 1024), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := repo.Add(context.Background(), w.repo, archive, repo.Package{Name: "app", Version: "1.0",
		Depends: testrepo.Requires("lib>=1"), Provides: testrepo.Requires("virt")}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var lib repo.Package
	if libOffered {
		lib = addPackage(t, w.repo, "lib", "1.0")
	}
	tool := addPackage(t, w.repo, "tool", "1.0", "virt")
	ix := w.index("")
	bare := record(res.Package)
	bare.Depends, bare.Provides, bare.Bare = nil, nil, true
	recs := []db.Record{bare, record(tool)}
	p, err := txn.NewPlan(txn.Spec{Action: txn.Reinstall, Names: []string{"app", "tool"}, Records: recs, Catalog: ix})
	if !libOffered {
		if err == nil || !strings.Contains(err.Error(), "what app 1.0 lacks (lib>=1):") {
			t.Errorf("reinstall app recorded Bare, lacking lib no repository offers, and tool needing its virt: %v; want app's lack alone named", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("reinstall app recorded Bare and tool needing its virt: %v", err)
	}
	checkChanges(t, "reinstall app recorded Bare and tool needing its virt", p, []txn.Change{
		{Action: txn.Install, Name: "lib", Version: "1.0", Why: "dependency of app"},
		{Action: txn.Reinstall, Name: "app", Version: "1.0", Why: "requested"},
		{Action: txn.Reinstall, Name: "tool", Version: "1.0", Why: "requested"},
	})

	recs = append(recs, record(lib))
	p, err = txn.NewPlan(txn.Spec{Action: txn.Reinstall, Names: []string{"tool"}, Records: recs, Catalog: ix})
	if err != nil {
		t.Fatalf("reinstall tool needing virt, which app recorded Bare provides: %v", err)
	}
	if len(p.Changes) != 1 || p.Changes[0].Name != "tool" {
		t.Errorf("reinstall tool needing virt, which app recorded Bare provides: %+v; want tool alone", p.Changes)
	}
}

// checkChanges reports where p's changes, their downloads left out (no cache: every
// archive is downloaded), are not want.
func checkChanges(t *testing.T, what string, p *txn.Plan, want []txn.Change) {
	t.Helper()
	got := slices.Clone(p.Changes)
	for i := range got {
		got[i].Download = 0
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: %+v; want %+v", what, got, want)
	}
}

package txn_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"pkg/db"
	"pkg/install"
	"pkg/pkgtest/testrepo"
	"pkg/repo"
	"pkg/txn"
)

// bareRoot is a root's records where a repair recorded app Bare (db.Record.Bare), whose
// entry depends on lib, and other is installed beside them, none depending on it; and the
// index of the repository that offers all three.
type bareRoot struct {
	recs []db.Record
	ix   *txn.Catalog
}

func newBareRoot(t *testing.T) bareRoot {
	w := newWorld(t)
	app := addPackage(t, w.repo, "app", "1.0", "lib")
	lib := addPackage(t, w.repo, "lib", "1.0")
	other := addPackage(t, w.repo, "other", "1.0")
	bare := record(app)
	bare.Depends, bare.Bin, bare.Bare = nil, nil, true
	return bareRoot{recs: []db.Record{bare, record(lib), record(other)}, ix: w.index("")}
}

// remove plans the removal of names, or with none an autoremove, with requested the
// root's requests and ix the catalog (nil: none).
func (b bareRoot) remove(ix *txn.Catalog, requested []string, names ...string) (*txn.Plan, error) {
	asked := make(map[string]repo.Requirement)
	for _, n := range requested {
		asked[n] = repo.Requirement{Name: n}
	}
	return txn.NewPlan(txn.Spec{Action: txn.Remove, Names: names, Unneeded: len(names) == 0, Records: b.recs, Requested: asked, Catalog: ix})
}

// removed returns the names of the packages p (nil: none) removes.
func removed(p *txn.Plan) []string {
	if p == nil {
		return nil
	}
	var out []string
	for _, c := range p.Changes {
		if c.Action == txn.Remove {
			out = append(out, c.Name)
		}
	}
	return out
}

// TestRemoveBare: a removal reads a Bare record's relations as a reinstall does: those of
// its entry where an index offers its archive, so that app's entry keeps lib from going;
// where none does, its dependencies are unknown, and it refuses to take anything app stays
// beside (*install.UnknownDependenciesError naming app), but app itself, and what goes with it.
func TestRemoveBare(t *testing.T) {
	b := newBareRoot(t)
	for _, names := range [][]string{{"lib"}, {"other"}, {"lib", "other"}} {
		_, err := b.remove(nil, []string{"app"}, names...)
		var ue *install.UnknownDependenciesError
		if !errors.As(err, &ue) || !slices.Equal(ue.Remove, names) || len(ue.Bare) != 1 || ue.Bare[0].Name != "app" {
			t.Errorf("remove %v beside app recorded Bare, no index: %v; want an *install.UnknownDependenciesError naming app", names, err)
		}
	}
	for _, names := range [][]string{{"app"}, {"app", "lib"}} {
		p, err := b.remove(nil, []string{"app"}, names...)
		if err != nil || !slices.Equal(removed(p), names) {
			t.Errorf("remove %v, app recorded Bare, no index: %v, removes %v; want %v removed", names, err, removed(p), names)
		}
	}

	_, err := b.remove(b.ix, []string{"app"}, "lib")
	var de *install.DependentsError
	if !errors.As(err, &de) || de.Removed.Name != "lib" || !slices.Equal(keys(de.By), []string{"app"}) {
		t.Errorf("remove lib under app recorded Bare, its entry depending on lib: %v; want an *install.DependentsError of lib, by app", err)
	}
	p, err := b.remove(b.ix, []string{"app"}, "other")
	if err != nil || !slices.Equal(removed(p), []string{"other"}) {
		t.Errorf("remove other beside app recorded Bare, described by its entry: %v, removes %v; want other removed", err, removed(p))
	}
}

// TestAutoremoveBare: an autoremove reads a Bare record's relations as its entry's, where
// an index offers its archive: it takes other, which nothing needs, and keeps lib, which
// app's entry depends on. Where none does, it removes nothing while app is needed (asked
// for), and says which packages it kept for app (Plan.Kept, KeptBy); app not needed, it
// takes app and all it may have needed.
func TestAutoremoveBare(t *testing.T) {
	b := newBareRoot(t)
	p, err := b.remove(b.ix, []string{"app"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed(p), []string{"other"}) || len(p.Kept) != 0 {
		t.Errorf("autoremove, app recorded Bare and described by its entry: removes %v, keeps %+v; want other removed, nothing kept", removed(p), p.Kept)
	}

	p, err = b.remove(nil, []string{"app"})
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, k := range p.Kept {
		kept = append(kept, k.Name)
		if k.Action != txn.Keep || k.Why != "may be needed by app 1.0, whose dependencies are unknown" {
			t.Errorf("autoremove kept %+v", k)
		}
	}
	if len(p.Changes) != 0 || !slices.Equal(kept, []string{"lib", "other"}) || !slices.Equal(p.KeptBy, []string{"app"}) {
		t.Errorf("autoremove, app recorded Bare, no index: changes %+v, kept %v by %v; want none, lib and other kept by app", p.Changes, kept, p.KeptBy)
	}

	p, err = b.remove(nil, []string{"other"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed(p), []string{"app", "lib"}) || len(p.Kept) != 0 {
		t.Errorf("autoremove, app recorded Bare and not needed, no index: removes %v, keeps %+v; want app and lib removed", removed(p), p.Kept)
	}
}

// TestBareEntryByArchive: an index offering app 1.0 from two archives (one for any
// platform, one for this one), and preferring the other, describes a Bare record of app by the entry of its own archive (its sha256): lib,
// which that entry depends on, is app's dependency to a removal and an autoremove.
func TestBareEntryByArchive(t *testing.T) {
	w := newWorld(t)
	add := func(dir string, size int, p repo.Package) repo.Package {
		t.Helper()
		archive := filepath.Join(t.TempDir(), "app-1.0.tar")
		if err := os.WriteFile(archive, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := repo.Add(context.Background(), dir, archive, p, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.Package
	}
	own := add(w.repo, 1024, repo.Package{Name: "app", Version: "1.0", Depends: testrepo.Requires("lib")})
	other := add(filepath.Join(t.TempDir(), "other"), 2048, repo.Package{Name: "app", Version: "1.0", Platform: repo.Host})
	lib := addPackage(t, w.repo, "lib", "1.0")
	in, err := repo.NewIndex(other, own, lib)
	if err != nil {
		t.Fatal(err)
	}
	ix := &txn.Catalog{Index: in}
	if e, err := in.Lookup(repo.Requirement{Name: "app"}); err != nil || e.SHA256 != other.SHA256 {
		t.Fatalf("the index prefers %v, %v; want the other archive", e.SHA256, err)
	}
	bare := record(own)
	bare.Depends, bare.Bare = nil, true
	b := bareRoot{recs: []db.Record{bare, record(lib)}}

	_, err = b.remove(ix, []string{"app"}, "lib")
	if de := (*install.DependentsError)(nil); !errors.As(err, &de) || !slices.Equal(keys(de.By), []string{"app"}) {
		t.Errorf("remove lib under app recorded Bare, its own archive's entry depending on lib: %v; want an *install.DependentsError by app", err)
	}
	p, err := b.remove(ix, []string{"app"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 0 || len(p.Kept) != 0 {
		t.Errorf("autoremove, app recorded Bare, its own archive's entry depending on lib: removes %v, keeps %+v; want nothing to remove", removed(p), p.Kept)
	}
}

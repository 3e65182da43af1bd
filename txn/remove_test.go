package txn_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"pkg/db"
	"pkg/install"
	"pkg/pkgtest/testrepo"
	"pkg/repo"
	"pkg/txn"
)

// TestRemoveNeeded checks that a removal a package asked for would lose a dependency to,
// through one the removal would take along, is refused in the plan naming that package,
// the one between and the package asked for that needs it in turn, and that removing
// those too takes the rest along.
func TestRemoveNeeded(t *testing.T) {
	rec := func(name string, deps ...string) db.Record {
		return db.Record{Name: name, Version: "1", Depends: testrepo.Requires(deps...)}
	}
	recs := []db.Record{rec("tool", "utils"), rec("utils", "tool", "leaf"), rec("leaf"), rec("top", "mid"), rec("mid", "tool"), rec("z", "top")}
	requested := map[string]repo.Requirement{"tool": {Name: "tool"}, "top": {Name: "top"}, "z": {Name: "z"}}
	plan := func(names ...string) (*txn.Plan, error) {
		return txn.NewPlan(txn.Spec{Action: txn.Remove, Names: names, Root: "/r", Records: recs, Requested: requested})
	}
	_, err := plan("tool")
	var ne *install.NeededError
	if !errors.As(err, &ne) || !errors.Is(err, install.ErrDependency) {
		t.Fatalf("remove tool under top = %v, want an *install.NeededError, an install.ErrDependency", err)
	}
	by, top, z := keys(ne.By), keys(ne.Through["top"]), keys(ne.Through["z"])
	if !slices.Equal(ne.Remove, []string{"tool"}) || !slices.Equal(by, []string{"top", "z"}) || !slices.Equal(top, []string{"mid"}) || !slices.Equal(z, []string{"top"}) {
		t.Errorf("remove tool under top = %v: Remove %q, By %q, top through %q, z through %q; want tool, top z, mid, top", err, ne.Remove, by, top, z)
	}
	p, err := plan("tool", "top", "z")
	if err != nil {
		t.Fatalf("remove tool top z: %v", err)
	}
	var gone []string
	for _, c := range p.Changes {
		gone = append(gone, c.Name)
	}
	slices.Sort(gone)
	if want := []string{"mid", "tool", "top", "utils", "z"}; !slices.Equal(gone, want) {
		t.Errorf("remove tool top z removes %q, want %q", gone, want)
	}
}

// keys returns the keys of recs.
func keys(recs []db.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Key()
	}
	return out
}

// TestRemoveDepended: the removal of a package another asked for depends on is refused
// (*install.DependentsError) naming it, and saying whether it was asked for itself, which
// a removal alone undoes.
func TestRemoveDepended(t *testing.T) {
	w := newWorld(t)
	addPackage(t, w.repo, "lib", "1.0")
	addPackage(t, w.repo, "app", "1.0", "lib")
	dir := filepath.Join(t.TempDir(), "root")
	w.install(dir, "app")
	root, err := install.Open(context.Background(), dir, install.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	recs, err := root.DB().List()
	if err != nil {
		t.Fatal(err)
	}
	for _, asked := range []bool{false, true} {
		requested := map[string]repo.Requirement{"app": {Name: "app"}}
		if asked {
			requested["lib"] = repo.Requirement{Name: "lib"}
		}
		p, err := txn.NewPlan(txn.Spec{Action: txn.Remove, Names: []string{"lib"}, Root: dir, Records: recs, Requested: requested})
		if err != nil {
			t.Fatal(err)
		}
		err = p.Check(root, nil, false)
		var de *install.DependentsError
		if !errors.As(err, &de) || !errors.Is(err, install.ErrDependency) || de.Removed.Key() != "lib" || !slices.Equal(keys(de.By), []string{"app"}) || de.Asked != asked {
			t.Errorf("remove lib under app, lib asked for %v: %v (%+v); want an *install.DependentsError of lib, by app, asked for %v", asked, err, de, asked)
		}
	}
}

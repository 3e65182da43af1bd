package txn_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"pkg/db"
	"pkg/repo"
	"pkg/txn"
)

// TestUpgradeHold plans upgrades of a root holding semver=7.5.4: one of everything keeps
// it, naming it alone is a *txn.HeldError, and naming it with a new constraint moves it
// within that.
func TestUpgradeHold(t *testing.T) {
	w := newWorld(t)
	old := addPackage(t, w.repo, "semver", "7.5.4")
	addPackage(t, w.repo, "semver", "7.6.0")
	addPackage(t, w.repo, "semver", "7.7.1")
	ix := w.index(t.TempDir())
	before := []db.Record{record(old)}
	requested := map[string]repo.Requirement{"semver": {Name: "semver", Constraints: []repo.Constraint{{Op: "=", Version: "7.5.4"}}}}

	p, err := upgrade(ix, before, nil, requested)
	if err != nil || len(p.Changes) > 0 || len(p.Held) != 1 || p.Held[0].HeldBy != "semver=7.5.4" {
		t.Fatalf("upgrade of all = %+v, %v; want semver held by semver=7.5.4", p, err)
	}
	_, err = upgrade(ix, before, []repo.Requirement{{Name: "semver"}}, requested)
	var he *txn.HeldError
	if !errors.As(err, &he) || len(he.Held) != 1 || he.Held[0].Name != "semver" || he.Held[0].Newest != "7.7.1" {
		t.Errorf("upgrade of semver = %v, want a *txn.HeldError of semver below 7.7.1", err)
	}
	newer, err := repo.ParseRequirement("semver<7.7")
	if err != nil {
		t.Fatal(err)
	}
	p, err = upgrade(ix, before, []repo.Requirement{newer}, requested)
	if err != nil || len(p.Packages()) != 1 || p.Packages()[0].Version != "7.6.0" || len(p.Held) != 1 || p.Held[0].HeldBy != "semver<7.7" {
		t.Errorf("upgrade of semver<7.7 = %+v, %v; want semver 7.6.0, held by semver<7.7", p, err)
	}
	// A hold the installed version does not meet (a record older than holds) holds nothing.
	p, err = upgrade(ix, before, nil, map[string]repo.Requirement{"semver": {Name: "semver", Constraints: []repo.Constraint{{Op: "<", Version: "7"}}}})
	if err != nil || len(p.Packages()) != 1 || p.Packages()[0].Version != "7.7.1" {
		t.Errorf("upgrade with a stale hold = %+v, %v; want semver 7.7.1", p, err)
	}
}

// upgrade is the plan of upgrading reqs (all, with none) in a root holding before, which
// asked for requested.
func upgrade(ix *txn.Catalog, before []db.Record, reqs []repo.Requirement, requested map[string]repo.Requirement) (*txn.Plan, error) {
	return txn.NewPlan(txn.Spec{Action: txn.Upgrade, Requires: reqs, Root: "/r", Records: before, Requested: requested, Catalog: ix})
}

// TestNPMHold plans changes of a root holding npm instances, each held by its own request
// alone (docs/commands.md): an upgrade naming a held one is a *txn.HeldError whatever the
// name's other instances, one of everything keeps it, removing nothing; an install of the
// name without the hold's constraint upgrades the held instance to the newest.
func TestNPMHold(t *testing.T) {
	w := newWorld(t)
	old, now := addNPMPackage(t, w.repo, "debug", "4.3.4"), addNPMPackage(t, w.repo, "debug", "4.3.7")
	ix := w.index(t.TempDir())
	rec := func(p repo.Package) db.Record {
		return db.Record{Name: p.Name, Version: p.Version, Kind: repo.KindNPM, SHA256: p.SHA256}
	}
	held := map[string]repo.Requirement{old.Key(): {Name: "debug", Constraints: []repo.Constraint{{Op: "@", Version: "4.3.4"}}}}
	both := maps.Clone(held)
	both[now.Key()] = repo.Requirement{Name: "debug"}
	for _, before := range [][]db.Record{{rec(old), rec(now)}, {rec(now), rec(old)}} {
		_, err := upgrade(ix, before, []repo.Requirement{{Name: "debug"}}, both)
		var he *txn.HeldError
		if !errors.As(err, &he) || len(he.Held) != 1 || he.Held[0].From != "4.3.4" || he.Held[0].Newest != "4.3.7" || he.Held[0].HeldBy != "debug@4.3.4" {
			t.Errorf("upgrade of debug = %v, want a *txn.HeldError of debug 4.3.4 below 4.3.7", err)
		}
		p, err := upgrade(ix, before, nil, both)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Changes) > 0 || len(p.Held) != 1 || p.Held[0].Version != "4.3.4" || p.Held[0].HeldBy != "debug@4.3.4" {
			t.Errorf("upgrade of all: changes %+v, held %+v; want none, and debug 4.3.4 held by debug@4.3.4", p.Changes, p.Held)
		}
	}
	p, err := txn.NewPlan(txn.Spec{Action: txn.Install, Requires: []repo.Requirement{{Name: "debug"}}, Root: "/r", Records: []db.Record{rec(old)}, Requested: held, Catalog: ix})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 1 || p.Changes[0].Action != txn.Upgrade || p.Changes[0].From != "4.3.4" || p.Changes[0].Version != "4.3.7" {
		t.Errorf("install of debug over debug@4.3.4: changes %+v, unchanged %+v; want debug upgraded to 4.3.7", p.Changes, p.Unchanged)
	}
}

// besideRoot is a repository offering dep 1.0.0 and 2.0.0, a 1.0.0 depending on
// dep@~1.0.0 and b 1.0.0 on dep@^2.0.0, and the cases of a root holding them: dep 1.0.0,
// not asked for, kept by a's range beside dep 2.0.0 for b; dep 1.0.0 asked for; and a
// root without b, nothing beside dep 1.0.0. Each says the version beside dep 1.0.0.
func besideRoot(t *testing.T) (*txn.Catalog, []besideCase) {
	w := newWorld(t)
	dep1, dep2 := addNPMPackage(t, w.repo, "dep", "1.0.0"), addNPMPackage(t, w.repo, "dep", "2.0.0")
	a, b := addNPMPackage(t, w.repo, "a", "1.0.0", "dep@npm:~1.0.0"), addNPMPackage(t, w.repo, "b", "1.0.0", "dep@npm:^2.0.0")
	asked := map[string]repo.Requirement{a.Key(): {Name: "a"}, b.Key(): {Name: "b"}}
	askedDep := maps.Clone(asked)
	askedDep[dep1.Key()] = repo.Requirement{Name: "dep"}
	all := []db.Record{record(a), record(b), record(dep1), record(dep2)}
	return w.index(t.TempDir()), []besideCase{
		{"beside 2.0.0", all, asked, "2.0.0"},
		{"asked for", all, askedDep, ""},
		{"alone", []db.Record{record(a), record(dep1)}, map[string]repo.Requirement{a.Key(): {Name: "a"}}, ""},
	}
}

type besideCase struct {
	name      string
	before    []db.Record
	requested map[string]repo.Requirement
	beside    string
}

// TestOutdatedBeside: outdated says of an npm instance not asked for, where its
// dependents' ranges keep it, the newer instance of its name installed beside it
// (repo.Outdated.Beside); of one asked for, or with no newer instance installed, none.
func TestOutdatedBeside(t *testing.T) {
	ix, cases := besideRoot(t)
	for _, tt := range cases {
		out, err := ix.OutdatedOf(tt.before, tt.requested)
		if err != nil || len(out) != 1 || out[0].Installed != "1.0.0" || out[0].Beside != tt.beside {
			t.Errorf("%s: OutdatedOf = %+v, %v; want dep 1.0.0 beside %q", tt.name, out, err, tt.beside)
		}
	}
}

// addNPMPackage adds to the repository in dir the npm package name at version, a tarball
// holding package/package.json, depending on depends (NAME@npm:RANGE).
func addNPMPackage(t *testing.T, dir, name, version string, depends ...string) repo.Package {
	t.Helper()
	var reqs []repo.Requirement
	for _, d := range depends {
		r, err := repo.ParseRequirement(d)
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, r)
	}
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	data := []byte(`{"name":"` + name + `","version":"` + version + `"}`)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "package/package.json", Mode: 0o644, Size: int64(len(data))}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), name+"-"+version+".tgz")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := repo.Add(t.Context(), dir, file, repo.Package{Name: name, Version: version, Kind: repo.KindNPM, Depends: reqs}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Package
}

// TestUpgradeBeside: an upgrade keeping an npm instance not asked for where its dependents'
// ranges hold it says the newer instance of its name it leaves beside it (Held.Beside); of
// one asked for or named, or with no newer instance installed, it says none.
func TestUpgradeBeside(t *testing.T) {
	ix, cases := besideRoot(t)
	named := cases[0]
	named.name, named.beside = "named", ""
	for _, tt := range append(cases, named) {
		var names []repo.Requirement
		if tt.name == "named" {
			names = []repo.Requirement{{Name: "dep"}}
		}
		p, err := upgrade(ix, tt.before, names, tt.requested)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if len(p.Changes) > 0 || len(p.Held) != 1 || p.Held[0].Name != "dep" || p.Held[0].Version != "1.0.0" || p.Held[0].Beside != tt.beside {
			t.Errorf("%s: changes %+v, held %+v; want dep kept at 1.0.0, beside %q", tt.name, p.Changes, p.Held, tt.beside)
		}
	}
}

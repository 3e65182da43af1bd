package install

import (
	"maps"
	"reflect"
	"slices"
	"testing"

	"pkg/db"
	"pkg/pkgtest/testrepo"
	"pkg/repo"
)

// TestRecorded: a repair that reads the old database describes a package as its record
// does, its relations, into and env included, so that what needs it through a provides
// still does and its prefix paths stay where they were.
func TestRecorded(t *testing.T) {
	sum := "ab"
	old := db.Record{Name: "zlib1g", Version: "1", SHA256: sum, Depends: testrepo.Requires("libc6"), Bin: testrepo.Commands("bin/z"),
		Lib: []string{"lib"}, Summary: "zlib", Origin: "/tmp/z.deb", Provides: testrepo.Requires("libz1"), Conflicts: testrepo.Requires("zlib1<1"),
		Replaces: testrepo.Requires("zlib1"), Into: "lib/node_modules/zlib1g", Env: []string{"Z=1"}}
	candidates := func(name string) ([]Candidate, error) {
		return []Candidate{{Package: repo.Package{Name: name, Version: "1", SHA256: sum}}}, nil
	}
	cs, err := recorded([]db.Record{old}, candidates)("zlib1g")
	if err != nil || len(cs) != 2 {
		t.Fatalf("recorded: %+v, %v; want the record's description first", cs, err)
	}
	want := repo.Package{Name: old.Name, Version: old.Version, SHA256: sum, Depends: old.Depends, Bin: old.Bin, Lib: old.Lib,
		Summary: old.Summary, Origin: old.Origin, Provides: old.Provides, Conflicts: old.Conflicts, Replaces: old.Replaces, Into: old.Into, Env: old.Env}
	if got := cs[0].Package; !reflect.DeepEqual(got, want) {
		t.Errorf("recorded:\ngot  %+v\nwant %+v", got, want)
	}
}

// TestUnneeded: a repair without the old database takes as asked for the packages no
// other one needs, where a provides or an alternative counts as needing.
func TestUnneeded(t *testing.T) {
	recs := []*db.Record{
		{Name: "app", Version: "1", Depends: testrepo.Requires("libz1", "media-types|mime-support")},
		{Name: "zlib1g", Version: "1", Provides: testrepo.Requires("libz1")},
		{Name: "mime-support", Version: "3"},
		{Name: "tool", Version: "1", Depends: testrepo.Requires("lib")},
		{Name: "lib", Version: "1"},
	}
	got := slices.Sorted(maps.Keys(unneeded(recs, nil)))
	if want := []string{"app", "tool"}; !slices.Equal(got, want) {
		t.Errorf("unneeded = %q, want %q", got, want)
	}
	// Packages that need each other, and that nothing else needs, count as asked for, each
	// of them, as eslint and its plugin @eslint-community/eslint-utils, whose peer is eslint:
	// none of the cycle counted, the repair dropped eslint's command and autoremove took
	// eslint's whole tree. What the cycle needs, or a cycle another needs, does not count.
	recs = append(recs,
		&db.Record{Name: "cli", Version: "1", Depends: testrepo.Requires("plug", "lib")},
		&db.Record{Name: "plug", Version: "1", Depends: testrepo.Requires("cli")},
		&db.Record{Name: "top", Version: "1", Depends: testrepo.Requires("a")},
		&db.Record{Name: "a", Version: "1", Depends: testrepo.Requires("b")},
		&db.Record{Name: "b", Version: "1", Depends: testrepo.Requires("a")},
		// A cycle that needs another cycle: the first alone counts.
		&db.Record{Name: "p", Version: "1", Depends: testrepo.Requires("q", "e")},
		&db.Record{Name: "q", Version: "1", Depends: testrepo.Requires("p")},
		&db.Record{Name: "e", Version: "1", Depends: testrepo.Requires("f")},
		&db.Record{Name: "f", Version: "1", Depends: testrepo.Requires("e")})
	got = slices.Sorted(maps.Keys(unneeded(recs, nil)))
	if want := []string{"app", "cli", "p", "plug", "q", "tool", "top"}; !slices.Equal(got, want) {
		t.Errorf("unneeded with cycles = %q, want %q", got, want)
	}
	// Of npm instances that need each other, lib/node_modules/NAME (linked) tells which
	// were asked for: only eslint, its link says, not its plugin, which needs it as a peer;
	// plug, whose link the repair made and that then held cli, was counted asked for too.
	// Where none of the cycle is linked, each of it still counts, as of other kinds.
	npm := func(name string, depends ...string) *db.Record {
		return &db.Record{Name: name, Version: "1.0.0", Kind: repo.KindNPM, Depends: testrepo.Requires(depends...)}
	}
	recs = []*db.Record{
		npm("eslint", "utils@npm:^1.0.0"),
		npm("utils", "eslint@npm:^1.0.0"),
		npm("x", "y@npm:^1.0.0"),
		npm("y", "x@npm:^1.0.0"),
	}
	linked := map[string]repo.Requirement{"eslint@1.0.0": {Name: "eslint"}}
	got = slices.Sorted(maps.Keys(unneeded(recs, linked)))
	if want := []string{"eslint@1.0.0", "x@1.0.0", "y@1.0.0"}; !slices.Equal(got, want) {
		t.Errorf("unneeded with npm cycles, eslint linked = %q, want %q", got, want)
	}
}

// TestRecordedNPM: an npm name's instances are each described as its record does, kind
// included, though the candidates, without an index, know only name, version and sha256:
// the tree pkgs/NAME@VERSION is an npm instance's.
func TestRecordedNPM(t *testing.T) {
	old := []db.Record{
		{Name: "dep", Version: "1.0.0", Kind: repo.KindNPM, SHA256: "a1", Bin: testrepo.Commands("dep")},
		{Name: "dep", Version: "2.0.0", Kind: repo.KindNPM, SHA256: "a2"},
	}
	candidates := func(name string) ([]Candidate, error) {
		return []Candidate{{Package: repo.Package{Name: name, Version: "2.0.0", SHA256: "a2"}}, {Package: repo.Package{Name: name, Version: "1.0.0", SHA256: "a1"}}}, nil
	}
	cs, err := recorded(old, candidates)("dep")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs {
		got = append(got, c.Package.Key())
	}
	if want := []string{"dep@1.0.0", "dep@2.0.0", "dep", "dep"}; !slices.Equal(got, want) {
		t.Errorf("recorded dep: keys %q, want %q", got, want)
	}
	if len(cs) > 0 && !reflect.DeepEqual(cs[0].Package.Bin, old[0].Bin) {
		t.Errorf("recorded dep@1.0.0: bin %v, want %v", cs[0].Package.Bin, old[0].Bin)
	}
}

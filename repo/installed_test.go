package repo

import (
	"reflect"
	"testing"
)

// installedSet: app needs mid and lib; mid needs lib; tool needs nothing; old needs gone
// (not installed); orphan depended on lib once and was left behind.
func installedSet() []Package {
	return []Package{
		{Name: "app", Version: "1", Depends: deps("mid>=1", "lib")},
		{Name: "mid", Version: "1", Depends: deps("lib>=1,<3")},
		{Name: "lib", Version: "1"},
		{Name: "tool", Version: "1"},
		{Name: "leaf", Version: "1"},
		{Name: "orphan", Version: "1", Depends: deps("leaf")},
	}
}

func TestWhy(t *testing.T) {
	tests := []struct {
		name       string
		requested  []string
		dependents []string
		chains     [][]string
	}{
		{"lib", []string{"app", "tool"}, []string{"app", "mid"}, [][]string{{"app", "lib"}}},
		{"lib", []string{"mid", "app"}, []string{"app", "mid"}, [][]string{{"app", "lib"}, {"mid", "lib"}}},
		{"mid", []string{"app"}, []string{"app"}, [][]string{{"app", "mid"}}},
		{"leaf", []string{"app"}, []string{"orphan"}, nil},
		{"app", []string{"app"}, nil, nil},
		{"tool", nil, nil, nil},
	}
	for _, tt := range tests {
		deps, chains := Why(installedSet(), tt.requested, tt.name)
		if !reflect.DeepEqual(deps, tt.dependents) || !reflect.DeepEqual(chains, tt.chains) {
			t.Errorf("Why(%s, requested %v) = %v, %v; want %v, %v", tt.name, tt.requested, deps, chains, tt.dependents, tt.chains)
		}
	}
}

// TestWhyDeepChain finds the shortest of two chains.
func TestWhyDeepChain(t *testing.T) {
	set := []Package{
		{Name: "a", Depends: deps("b", "z")},
		{Name: "b", Depends: deps("c")},
		{Name: "c", Depends: deps("d")},
		{Name: "z", Depends: deps("d")},
		{Name: "d"},
	}
	if _, chains := Why(set, []string{"a"}, "d"); !reflect.DeepEqual(chains, [][]string{{"a", "z", "d"}}) {
		t.Errorf("chains = %v, want a z d", chains)
	}
}

func TestUnneeded(t *testing.T) {
	tests := []struct {
		requested []string
		want      []string
	}{
		{[]string{"app", "tool"}, []string{"leaf", "orphan"}},
		{[]string{"mid"}, []string{"app", "leaf", "orphan", "tool"}},
		{[]string{"orphan", "app", "tool", "gone"}, nil},
		{nil, []string{"app", "leaf", "lib", "mid", "orphan", "tool"}},
	}
	for _, tt := range tests {
		if got := Unneeded(installedSet(), tt.requested); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Unneeded(requested %v) = %v, want %v", tt.requested, got, tt.want)
		}
	}
}

func TestOutdated(t *testing.T) {
	ix := &Index{Packages: []Package{
		{Name: "app", Version: "1"}, {Name: "app", Version: "2", Depends: deps("lib>=2")},
		{Name: "lib", Version: "1"}, {Name: "lib", Version: "1.5"}, {Name: "lib", Version: "2"}, {Name: "lib", Version: "3"},
		{Name: "pin", Version: "1"}, {Name: "pin", Version: "1.1"}, {Name: "pin", Version: "2"},
		{Name: "pre", Version: "1"}, {Name: "pre", Version: "2-rc1"}, {Name: "pre", Version: "2-rc2"},
		{Name: "top", Version: "1"},
		{Name: "user", Version: "1", Depends: deps("lib<3")},
	}}
	installed := []Package{
		{Name: "app", Version: "1"}, {Name: "lib", Version: "1"}, {Name: "pin", Version: "1"},
		{Name: "pre", Version: "2-rc1"}, {Name: "top", Version: "1"}, {Name: "user", Version: "1", Depends: deps("lib<3")},
	}
	pin, _ := ParseRequirement("pin@1")
	got := ix.Outdated(installed, []Hold{{"pin", pin}, {"app", Requirement{Name: "app"}}})
	want := []Outdated{
		{Name: "app", Installed: "1", Allowed: "2", Newest: "2"},
		{Name: "lib", Installed: "1", Allowed: "2", Newest: "3"},
		{Name: "pin", Installed: "1", Allowed: "1.1", Newest: "2", Held: "pin@1"},
		{Name: "pre", Installed: "2-rc1", Allowed: "2-rc2", Newest: "2-rc2"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Outdated =\n%+v\nwant\n%+v", got, want)
	}
	// A requirement that cannot hold with what is installed: the depends alone decide.
	old, _ := ParseRequirement("pin<1")
	got = ix.Outdated(installed, []Hold{{"pin", old}})
	if len(got) != 4 || got[2].Allowed != "2" {
		t.Errorf("Outdated with an impossible request = %+v, want pin allowed 2", got)
	}
}

// TestOutdatedRepublished checks that a version the index has with another archive than
// the one installed is outdated where an upgrade keeps that version, as the upgrade takes
// the index's archive, and not where it moves past it.
func TestOutdatedRepublished(t *testing.T) {
	ix := &Index{Packages: []Package{
		{Name: "same", Version: "1", SHA256: "a"},
		{Name: "re", Version: "1", SHA256: "new"},
		{Name: "up", Version: "1", SHA256: "new"}, {Name: "up", Version: "2", SHA256: "b"},
		{Name: "other", Version: "1", SHA256: "c", Platform: "plan9-amd64"}, {Name: "other", Version: "1", SHA256: "d"},
	}}
	installed := []Package{
		{Name: "same", Version: "1", SHA256: "a"}, {Name: "re", Version: "1", SHA256: "old"},
		{Name: "up", Version: "1", SHA256: "old"}, {Name: "other", Version: "1", SHA256: "d"},
	}
	got := ix.Outdated(installed, nil)
	want := []Outdated{
		{Name: "re", Installed: "1", Allowed: "1", Newest: "1", Republished: true},
		{Name: "up", Installed: "1", Allowed: "2", Newest: "2"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Outdated =\n%+v\nwant\n%+v", got, want)
	}
}

// relationsSet: curl needs libz1, which zlib1g provides, and debconf>=0.5|debconf-2.0, which
// cdebconf meets by its provides (debconf is too old); debconf is left from before.
func relationsSet() []Package {
	return []Package{
		{Name: "curl", Version: "8", Depends: deps("libz1", "debconf>=0.5|debconf-2.0")},
		{Name: "zlib1g", Version: "1:1.2.13", Provides: deps("libz1")},
		{Name: "cdebconf", Version: "0.270", Provides: deps("debconf-2.0")},
		{Name: "debconf", Version: "0.4"},
	}
}

// TestWhyRelations checks that Why names the packages a provides or an alternative meets
// as needed by what requires them.
func TestWhyRelations(t *testing.T) {
	for _, tt := range []struct {
		name       string
		dependents []string
		chains     [][]string
	}{
		{"zlib1g", []string{"curl"}, [][]string{{"curl", "zlib1g"}}},
		{"cdebconf", []string{"curl"}, [][]string{{"curl", "cdebconf"}}},
		{"debconf", nil, nil},
	} {
		deps, chains := Why(relationsSet(), []string{"curl"}, tt.name)
		if !reflect.DeepEqual(deps, tt.dependents) || !reflect.DeepEqual(chains, tt.chains) {
			t.Errorf("Why(%s) = %v, %v; want %v, %v", tt.name, deps, chains, tt.dependents, tt.chains)
		}
	}
	if got := Unneeded(relationsSet(), []string{"curl"}); !reflect.DeepEqual(got, []string{"debconf"}) {
		t.Errorf("Unneeded = %v, want debconf alone", got)
	}
}

// TestUpgradeRelations upgrades through a provides: the provider moves with what needs it.
func TestUpgradeRelations(t *testing.T) {
	installed := []Package{
		{Name: "curl", Version: "8", Depends: deps("libz1"), Archive: "curl-8.tar", SHA256: testSum},
		{Name: "zlib1g", Version: "1", Provides: deps("libz1"), Archive: "zlib1g-1.tar", SHA256: testSum},
		{Name: "tool", Version: "1", Archive: "tool-1.tar", SHA256: testSum},
	}
	ix := testIndex("curl 8 libz1", "zlib1g 1 provides:libz1", "zlib1g 2 provides:libz1", "tool 1", "tool 2")
	got, err := ix.Upgrade(installed, []string{"curl"})
	if want := "tool 1, zlib1g 2, curl 8"; err != nil || ids(got) != want {
		t.Errorf("Upgrade(curl) = %q, %v; want %q", ids(got), err, want)
	}
	got, err = ix.ResolveInstalled(installed, parseReqs(t, "tool"))
	if want := "tool 2, zlib1g 1, curl 8"; err != nil || ids(got) != want {
		t.Errorf("ResolveInstalled(tool) = %q, %v; want %q", ids(got), err, want)
	}
	conflicting := testIndex("curl 8 libz1", "zlib1g 1 provides:libz1", "tool 1", "tool 2 conflicts:zlib1g")
	if _, err := conflicting.ResolveInstalled(installed, parseReqs(t, "tool>=2")); !sameError(err,
		&ConflictsError{Name: "tool", Version: "2", Conflicts: deps("zlib1g")[0], Other: "zlib1g", OtherVersion: "1"}) {
		t.Errorf("ResolveInstalled(tool>=2) = %v, want a *ConflictsError with the installed zlib1g", err)
	}
}

// TestOutdatedBare: a package recorded Bare is outdated where the index offers its version,
// as Upgrade records it again with the index's entry: from the same archive (Bare alone,
// stub's entry saying no more than its record), or from another (Republished too); not where the index does not offer its version, nor
// where an upgrade moves past it.
func TestOutdatedBare(t *testing.T) {
	ix := &Index{Packages: []Package{
		{Name: "app", Version: "1", SHA256: "a", Depends: deps("lib")},
		{Name: "lib", Version: "1", SHA256: "l"},
		{Name: "re", Version: "1", SHA256: "new"},
		{Name: "stub", Version: "1", SHA256: "s"},
		{Name: "up", Version: "1", SHA256: "u"}, {Name: "up", Version: "2", SHA256: "u2"},
	}}
	installed := []Package{
		{Name: "app", Version: "1", SHA256: "a", Bare: true}, {Name: "lib", Version: "1", SHA256: "l"},
		{Name: "re", Version: "1", SHA256: "old", Bare: true}, {Name: "gone", Version: "1", SHA256: "g", Bare: true},
		{Name: "stub", Version: "1", SHA256: "s", Bare: true}, {Name: "up", Version: "1", SHA256: "u", Bare: true},
	}
	got := ix.Outdated(installed, nil)
	want := []Outdated{
		{Name: "app", Installed: "1", Allowed: "1", Newest: "1", Bare: true},
		{Name: "re", Installed: "1", Allowed: "1", Newest: "1", Republished: true, Bare: true},
		{Name: "stub", Installed: "1", Allowed: "1", Newest: "1", Bare: true},
		{Name: "up", Installed: "1", Allowed: "2", Newest: "2"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Outdated =\n%+v\nwant\n%+v", got, want)
	}
	plan, err := ix.Upgrade(installed, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plan {
		if p.Name == "app" && (p.Bare || len(p.Depends) != 1) {
			t.Errorf("Upgrade keeps app as recorded Bare: %+v; want the index's entry, as Outdated says", p)
		}
	}
}

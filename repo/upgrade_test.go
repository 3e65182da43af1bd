package repo

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestUpgrade(t *testing.T) {
	tests := []struct {
		name      string
		index     []string
		installed []string // "name version depends..."
		names     []string
		want      string // the upgraded set, dependencies first
	}{
		{
			"everything",
			[]string{"app 1.0 lib>=1", "app 1.1 lib>=2", "lib 1.5", "lib 2.0", "lib 2.10"},
			[]string{"app 1.0 lib>=1", "lib 1.5"},
			nil,
			"lib 2.10, app 1.1",
		},
		{
			"up to date",
			[]string{"app 1.0 lib>=1", "lib 1.5"},
			[]string{"app 1.0 lib>=1", "lib 1.5"},
			nil,
			"lib 1.5, app 1.0",
		},
		{
			// plugin stays at 1.0 and its lib<2 holds lib, so app cannot reach 1.1.
			"respects other installed packages",
			[]string{"app 1.0 lib>=1", "app 1.1 lib>=2", "lib 1.5", "lib 1.9", "lib 2.0", "plugin 1.0 lib<2", "plugin 2.0"},
			[]string{"app 1.0 lib>=1", "lib 1.5", "plugin 1.0 lib<2"},
			[]string{"app"},
			"lib 1.9, app 1.0, plugin 1.0",
		},
		{
			"named only",
			[]string{"a 1", "a 2", "b 1", "b 2"},
			[]string{"a 1", "b 1"},
			[]string{"b"},
			"a 1, b 2",
		},
		{
			"new dependency",
			[]string{"app 1.0", "app 2.0 extra", "extra 1"},
			[]string{"app 1.0"},
			nil,
			"extra 1, app 2.0",
		},
		{
			"never older than installed",
			[]string{"jq 1.6", "jq 1.7-rc1"},
			[]string{"jq 1.7"},
			nil,
			"jq 1.7",
		},
		{
			"installed version gone from the index",
			[]string{"jq 1.8"},
			[]string{"tool 1 jq<1.8", "jq 1.7"},
			nil,
			"jq 1.7, tool 1",
		},
		{
			"not to a pre-release",
			[]string{"jq 1.7", "jq 1.8", "jq 2.0-rc1"},
			[]string{"jq 1.7"},
			nil,
			"jq 1.8",
		},
		{
			"from a pre-release to its release",
			[]string{"jq 1.7", "jq 2.0-rc1", "jq 2.0", "jq 3.0-beta"},
			[]string{"jq 2.0-rc1"},
			nil,
			"jq 2.0",
		},
		{
			"from a pre-release to a later one of the same release",
			[]string{"jq 1.7", "jq 2.0-rc1", "jq 2.0-rc2", "jq 3.0-beta"},
			[]string{"jq 2.0-rc1"},
			nil,
			"jq 2.0-rc2",
		},
		{
			"multi-digit and pre-release ordering",
			[]string{"jq 1.9", "jq 1.10-rc1", "jq 1.10", "jq 1.9.10"},
			[]string{"jq 1.9"},
			nil,
			"jq 1.10",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := testIndex(tt.index...).Upgrade(testIndex(tt.installed...).Packages, tt.names)
			if err != nil {
				t.Fatal(err)
			}
			if ids(got) != tt.want {
				t.Errorf("Upgrade: got %q, want %q", ids(got), tt.want)
			}
		})
	}
}

// TestUpgradeRepublished: an upgrade takes the archive the publisher republished for the
// installed version of a package it may move, and keeps the others' as installed.
func TestUpgradeRepublished(t *testing.T) {
	ix := testIndex("jq 1.7", "yq 1")
	installed := testIndex("jq 1.7", "yq 1").Packages
	installed[0].SHA256 = strings.Repeat("cd", 32) // jq republished since
	got, err := ix.Upgrade(installed, nil)
	if err != nil || len(got) != 2 || got[0].SHA256 != ix.Packages[0].SHA256 {
		t.Errorf("Upgrade = %+v, %v; want jq 1.7's republished archive", got, err)
	}
	got, err = ix.Upgrade(installed, []string{"yq"})
	if err != nil || len(got) != 2 || got[0].SHA256 != installed[0].SHA256 {
		t.Errorf("Upgrade yq = %+v, %v; want jq kept as installed", got, err)
	}
	if held := ix.HeldBack(installed, nil, got); len(held) != 0 {
		t.Errorf("HeldBack = %+v", held)
	}
}

func TestUpgradeRefuses(t *testing.T) {
	ix := testIndex("app 1.0")
	if _, err := ix.Upgrade(testIndex("app 1.0").Packages, []string{"nope"}); !errors.Is(err, ErrNotInstalled) || errAs[*notInstalledError](err) == nil || errAs[*notInstalledError](err).name != "nope" {
		t.Errorf("Upgrade of a package not installed: %v", err)
	}
}

func TestHeldBack(t *testing.T) {
	ix := testIndex("a 1.0", "a 2.0 b>=2", "b 1.0", "c 1", "c 2")
	installed := testIndex("a 1.0", "b 1.0", "c 1").Packages
	plan, err := ix.Upgrade(installed, nil)
	if err != nil {
		t.Fatal(err)
	}
	held := ix.HeldBack(installed, nil, plan)
	if len(held) != 1 || held[0].Package.Name != "a" || held[0].Package.Version != "1.0" || held[0].Newest != "2.0" ||
		!imposes(held[0].Reason, "b", "b>=2 (required by a 2.0)") {
		t.Errorf("HeldBack = %+v, want a kept at 1.0 for want of b>=2", held)
	}
	// Named upgrades leave the others alone: c could move, but is not held back.
	plan, err = ix.Upgrade(installed, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	if held := ix.HeldBack(installed, []string{"a"}, plan); len(held) != 1 || held[0].Package.Name != "a" {
		t.Errorf("HeldBack of a named upgrade = %+v", held)
	}
}

// TestHeldBackPreRelease does not hold back a package for a pre-release the upgrade
// would not take anyway.
func TestHeldBackPreRelease(t *testing.T) {
	ix := testIndex("jq 1.7", "jq 2.0-rc1 missing", "yq 1.0-rc1", "yq 1.0-rc2", "yq 1.0")
	installed := testIndex("jq 1.7", "yq 1.0-rc1").Packages
	plan, err := ix.Upgrade(installed, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ids(plan) != "jq 1.7, yq 1.0" {
		t.Errorf("Upgrade = %q, want jq 1.7, yq 1.0", ids(plan))
	}
	if held := ix.HeldBack(installed, nil, plan); len(held) != 0 {
		t.Errorf("HeldBack = %+v, want nothing", held)
	}
}

// TestHeldBackNotOffered lists the installed packages the index offers only in older
// versions, or not at all, among those the upgrade may move.
func TestHeldBackNotOffered(t *testing.T) {
	ix := testIndex("a 1.0", "a 2.0", "b 0.8", "b 0.9", "d 1.0 c")
	installed := testIndex("a 1.0", "b 1.0", "c 1", "d 1.0 c").Packages
	tests := []struct {
		names []string
		want  string // name newest older, per held package
	}{
		{nil, "b - 0.9, c - -"},
		{[]string{"a"}, ""},
		{[]string{"d"}, "c - -"},
	}
	for _, tt := range tests {
		plan, err := ix.Upgrade(installed, tt.names)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range ix.HeldBack(installed, tt.names, plan) {
			got = append(got, fmt.Sprintf("%s %s %s", h.Package.Name, cmp.Or(h.Newest, "-"), cmp.Or(h.Older, "-")))
			if h.Newest == "" && h.Reason != nil {
				t.Errorf("HeldBack %v: %s has a reason: %v", tt.names, h.Package.Name, h.Reason)
			}
		}
		slices.Sort(got)
		if g := strings.Join(got, ", "); g != tt.want {
			t.Errorf("HeldBack %v = %q, want %q", tt.names, g, tt.want)
		}
	}
}

// TestResolveInstalled checks that an install keeps what is installed where it can and never
// leaves an installed package's depends broken.
func TestResolveInstalled(t *testing.T) {
	index := []string{"hello 1.0 libgreet>=1.0", "hello 1.1 libgreet>=2.0", "libgreet 1.0", "libgreet 2.0", "libgreet 2.1",
		"tool 1 hello", "new 1 libgreet>=2.1", "other 1"}
	tests := []struct {
		name      string
		index     []string
		installed []string
		reqs      []string
		want      string // the whole selection, dependencies first
		err       error
	}{
		{"an installed dependent moves with a downgrade", index,
			[]string{"hello 1.1 libgreet>=2.0", "libgreet 2.1"}, []string{"libgreet=1.0"}, "libgreet 1.0, hello 1.0", nil},
		{"an installed dependent refuses a downgrade", []string{"hello 1.1 libgreet>=2.0", "libgreet 1.0", "libgreet 2.1"},
			[]string{"hello 1.1 libgreet>=2.0", "libgreet 2.1"}, []string{"libgreet<2"}, "",
			conflict("libgreet", nil, "libgreet<2 (requested)", "libgreet>=2.0 (required by hello 1.1)")},
		{"an installed dependency stays", index,
			[]string{"libgreet 1.0"}, []string{"tool"}, "libgreet 1.0, hello 1.0, tool 1", nil},
		{"an installed dependency moves when it must", index,
			[]string{"hello 1.0 libgreet>=1.0", "libgreet 1.0"}, []string{"new"}, "libgreet 2.1, hello 1.0, new 1", nil},
		{"a requested installed package takes the newest", index,
			[]string{"hello 1.0 libgreet>=1.0", "libgreet 2.0"}, []string{"hello"}, "libgreet 2.0, hello 1.1", nil},
		{"unrelated installed packages stay", index,
			[]string{"other 1", "libgreet 2.0"}, []string{"hello"}, "libgreet 2.0, hello 1.1, other 1", nil},
		{"a kept name's versions are listed newest first", []string{"hello 1.0", "hello 1.1", "hello 1.2", "x 1 hello>=3"},
			[]string{"hello 1.1"}, []string{"x"}, "", conflict("hello", []string{"1.2", "1.1", "1.0"}, "hello>=3 (required by x 1)")},
		{"an installed pre-release is not moved back to a release", []string{"jq 1.7", "jq 2.0-beta", "jq 2.0-rc1", "jq 3.0-alpha"},
			[]string{"jq 2.0-beta"}, []string{"jq"}, "jq 2.0-rc1", nil},
		{"a kept pre-release stays", []string{"jq 1.7", "jq 2.0-beta", "yq 1"},
			[]string{"jq 2.0-beta"}, []string{"yq"}, "jq 2.0-beta, yq 1", nil},
		{"a new install takes a release", []string{"jq 1.7", "jq 2.0-beta"}, nil, []string{"jq"}, "jq 1.7", nil},
		{"an installed version gone from the index stays", []string{"hello 1.1 libgreet>=2.0", "libgreet 2.1"},
			[]string{"libgreet 2.0"}, []string{"hello"}, "libgreet 2.0, hello 1.1", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := testIndex(tt.index...).ResolveInstalled(testIndex(tt.installed...).Packages, parseReqs(t, tt.reqs...))
			switch {
			case tt.err != nil && !sameError(err, tt.err):
				t.Errorf("ResolveInstalled: %q, %#v; want %#v", ids(got), err, tt.err)
			case tt.err == nil && (err != nil || ids(got) != tt.want):
				t.Errorf("ResolveInstalled: %q, %v; want %q", ids(got), err, tt.want)
			}
		})
	}
}

// TestHeldBackNext names, below the newest version, the next one refused for another
// reason: what keeps the package from the newest its other dependents allow.
func TestHeldBackNext(t *testing.T) {
	ix := testIndex("libfoo 1.0", "libfoo 1.2", "libfoo 2.0", "appa 1.0 libfoo>=1.0,<2", "appc 1 libfoo=1.0")
	installed := testIndex("appa 1.0 libfoo>=1.0,<2", "appc 1 libfoo=1.0", "libfoo 1.0").Packages
	plan, err := ix.Upgrade(installed, []string{"libfoo"})
	if err != nil {
		t.Fatal(err)
	}
	held := ix.HeldBack(installed, []string{"libfoo"}, plan)
	if len(held) != 1 {
		t.Fatalf("HeldBack = %+v", held)
	}
	h := held[0]
	if h.Newest != "2.0" || h.Next != "1.2" || !imposes(h.NextReason, "libfoo", "libfoo=1.0 (required by appc 1)") {
		t.Errorf("HeldBack = %+v, want 2.0 then 1.2 refused for appc's libfoo=1.0", h)
	}
}

// TestResolverErrorsTyped checks that Held.Why words the resolver's conflict from its
// fields: the upgrade's own requirements by what they are, not "requested".
func TestResolverErrorsTyped(t *testing.T) {
	ce := &conflictError{Name: "lib", Needs: []imposed{
		{Requirement: Requirement{Name: "lib", Constraints: []Constraint{{Op: "=", Version: "2"}}}},
		{Requirement: Requirement{Name: "lib", Constraints: []Constraint{{Op: "<", Version: "2"}}}, By: "app 1"},
	}}
	h := Held{Package: Package{Name: "lib", Version: "1"}}
	got := h.conflictWhy("2", "the newest", fmt.Errorf("repo: %w", ce))
	if want := `no version of "lib" satisfies lib=2 (the newest) and lib<2 (required by app 1)`; got != want {
		t.Errorf("conflictWhy = %q, want %q", got, want)
	}
	if got := h.conflictWhy("2", "tried", errors.New("search too long")); got != "search too long" {
		t.Errorf("conflictWhy of another error = %q", got)
	}
}

// TestResolveInstalledPinned checks that a requirement pinned to a repository ("b/tool")
// keeps the installed package only where the index, which takes the name from that
// repository alone (Merge), has it, version and archive: else it moves to the index's.
func TestResolveInstalledPinned(t *testing.T) {
	other := strings.Repeat("b", 64)
	tests := []struct {
		name      string
		index     []string
		installed []string
		sum       string // the installed package's sha256; testSum when ""
		req       string
		want      string
	}{
		{"another version moves", []string{"tool 2.0"}, []string{"tool 3.0"}, "", "b/tool", "tool 2.0"},
		{"another archive of the version moves", []string{"tool 2.0"}, []string{"tool 2.0"}, other, "b/tool=2.0", "tool 2.0 " + testSum},
		{"the same archive stays", []string{"tool 2.0", "tool 1.0"}, []string{"tool 2.0"}, "", "b/tool", "tool 2.0 " + testSum},
		{"unpinned, another version stays", []string{"tool 2.0"}, []string{"tool 3.0"}, "", "tool@3", "tool 3.0 " + testSum},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			installed := testIndex(tt.installed...).Packages
			if tt.sum != "" {
				installed[0].SHA256 = tt.sum
			}
			got, err := testIndex(tt.index...).ResolveInstalled(installed, parseReqs(t, tt.req))
			if err != nil || len(got) != 1 {
				t.Fatalf("ResolveInstalled(%s) = %q, %v", tt.req, ids(got), err)
			}
			g := got[0].Name + " " + got[0].Version
			if strings.Count(tt.want, " ") == 2 {
				g += " " + got[0].SHA256
			}
			if g != tt.want {
				t.Errorf("ResolveInstalled(%s) = %q, want %q", tt.req, g, tt.want)
			}
		})
	}
}

// TestUpgradeRepublishedEntry: an upgrade takes the entry the publisher republished for
// the installed archive (another env), as it takes another archive, and outdated says so.
func TestUpgradeRepublishedEntry(t *testing.T) {
	ix := testIndex("jq 1.7")
	ix.Packages[0].Env = []string{"JQ_LIB={root}/lib/jq"}
	installed := testIndex("jq 1.7").Packages
	got, err := ix.Upgrade(installed, nil)
	if err != nil || len(got) != 1 || !slices.Equal(got[0].Env, ix.Packages[0].Env) {
		t.Errorf("Upgrade = %+v, %v; want jq 1.7's republished entry", got, err)
	}
	if out := ix.Outdated(installed, nil); len(out) != 1 || !out[0].Republished {
		t.Errorf("Outdated = %+v; want jq republished", out)
	}
}

// TestHeldBackConflictReason: the reason a package is kept is its own conflict, not the
// first dead end of the search around it (a-man's newest, which like excludes and the
// upgrade leaves alone anyway).
func TestHeldBackConflictReason(t *testing.T) {
	ix := testIndex("brk 1.0", "brk 2.0 conflicts:nc", "like 1.0 a-man<2", "a-man 1.0", "a-man 2.0", "nc 1.0")
	installed := testIndex("brk 1.0", "like 1.0 a-man<2", "a-man 1.0", "nc 1.0").Packages
	plan, err := ix.Upgrade(installed, nil)
	if err != nil {
		t.Fatal(err)
	}
	held := ix.HeldBack(installed, nil, plan)
	i := slices.IndexFunc(held, func(h Held) bool { return h.Package.Name == "brk" })
	var ce *ConflictsError
	if i < 0 || !errors.As(held[i].Reason, &ce) || ce.Other != "nc" && ce.Name != "nc" {
		t.Errorf("HeldBack = %+v, want brk kept at 1.0 for its conflict with nc", held)
	}
}

package repo

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// npmTestIndex builds an index of npm packages from lines of "name version deps...", each dep
// "NAME@RANGE" (written NAME@npm:RANGE), or "optional:NAME@RANGE", "peer:NAME@RANGE".
func npmTestIndex(t *testing.T, lines ...string) *Index {
	t.Helper()
	ix := &Index{Format: 1}
	for _, l := range lines {
		f := strings.Fields(l)
		p := Package{Name: f[0], Version: f[1], Kind: KindNPM, Archive: f[0] + "-" + f[1] + ".tgz", SHA256: testSum}
		for _, w := range f[2:] {
			list := &p.Depends
			switch field, dep, ok := strings.Cut(w, ":"); {
			case ok && field == "optional":
				list, w = &p.Optional, dep
			case ok && field == "peer":
				list, w = &p.Peers, dep
			}
			at := strings.LastIndex(w, "@")
			r, err := ParseRequirement(w[:at] + "@npm:" + w[at+1:])
			if err != nil {
				t.Fatal(err)
			}
			*list = append(*list, r)
		}
		ix.Packages = append(ix.Packages, p)
	}
	return ix
}

// keys lists packages by Key, sorted.
func keys(ps []Package) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.Key()
	}
	slices.Sort(s)
	return strings.Join(s, " ")
}

func TestNPMResolve(t *testing.T) {
	ix := npmTestIndex(t,
		"dep 1.0.0", "dep 1.1.0", "dep 1.2.0-beta.1", "dep 2.0.0", "dep 2.1.0",
		"a 1.0.0 dep@^1.0.0",  // the newest 1.x: 1.1.0, not the pre-release
		"b 1.0.0 dep@~1.0.0",  // 1.1.0 does not satisfy ~1.0.0: a second instance
		"c 1.0.0 dep@>=1.0.0", // satisfied by an instance in the set: no third
		"d 1.0.0 dep@^2.0.0",
		"cyc 1.0.0 cyc2@^1", "cyc2 1.0.0 cyc@^1",
		"opt 1.0.0 optional:gone@^1 optional:bad@^1", "bad 1.0.0 gone@^1",
		"peer 1.0.0 peer:dep@2.0.0",
		"@scope/x 1.0.0 dep@1.x", "@scope/x 2.0.0 dep@*",
	)
	tests := []struct {
		reqs []string
		want string // keys, sorted
	}{
		{[]string{"a"}, "a@1.0.0 dep@1.1.0"},
		{[]string{"a", "b"}, "a@1.0.0 b@1.0.0 dep@1.0.0 dep@1.1.0"},
		{[]string{"a", "c"}, "a@1.0.0 c@1.0.0 dep@1.1.0"},
		{[]string{"c", "d"}, "c@1.0.0 d@1.0.0 dep@2.1.0"}, // c, first, takes the newest of all
		{[]string{"d", "a", "c"}, "a@1.0.0 c@1.0.0 d@1.0.0 dep@1.1.0 dep@2.1.0"},
		{[]string{"cyc"}, "cyc2@1.0.0 cyc@1.0.0"},
		{[]string{"opt"}, "opt@1.0.0"}, // bad's own dependency is missing: left out with it
		{[]string{"peer"}, "dep@2.0.0 peer@1.0.0"},
		{[]string{"@scope/x@npm:^1", "a"}, "@scope/x@1.0.0 a@1.0.0 dep@1.1.0"},
		{[]string{"@scope/x"}, "@scope/x@2.0.0 dep@2.1.0"}, // "*" takes no pre-release
		{[]string{"dep@npm:^1.2.0-beta.0"}, "dep@1.2.0-beta.1"},
	}
	for _, tt := range tests {
		got, err := ix.Resolve(parseReqs(t, tt.reqs...))
		if err != nil {
			t.Errorf("Resolve(%q): %v", tt.reqs, err)
			continue
		}
		if keys(got) != tt.want {
			t.Errorf("Resolve(%q) = %s, want %s", tt.reqs, keys(got), tt.want)
		}
	}
}

// TestNPMOrder: every instance comes after the instances its dependencies resolve to.
func TestNPMOrder(t *testing.T) {
	ix := npmTestIndex(t, "top 1.0.0 mid@^1 leaf@^2", "mid 1.0.0 leaf@^1", "leaf 1.0.0", "leaf 2.0.0")
	got, err := ix.Resolve(parseReqs(t, "top"))
	if err != nil {
		t.Fatal(err)
	}
	pos := make(map[string]int)
	for i, p := range got {
		pos[p.Key()] = i
	}
	for k, m := range Edges(got) {
		for _, q := range m {
			if pos[q.Key()] > pos[k] {
				t.Errorf("%s comes before %s, which it depends on: %s", k, q.Key(), keys(got))
			}
		}
	}
	if want := map[string]string{"leaf": "leaf@2.0.0", "mid": "mid@1.0.0"}; edgeKeys(Edges(got)["top@1.0.0"]) != edgeKeys2(want) {
		t.Errorf("edges of top: %v", Edges(got)["top@1.0.0"])
	}
	if e := Edges(got)["mid@1.0.0"]["leaf"]; e.Key() != "leaf@1.0.0" {
		t.Errorf("mid's leaf: %s, want leaf@1.0.0", e.Key())
	}
}

func edgeKeys(m map[string]Package) string {
	s := make(map[string]string, len(m))
	for n, p := range m {
		s[n] = p.Key()
	}
	return edgeKeys2(s)
}

func edgeKeys2(m map[string]string) string {
	var s []string
	for n, k := range m {
		s = append(s, n+"="+k)
	}
	slices.Sort(s)
	return strings.Join(s, " ")
}

// TestNPMMissing: a required edge that nothing meets names the dependent, the name and the
// range; a request that nothing meets names the name and the range.
func TestNPMMissing(t *testing.T) {
	ix := npmTestIndex(t, "dep 1.0.0", "a 1.0.0 dep@^2.0.0", "b 1.0.0 nothere@^1")
	tests := []struct {
		req           string
		name, by, rng string
	}{
		{"a", "dep", "a 1.0.0", "^2.0.0"},
		{"b", "nothere", "b 1.0.0", "^1"},
		{"dep@npm:>=3", "dep", "", ">=3"},
	}
	for _, tt := range tests {
		_, err := ix.Resolve(parseReqs(t, tt.req))
		var me *MissingError
		if !errors.As(err, &me) || me.Name != tt.name || me.By != tt.by || me.Range != tt.rng {
			t.Errorf("Resolve(%s) = %v (%+v), want a *MissingError of %s, by %q, range %s", tt.req, err, me, tt.name, tt.by, tt.rng)
		}
	}
}

// TestNPMPreferInstalled: an installed instance that a range allows is taken over a newer
// one of the index (dedupe), and the installed instances stay.
func TestNPMPreferInstalled(t *testing.T) {
	ix := npmTestIndex(t, "dep 1.0.0", "dep 1.5.0", "dep 2.0.0", "a 1.0.0 dep@^1", "b 1.0.0 dep@^2")
	installed := []Package{ix.Packages[0], ix.Packages[3]} // dep 1.0.0 and a, which uses it
	got, err := ix.ResolveInstalled(installed, parseReqs(t, "b"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "a@1.0.0 b@1.0.0 dep@1.0.0 dep@2.0.0"; keys(got) != want {
		t.Errorf("ResolveInstalled = %s, want %s", keys(got), want)
	}
}

// TestNPMUpgrade: an upgrade of one name moves the instances of that name, each within the
// ranges that lead to it, and leaves the others; an instance nothing leads to any more goes.
func TestNPMUpgrade(t *testing.T) {
	old := npmTestIndex(t, "dep 1.0.0", "dep 2.0.0", "a 1.0.0 dep@^1", "b 1.0.0 dep@^2", "other 1.0.0")
	installed, err := old.Resolve(parseReqs(t, "a", "b", "other"))
	if err != nil {
		t.Fatal(err)
	}
	ix := npmTestIndex(t, "dep 1.0.0", "dep 1.1.0", "dep 2.0.0", "dep 2.0.1", "a 1.0.0 dep@^1", "b 1.0.0 dep@^2",
		"other 1.0.0", "other 1.1.0")
	tests := []struct {
		names []string
		want  string
	}{
		{[]string{"dep"}, "a@1.0.0 b@1.0.0 dep@1.1.0 dep@2.0.1 other@1.0.0"},
		{[]string{"other"}, "a@1.0.0 b@1.0.0 dep@1.0.0 dep@2.0.0 other@1.1.0"},
		{[]string{"b"}, "a@1.0.0 b@1.0.0 dep@1.0.0 dep@2.0.1 other@1.0.0"}, // b and what it leads to
		{nil, "a@1.0.0 b@1.0.0 dep@1.1.0 dep@2.0.1 other@1.1.0"},
	}
	for _, tt := range tests {
		got, err := ix.Upgrade(installed, tt.names)
		if err != nil {
			t.Errorf("Upgrade(%q): %v", tt.names, err)
			continue
		}
		if keys(got) != tt.want {
			t.Errorf("Upgrade(%q) = %s, want %s", tt.names, keys(got), tt.want)
		}
	}
	// A hold, the range the package was requested by, bounds an instance nothing leads to.
	got, err := ix.Upgrade(installed, []string{"other"}, Hold{"other@1.0.0", parseReqs(t, "other@npm:~1.0.0")[0]})
	if err != nil || !strings.Contains(keys(got), "other@1.0.0") {
		t.Errorf("Upgrade(other) held at ~1.0.0 = %s, %v", keys(got), err)
	}
}

// TestNPMHolds: an npm instance's hold is its own, not its name's other instances': an
// upgrade of the name keeps the held instance within its hold, whichever instance comes
// first, and the other at its newest release; HeldBack names the held one. A request on
// the name with another constraint than the hold of the instance it would take replaces
// that hold: it takes the newest version it allows, the held instance left out; one
// without a hold takes the installed instance.
func TestNPMHolds(t *testing.T) {
	ix := npmTestIndex(t, "debug 4.3.4", "debug 4.3.7", "app 1.0.0 debug@4.3.4")
	old, now := ix.Packages[0], ix.Packages[1]
	hold := Hold{Key: old.Key(), Requirement: parseReqs(t, "debug@4.3.4")[0]}
	for _, installed := range [][]Package{{old, now}, {now, old}} {
		got, err := ix.Upgrade(installed, []string{"debug"}, hold)
		if err != nil || keys(got) != "debug@4.3.4 debug@4.3.7" {
			t.Errorf("Upgrade(debug) of %s = %s, %v; want both kept", keys(installed), keys(got), err)
		}
		held := ix.HeldBack(installed, []string{"debug"}, got, hold)
		if len(held) != 1 || held[0].Package.Key() != old.Key() || held[0].Installed != "4.3.4" || held[0].Newest != "4.3.7" || held[0].Hold == nil {
			t.Errorf("HeldBack(debug) of %s = %+v, want debug 4.3.4 held below 4.3.7 by its hold", keys(installed), held)
		}
	}
	tests := []struct {
		installed []Package
		req       string
		holds     []Hold
		want      string
	}{
		{[]Package{old}, "debug", []Hold{hold}, "debug@4.3.7"},
		{[]Package{old}, "debug@npm:^4.3.0", []Hold{hold}, "debug@4.3.7"},
		{[]Package{old}, "debug@4.3.4", []Hold{hold}, "debug@4.3.4"},
		{[]Package{old}, "debug", nil, "debug@4.3.4"},
		{[]Package{old, ix.Packages[2]}, "debug", []Hold{hold}, "app@1.0.0 debug@4.3.4 debug@4.3.7"},
	}
	for _, tt := range tests {
		got, err := ix.ResolveInstalled(tt.installed, parseReqs(t, tt.req), tt.holds...)
		if err != nil || keys(got) != tt.want {
			t.Errorf("ResolveInstalled(%s) into %s, holds %v = %s, %v; want %s", tt.req, keys(tt.installed), tt.holds, keys(got), err, tt.want)
		}
	}
	// A dependent's range that newer versions also satisfy keeps the held instance it
	// leads to: the request takes the newest beside it, and moves it only where its own
	// range takes a version the dependent's allows.
	ix = npmTestIndex(t, "x 1.2.0", "x 1.2.5", "x 1.9.0", "d 1.0.0 x@~1.2.0")
	installed := []Package{ix.Packages[3], ix.Packages[0]}
	hold = Hold{Key: "x@1.2.0", Requirement: parseReqs(t, "x@1.2.0")[0]}
	for req, want := range map[string]string{"x": "d@1.0.0 x@1.2.0 x@1.9.0", "x@npm:~1.2": "d@1.0.0 x@1.2.5"} {
		got, err := ix.ResolveInstalled(installed, parseReqs(t, req), hold)
		if err != nil || keys(got) != want {
			t.Errorf("ResolveInstalled(%s) into %s, x held at 1.2.0 = %s, %v; want %s", req, keys(installed), keys(got), err, want)
		}
	}
}

// TestNPMUpgradeHeldLedTo: an upgrade keeps a held instance that another's range leads to
// at its hold, whichever name comes first: the range that wants newer takes a newer
// instance beside it, and HeldBack names the held one.
func TestNPMUpgradeHeldLedTo(t *testing.T) {
	for dependent, want := range map[string]string{"app": "app@1.0.0 ms@2.1.2 ms@2.1.3", "zed": "ms@2.1.2 ms@2.1.3 zed@1.0.0"} {
		ix := npmTestIndex(t, "ms 2.1.2", "ms 2.1.3", dependent+" 1.0.0 ms@^2.1.1")
		old := ix.Packages[0]
		installed := []Package{old, ix.Packages[2]}
		hold := Hold{Key: old.Key(), Requirement: parseReqs(t, "ms@npm:2.1.2")[0]}
		got, err := ix.Upgrade(installed, nil, hold)
		if err != nil || keys(got) != want {
			t.Errorf("Upgrade of %s, ms held = %s, %v; want %s", keys(installed), keys(got), err, want)
			continue
		}
		if e := Edges(got)[dependent+"@1.0.0"]["ms"]; e.Version != "2.1.3" {
			t.Errorf("Upgrade of %s: %s leads to ms %s, want 2.1.3", keys(installed), dependent, e.Version)
		}
		held := ix.HeldBack(installed, nil, got, hold)
		if len(held) != 1 || held[0].Package.Key() != old.Key() || held[0].Newest != "2.1.3" || held[0].Hold == nil {
			t.Errorf("HeldBack of %s = %+v, want ms 2.1.2 held below 2.1.3 by its hold", keys(installed), held)
		}
	}
}

// TestNPMHeldBackLedBy: an upgrade that keeps an instance where it is, below the newest
// release, as a dependent's range allows no newer one, says so by that dependent and its
// range (debug 4.3.4's ms@npm:2.1.2), named or not; an instance the upgrade does not move
// (not named, nor led to by one named), one whose dependents would allow newer, and one
// that moves are not listed.
func TestNPMHeldBackLedBy(t *testing.T) {
	ix := npmTestIndex(t, "ms 2.1.2", "ms 2.1.3", "debug 4.3.4 ms@2.1.2", "debug 4.4.0 ms@^2.1.3", "other 1.0.0", "other 1.1.0")
	ms, debug, other := ix.Packages[0], ix.Packages[2], ix.Packages[4]
	installed := []Package{ms, debug, other}
	hold := Hold{Key: debug.Key(), Requirement: parseReqs(t, "debug@4.3.4")[0]}
	for _, names := range [][]string{{"ms"}, nil} {
		got, err := ix.Upgrade(installed, names, hold)
		if err != nil {
			t.Fatalf("Upgrade(%q): %v", names, err)
		}
		var led []Held
		for _, h := range ix.HeldBack(installed, names, got, hold) {
			if h.Package.Name != "debug" {
				led = append(led, h)
			}
		}
		want := Dependent{Requirement: parseReqs(t, "ms@npm:2.1.2")[0], By: "debug 4.3.4"}
		if len(led) != 1 || led[0].Package.Key() != ms.Key() || led[0].Newest != "2.1.3" || len(led[0].LedBy) != 1 ||
			led[0].LedBy[0].By != want.By || led[0].LedBy[0].String() != want.String() {
			t.Errorf("HeldBack(%q) = %+v, want ms 2.1.2 kept below 2.1.3 by debug 4.3.4's ms@npm:2.1.2", names, led)
			continue
		}
		if got, want := led[0].Why(), "debug 4.3.4 depends on ms@npm:2.1.2 (newest 2.1.3)"; got != want {
			t.Errorf("Why() = %q, want %q", got, want)
		}
	}
	// Not moving debug, an upgrade of other leaves ms alone; an upgrade of everything
	// without the hold moves both.
	for _, tt := range []struct {
		names []string
		holds []Hold
	}{{[]string{"other"}, []Hold{hold}}, {nil, nil}} {
		got, err := ix.Upgrade(installed, tt.names, tt.holds...)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range ix.HeldBack(installed, tt.names, got, tt.holds...) {
			if h.Package.Name == "ms" {
				t.Errorf("HeldBack(%q, holds %v) lists %+v", tt.names, tt.holds, h)
			}
		}
	}
}

// TestNPMOutdated: each instance is outdated within the ranges that lead to it.
func TestNPMOutdated(t *testing.T) {
	old := npmTestIndex(t, "dep 1.0.0", "dep 2.0.0", "a 1.0.0 dep@^1", "b 1.0.0 dep@^2")
	installed, err := old.Resolve(parseReqs(t, "a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	ix := npmTestIndex(t, "dep 1.0.0", "dep 1.1.0", "dep 2.0.0", "dep 3.0.0", "a 1.0.0 dep@^1", "b 1.0.0 dep@^2")
	var got []string
	for _, o := range ix.Outdated(installed, nil) {
		got = append(got, o.Name+" "+o.Installed+" "+o.Allowed+" "+o.Newest)
	}
	if want := []string{"dep 1.0.0 1.1.0 3.0.0", "dep 2.0.0 2.0.0 3.0.0"}; !slices.Equal(got, want) {
		t.Errorf("Outdated = %q, want %q", got, want)
	}
}

// TestNPMOutdatedBeside: an instance its dependents' ranges keep where it is names the
// newer version of its name installed beside it; one that may move, the newest installed
// and a held one name none.
func TestNPMOutdatedBeside(t *testing.T) {
	old := npmTestIndex(t, "dep 1.0.0", "dep 2.0.0", "dep 3.0.0", "a 1.0.0 dep@~1.0.0", "b 1.0.0 dep@^2", "c 1.0.0 dep@^3")
	installed, err := old.Resolve(parseReqs(t, "a", "b", "c"))
	if err != nil {
		t.Fatal(err)
	}
	ix := npmTestIndex(t, "dep 1.0.0", "dep 2.0.0", "dep 2.1.0", "dep 3.0.0", "dep 4.0.0", "a 1.0.0 dep@~1.0.0", "b 1.0.0 dep@^2", "c 1.0.0 dep@^3")
	format := func(out []Outdated) (got []string) {
		for _, o := range out {
			got = append(got, o.Name+" "+o.Installed+" "+o.Allowed+" beside:"+o.Beside)
		}
		return got
	}
	want := []string{"dep 1.0.0 1.0.0 beside:3.0.0", "dep 2.0.0 2.1.0 beside:", "dep 3.0.0 3.0.0 beside:"}
	if got := format(ix.Outdated(installed, nil)); !slices.Equal(got, want) {
		t.Errorf("Outdated = %q, want %q", got, want)
	}
	hold := Hold{Key: "dep@1.0.0", Requirement: parseReqs(t, "dep@npm:1.0.0")[0]}
	want[0] = "dep 1.0.0 1.0.0 beside:"
	if got := format(ix.Outdated(installed, []Hold{hold})); !slices.Equal(got, want) {
		t.Errorf("Outdated with dep 1.0.0 held = %q, want %q", got, want)
	}
}

// TestNPMOutdatedHeldLedTo: a held instance that another's range leads to is allowed what
// its hold allows, and said held, as an upgrade keeps it there (TestNPMUpgradeHeldLedTo).
func TestNPMOutdatedHeldLedTo(t *testing.T) {
	ix := npmTestIndex(t, "ms 2.1.2", "ms 2.1.3", "app 1.0.0 ms@^2.1.1")
	installed := []Package{ix.Packages[0], ix.Packages[2]}
	hold := Hold{Key: installed[0].Key(), Requirement: parseReqs(t, "ms@npm:2.1.2")[0]}
	got := ix.Outdated(installed, []Hold{hold})
	want := []Outdated{{Name: "ms", Kind: KindNPM, Installed: "2.1.2", Allowed: "2.1.2", Newest: "2.1.3", Held: hold.Requirement.String()}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Outdated of ms held at 2.1.2, led to by app = %+v, want %+v", got, want)
	}
}

// TestNPMWhy: why and what is unneeded name npm instances by key.
func TestNPMWhy(t *testing.T) {
	ix := npmTestIndex(t, "dep 1.0.0", "dep 2.0.0", "a 1.0.0 dep@^1", "b 1.0.0 dep@^2")
	installed, err := ix.Resolve(parseReqs(t, "a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	by, chains := Why(installed, []string{"a@1.0.0", "b@1.0.0"}, "dep@2.0.0")
	if !slices.Equal(by, []string{"b@1.0.0"}) || len(chains) != 1 || strings.Join(chains[0], " ") != "b@1.0.0 dep@2.0.0" {
		t.Errorf("Why(dep@2.0.0) = %q, %q", by, chains)
	}
	if got := Unneeded(installed, []string{"a@1.0.0"}); !slices.Equal(got, []string{"b@1.0.0", "dep@2.0.0"}) {
		t.Errorf("Unneeded = %q", got)
	}
}

// TestNPMLock: a lockfile holds several versions of an npm name, one line each, sorted by
// version, and reads back to the same set.
func TestNPMLock(t *testing.T) {
	ix := npmTestIndex(t, "dep 1.0.0", "dep 10.0.0", "dep 2.0.0", "a 1.0.0 dep@^1", "b 1.0.0 dep@^2", "c 1.0.0 dep@^10")
	reqs := parseReqs(t, "a", "b", "c")
	pkgs, err := ix.Resolve(reqs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pkgs {
		pkgs[i].Archive = "https://example.com/" + pkgs[i].Archive
	}
	l := NewLock("https://example.com/", reqs, pkgs)
	var lines []string
	for _, p := range l.Packages {
		lines = append(lines, p.Key())
	}
	if want := "a@1.0.0 b@1.0.0 c@1.0.0 dep@1.0.0 dep@2.0.0 dep@10.0.0"; strings.Join(lines, " ") != want {
		t.Errorf("locked %s, want %s", strings.Join(lines, " "), want)
	}
	var b strings.Builder
	if err := l.encode(&b); err != nil {
		t.Fatal(err)
	}
	back, err := decodeLock([]byte(b.String()))
	if err != nil {
		t.Fatalf("read back: %v\n%s", err, b.String())
	}
	order, err := back.Order()
	if err != nil || keys(order) != keys(pkgs) {
		t.Errorf("Order = %s, %v; want %s", keys(order), err, keys(pkgs))
	}
}

// TestNPMResolveClosed resolves random npm indexes and checks what the layout relies on:
// every dependency of every instance chosen has an edge (Edges) to an instance its range
// allows, and every instance is reached from the requests by edges, so that the edges
// computed again from the set are the resolver's choices.
func TestNPMResolveClosed(t *testing.T) {
	rnd := rand.New(rand.NewPCG(33, 1))
	ranges := []string{"^%d.%d.0", "~%d.%d.0", ">=%d.%d.0", "%d.%d.x", "%d.%d.0"}
	resolved, several := 0, 0 // several: with two versions of a name or more
	for round := range 500 {
		const names = 6
		versions := make([][][2]int, names) // of each name, its major and minor versions
		for n := range versions {
			for range 1 + rnd.IntN(4) {
				v := [2]int{rnd.IntN(3), rnd.IntN(3)}
				if !slices.Contains(versions[n], v) {
					versions[n] = append(versions[n], v)
				}
			}
		}
		var lines []string
		for n, vs := range versions {
			for _, v := range vs {
				line := fmt.Sprintf("p%d %d.%d.0", n, v[0], v[1])
				deps := map[int]bool{n: true} // a name once, and not its own
				for range rnd.IntN(3) {
					d := rnd.IntN(names)
					if deps[d] {
						continue
					}
					deps[d] = true
					w := versions[d][rnd.IntN(len(versions[d]))] // a range some version of d meets
					line += fmt.Sprintf(" p%d@"+ranges[rnd.IntN(len(ranges))], d, w[0], w[1])
				}
				lines = append(lines, line)
			}
		}
		ix := npmTestIndex(t, lines...)
		req := fmt.Sprintf("p%d", rnd.IntN(names))
		got, err := ix.Resolve(parseReqs(t, req))
		var me *MissingError
		if errors.As(err, &me) {
			continue
		} else if err != nil {
			t.Fatalf("round %d: Resolve(%s): %v\n%s", round, req, err, strings.Join(lines, "\n"))
		}
		resolved++
		seen := map[string]bool{}
		for _, p := range got {
			seen[p.Name] = true
		}
		if len(seen) < len(got) {
			several++
		}
		edges := Edges(got)
		reached := map[string]bool{}
		var walk func(k string)
		walk = func(k string) {
			if reached[k] {
				return
			}
			reached[k] = true
			for _, q := range edges[k] {
				walk(q.Key())
			}
		}
		for _, p := range got {
			if p.Name == req && !reached[p.Key()] {
				walk(p.Key())
			}
			for _, d := range p.Depends {
				if q, ok := edges[p.Key()][d.Name]; !ok || !d.Allows(q.Version) {
					t.Errorf("round %d: %s's %s has no edge\n%s", round, p.Key(), d, strings.Join(lines, "\n"))
				}
			}
		}
		for _, p := range got {
			if !reached[p.Key()] {
				t.Errorf("round %d: %s chosen, not reached from %s: %s\n%s", round, p.Key(), req, keys(got), strings.Join(lines, "\n"))
			}
		}
	}
	if resolved < 400 || several < 50 {
		t.Errorf("%d of 500 random indexes resolved, %d to several versions of a name: the test checks too little", resolved, several)
	}
}

package db

import (
	"errors"
	"strings"
	"testing"

	"pkg/repo"
)

// TestHolds: a constraint named on the command line replaces the hold of a held npm
// instance of its name, and holds an unheld one only where it allows its version; one that
// holds none of an npm name's instances is UnheldBelow's. A package of another kind takes it.
func TestHolds(t *testing.T) {
	req := func(s string) repo.Requirement {
		r, err := repo.ParseRequirement(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	npm := func(v string) Record { return Record{Name: "debug", Version: v, Kind: repo.KindNPM} }
	recs := []Record{npm("2.6.9"), npm("4.3.4"), npm("4.3.7"), {Name: "tool", Version: "2.0"}}
	requested := map[string]repo.Requirement{"debug@4.3.4": req("debug@npm:4.3.4"), "debug@4.3.7": req("debug")}
	offered := func(string) []string { return []string{"4.3.7", "4.3.4", "2.6.9"} }
	tests := []struct {
		given string
		want  string
	}{
		{"", "debug@4.3.4 debug@npm:4.3.4"},
		{"debug@npm:2.6.9", "debug@2.6.9 debug@npm:2.6.9, debug@4.3.4 debug@npm:2.6.9"},
		{"debug@npm:^4.3.5", "debug@4.3.4 debug@npm:^4.3.5, debug@4.3.7 debug@npm:^4.3.5"},
		{"tool=1.0", "debug@4.3.4 debug@npm:4.3.4, tool tool=1.0"},
	}
	for _, tt := range tests {
		var given []repo.Requirement
		if tt.given != "" {
			given = append(given, req(tt.given))
		}
		var got []string
		for _, h := range Holds(recs, requested, given, offered) {
			got = append(got, h.Key+" "+h.Requirement.String())
		}
		if strings.Join(got, ", ") != tt.want {
			t.Errorf("Holds(%s) = %q, want %q", tt.given, strings.Join(got, ", "), tt.want)
		}
		if err := UnheldBelow(recs, requested, given, offered); err != nil {
			t.Errorf("UnheldBelow(%s) = %v, want nil", tt.given, err)
		}
	}
	unheld := map[string]repo.Requirement{"debug@4.3.7": req("debug")}
	err := UnheldBelow(recs[1:3], unheld, []repo.Requirement{req("debug@npm:2.6.9")}, offered)
	var be *repo.BelowError
	if !errors.As(err, &be) || be.Requirement.String() != "debug@npm:2.6.9" || strings.Join(be.Installed, " ") != "4.3.4 4.3.7" {
		t.Errorf("UnheldBelow(debug@npm:2.6.9) of 4.3.4 and 4.3.7 = %v; want a *repo.BelowError naming both versions", err)
	}
}

// TestHoldsAbove: a constraint named on the command line that allows none of the installed
// versions of an npm name, none held, holds its newest instance where the repositories
// offer a version above it that it allows (an upgrade moves it up there), or none at all
// (the upgrade says so); it is UnheldBelow's where every version it allows is below it.
func TestHoldsAbove(t *testing.T) {
	recs := []Record{{Name: "tool", Version: "2.0.0", Kind: repo.KindNPM}, {Name: "tool", Version: "4.0.0", Kind: repo.KindNPM}}
	requested := map[string]repo.Requirement{"tool@4.0.0": {Name: "tool"}}
	offered := func(name string) []string {
		if name != "tool" {
			return nil
		}
		return []string{"6.0.0", "5.1.0", "5.0.0", "4.0.0", "3.0.0", "2.0.0"}
	}
	for _, tt := range []struct {
		given string
		held  bool
	}{
		{"tool>=5", true},
		{"tool@5", true},
		{"tool=5.1.0", true},
		{"tool@npm:^5", true},
		{"tool>=7", true},
		{"tool@npm:^3", false}, // above 2.0.0, but 4.0.0 would go down
		{"tool=3.0.0", false},
	} {
		r, err := repo.ParseRequirement(tt.given)
		if err != nil {
			t.Fatal(err)
		}
		holds := Holds(recs, requested, []repo.Requirement{r}, offered)
		if got := len(holds) == 1 && holds[0].Key == "tool@4.0.0" && holds[0].Requirement.String() == tt.given; got != tt.held || !tt.held && len(holds) > 0 {
			t.Errorf("Holds(%s) of tool 2.0.0 and 4.0.0 = %v, want tool 4.0.0 held by it %v", tt.given, holds, tt.held)
		}
		err = UnheldBelow(recs, requested, []repo.Requirement{r}, offered)
		var be *repo.BelowError
		if errors.As(err, &be) == tt.held || !tt.held && strings.Join(be.Installed, " ") != "2.0.0 4.0.0" {
			t.Errorf("UnheldBelow(%s) of tool 2.0.0 and 4.0.0 = %v, want a *repo.BelowError %v", tt.given, err, !tt.held)
		}
	}

	// The instance asked for moves up, not a newer one installed as a dependency.
	requested = map[string]repo.Requirement{"tool@2.0.0": {Name: "tool"}}
	r, err := repo.ParseRequirement("tool>=5")
	if err != nil {
		t.Fatal(err)
	}
	holds := Holds(recs, requested, []repo.Requirement{r}, offered)
	if len(holds) != 1 || holds[0].Key != "tool@2.0.0" || holds[0].Requirement.String() != "tool>=5" {
		t.Errorf("Holds(tool>=5) of tool 2.0.0 asked for and 4.0.0 a dependency = %v, want tool 2.0.0 held by it", holds)
	}
}

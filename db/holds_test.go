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
		for _, h := range Holds(recs, requested, given) {
			got = append(got, h.Key+" "+h.Requirement.String())
		}
		if strings.Join(got, ", ") != tt.want {
			t.Errorf("Holds(%s) = %q, want %q", tt.given, strings.Join(got, ", "), tt.want)
		}
		if err := UnheldBelow(recs, requested, given); err != nil {
			t.Errorf("UnheldBelow(%s) = %v, want nil", tt.given, err)
		}
	}
	unheld := map[string]repo.Requirement{"debug@4.3.7": req("debug")}
	err := UnheldBelow(recs[1:3], unheld, []repo.Requirement{req("debug@npm:2.6.9")})
	var be *repo.BelowError
	if !errors.As(err, &be) || be.Requirement.String() != "debug@npm:2.6.9" || strings.Join(be.Installed, " ") != "4.3.4 4.3.7" {
		t.Errorf("UnheldBelow(debug@npm:2.6.9) of 4.3.4 and 4.3.7 = %v; want a *repo.BelowError naming both versions", err)
	}
}

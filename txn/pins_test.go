package txn_test

import (
	"errors"
	"strings"
	"testing"

	"pkg/db"
	"pkg/repo"
	"pkg/txn"
)

// TestPinGone plans changes for a root whose jq 1 was asked for from main (main/jq), with
// team alone in use: a whole upgrade keeps jq, saying why, and so does an upgrade of
// another package; an upgrade naming jq and its reinstall need main, and are refused with
// a *repo.PinGoneError; outdated lists jq as held to main, unused.
func TestPinGone(t *testing.T) {
	r := newTwoRepos(t)
	both := r.index(t, "")
	jq, err := both.Repos()[1].Lookup(repo.Requirement{Name: "jq"})
	if err != nil {
		t.Fatal(err)
	}
	hello, err := both.Lookup(repo.Requirement{Name: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	lib, err := both.Lookup(repo.Requirement{Name: "lib"}) // hello 2's dependency
	if err != nil {
		t.Fatal(err)
	}
	recs := []db.Record{record(jq), record(hello), record(lib)}
	requested := map[string]repo.Requirement{"jq": {Repo: "main", Name: "jq"}, "hello": {Name: "hello"}}
	team := r.read(t, r.w.cache, "", "team")
	spec := func(a txn.Action, reqs []repo.Requirement, names []string) txn.Spec {
		return txn.Spec{Action: a, Requires: reqs, Names: names, Records: recs, Requested: requested, Catalog: team}
	}

	p, err := txn.NewPlan(spec(txn.Upgrade, nil, nil))
	if err != nil {
		t.Fatalf("upgrade with main gone: %v", err)
	}
	var held []txn.Held
	for _, h := range p.Held {
		if h.Name == "jq" {
			held = append(held, h)
		}
	}
	if len(held) != 1 || held[0].Version != "1" || held[0].HeldTo != "main" || held[0].Gone == nil {
		t.Errorf("upgrade with main gone: held %+v; want jq kept at 1, held to main", held)
	}
	for _, c := range p.Changes {
		if c.Name == "jq" {
			t.Errorf("upgrade with main gone moves jq: %+v", c)
		}
	}
	if _, err := txn.NewPlan(spec(txn.Upgrade, []repo.Requirement{{Name: "hello"}}, nil)); err != nil {
		t.Errorf("upgrade hello with main gone: %v", err)
	}
	for _, s := range []txn.Spec{spec(txn.Upgrade, []repo.Requirement{{Name: "jq"}}, nil), spec(txn.Reinstall, nil, []string{"jq"})} {
		_, err := txn.NewPlan(s)
		var pe *repo.PinGoneError
		if !errors.As(err, &pe) || pe.Name != "jq" || pe.Repo != "main" || pe.InUse {
			t.Errorf("%s jq with main gone: %v; want a *repo.PinGoneError of main, not in use", s.Action, err)
		}
	}

	out, err := team.OutdatedOf(recs, requested)
	if err != nil {
		t.Fatal(err)
	}
	var got []repo.Outdated
	for _, o := range out {
		if o.Name == "jq" {
			got = append(got, o)
		}
	}
	if len(got) != 1 || got[0].Allowed != "1" || got[0].Newest != "2" || got[0].HeldTo != "main" || !got[0].Unused {
		t.Errorf("outdated with main gone: %+v; want jq 1, allowed 1, newest 2, held to main, unused", got)
	}
}

// TestPinGoneNPM: an npm instance asked for from a repository no longer in use fails no
// other package's upgrade (its pin would fail the whole resolution).
func TestPinGoneNPM(t *testing.T) {
	r := newTwoRepos(t)
	both := r.index(t, "")
	hello, err := both.Lookup(repo.Requirement{Name: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	lib, err := both.Lookup(repo.Requirement{Name: "lib"}) // hello 2's dependency
	if err != nil {
		t.Fatal(err)
	}
	recs := []db.Record{{Name: "dep", Version: "1.0.0", Kind: repo.KindNPM, SHA256: "00"}, record(hello), record(lib)}
	requested := map[string]repo.Requirement{"dep@1.0.0": {Repo: "main", Name: "dep"}, "hello": {Name: "hello"}}
	team := r.read(t, r.w.cache, "", "team")
	if _, err := txn.NewPlan(txn.Spec{Action: txn.Upgrade, Requires: []repo.Requirement{{Name: "hello"}}, Records: recs, Requested: requested, Catalog: team}); err != nil {
		t.Errorf("upgrade hello with main, an npm instance's, gone: %v", err)
	}
	if _, err := team.OutdatedOf(recs, requested); err != nil {
		t.Errorf("outdated with main, an npm instance's, gone: %v", err)
	}
}

// TestPinGoneRepublished: a package asked for from a repository no longer in use, whose
// version another repository offers from another archive, stays as installed: a whole
// upgrade neither replaces it nor lists it as republished in outdated.
func TestPinGoneRepublished(t *testing.T) {
	r := newTwoRepos(t)
	recs := []db.Record{{Name: "jq", Version: "2", SHA256: strings.Repeat("0", 64)}} // team's jq 2 is another archive
	requested := map[string]repo.Requirement{"jq": {Repo: "main", Name: "jq"}}
	team := r.read(t, r.w.cache, "", "team")

	p, err := txn.NewPlan(txn.Spec{Action: txn.Upgrade, Records: recs, Requested: requested, Catalog: team})
	if err != nil {
		t.Fatalf("upgrade with main gone: %v", err)
	}
	if len(p.Changes) != 0 {
		t.Errorf("upgrade with main gone: changes %+v; want none, jq kept as installed", p.Changes)
	}
	if len(p.Held) != 1 || p.Held[0].Name != "jq" || p.Held[0].Version != "2" || p.Held[0].Gone == nil {
		t.Errorf("upgrade with main gone: held %+v; want jq kept at 2, held to main", p.Held)
	}

	out, err := team.OutdatedOf(recs, requested)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].Allowed != "2" || !out[0].Unused || out[0].Republished {
		t.Errorf("outdated with main gone: %+v; want jq 2 allowed, held to an unused main, not republished", out)
	}
}

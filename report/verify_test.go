package report

import (
	"slices"
	"strings"
	"testing"

	"pkg/db"
	"pkg/install"
)

func TestVerifyOf(t *testing.T) {
	recs := []db.Record{{Name: "a", Files: 2}, {Name: "b", Files: 3}}
	if got := VerifyOf(recs, nil, nil).Text(); got != "verified 2 packages, 5 files" {
		t.Errorf("VerifyOf all: %q", got)
	}
	ps := []install.Problem{
		{Package: "b", Version: "1.0", Path: "x", Kind: "missing"},
		{Package: "b", Version: "1.0", Path: "/r/bin/b", Kind: "modified", What: install.WhatForeign},
	}
	v := VerifyOf(recs, []string{"b"}, ps)
	if v.Packages != 1 || v.Files != 3 || v.Text() != "2 problems found" {
		t.Errorf("VerifyOf b: %+v, %q", v, v.Text())
	}
	pkgs, foreign := v.Repair()
	if !slices.Equal(pkgs, []string{"b"}) || !slices.Equal(foreign, []string{"/r/bin/b"}) {
		t.Errorf("Repair = %q, %q; want [b], [/r/bin/b]", pkgs, foreign)
	}
	var b strings.Builder
	if err := v.WriteText(&b); err != nil || b.String() != ps[0].String()+"\n"+ps[1].String()+"\n" {
		t.Errorf("WriteText: %q, %v", b.String(), err)
	}
}

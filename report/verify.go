package report

import (
	"fmt"
	"io"
	"slices"

	"pkg/db"
	"pkg/install"
	"pkg/internal/units"
)

// VerifyOf is the Verify of checking the packages named among recs (all of them without
// names), which found ps.
func VerifyOf(recs []db.Record, names []string, ps []install.Problem) Verify {
	pkgs, files := 0, 0
	for _, p := range recs {
		if len(names) == 0 || slices.Contains(names, p.Name) {
			pkgs, files = pkgs+1, files+p.Files
		}
	}
	return NewVerify(pkgs, files, ps)
}

// WriteText prints a line per problem.
func (v Verify) WriteText(w io.Writer) error {
	for _, p := range v.Problems {
		if _, err := fmt.Fprintln(w, install.Problem(p)); err != nil {
			return err
		}
	}
	return nil
}

// Text sums up v: what it checked, or how many problems it found.
func (v Verify) Text() string {
	if len(v.Problems) > 0 {
		return units.Count(len(v.Problems), "problem") + " found"
	}
	return "verified " + units.Count(v.Packages, "package") + ", " + units.Count(v.Files, "file")
}

// Repair returns what putting back the packages of v's problems takes: the packages to
// install again, each once, and the files not pkg's that must first move out of the way
// (install.WhatForeign).
func (v Verify) Repair() (pkgs, foreign []string) {
	for _, p := range v.Problems {
		if !slices.Contains(pkgs, p.Package) {
			pkgs = append(pkgs, p.Package)
		}
		if p.What == install.WhatForeign {
			foreign = append(foreign, p.Path)
		}
	}
	return pkgs, foreign
}

package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/repo"
)

// maxArgs returns a usage error naming the arguments past the first max.
func maxArgs(c *cli.Context, max int) error {
	if c.NArg() <= max {
		return nil
	}
	var extra []string
	for _, a := range c.Args().Slice()[max:] {
		extra = append(extra, strconv.Quote(a))
	}
	noun, want := "argument", "no arguments"
	if len(extra) > 1 {
		noun += "s"
	}
	if c.Command.ArgsUsage != "" {
		want = c.Command.ArgsUsage
	}
	name := commandName(c)
	return usagef("%s: unexpected %s %s (%s takes %s)", name, noun, strings.Join(extra, " "), name, want)
}

// commandName is the command as typed after "pkg": "files", "cache list".
func commandName(c *cli.Context) string {
	var names []string
	for _, x := range c.Lineage() {
		if x.Command != nil && x.Command.Name != "" && x.Command.Name != x.App.Name {
			names = append(names, x.Command.Name)
		}
	}
	slices.Reverse(names)
	return strings.Join(names, " ")
}

// unique returns names without repeats, each where it first appears.
func unique(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// installedNames refuses, as a usage error of the command op, an argument that cannot
// name an installed package: a name with a version or constraint, or no name at all.
func installedNames(op string, names []string) error {
	for _, n := range names {
		if r, err := repo.ParseRequirement(n); err == nil && len(r.Constraints) > 0 {
			tip := ""
			if op == "upgrade" {
				tip = fmt.Sprintf(" ('pkg install %s' installs the version it names)", n)
			}
			return usagef("%s takes names of installed packages, not %s%s", op, n, tip)
		}
		if !repo.ValidName(n) && !repo.ValidName(strings.ToLower(n)) { // "Hello" gets a did-you-mean
			return usagef("%s: %q is not a package name", op, n)
		}
	}
	return nil
}

// needInstalled returns the error of the command op for the first of names that
// installed lacks, or nil; a usage error for what installedNames refuses.
func needInstalled(op string, names []string, installed []db.Package) error {
	if err := installedNames(op, names); err != nil {
		return err
	}
	for _, n := range names {
		if !slices.ContainsFunc(installed, func(p db.Package) bool { return p.Name == n }) {
			return notInstalled(op, n, installed)
		}
	}
	return nil
}

// notInstalled is the error of the command op for name, which installed lacks.
func notInstalled(op, name string, installed []db.Package) error {
	tip := didYouMean(name, installed)
	if tip == "" && (op == "info" || op == "files") { // a question about a package: the repository may have it
		tip = fmt.Sprintf(" (try 'pkg search %s')", name)
	}
	return fmt.Errorf("%s %s: not installed%s", op, name, tip)
}

// didYouMean offers the installed packages whose names are close to name, a name not
// installed, as repo.DidYouMean does.
func didYouMean(name string, installed []db.Package) string {
	names := make([]string, len(installed))
	for i, p := range installed {
		names[i] = p.Name
	}
	return repo.DidYouMean(name, names)
}

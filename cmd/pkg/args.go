package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/internal/cliusage"
	"pkg/repo"
)

// The argument checks of cliusage, and its usage errors, as the commands call them.
func needArgs(c *cli.Context, min int, what string) error { return cliusage.NeedArgs(c, min, what) }
func oneArg(c *cli.Context, what string) (string, error)  { return cliusage.OneArg(c, what) }
func maxArgs(c *cli.Context, max int) error               { return cliusage.MaxArgs(c, max) }
func usagef(format string, args ...any) error             { return cliusage.Errorf(format, args...) }

// globalUsagef is usagef for a mistake in the global flags.
func globalUsagef(format string, args ...any) error {
	return &cliusage.UsageError{Msg: fmt.Sprintf(format, args...), Global: true}
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

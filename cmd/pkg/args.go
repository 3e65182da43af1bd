package main

import (
	"errors"
	"fmt"
	"slices"

	"pkg/db"
	"pkg/internal/cliusage"
	"pkg/txn"
)

// usagef is cliusage.Errorf: a usage error of the command.
func usagef(format string, args ...any) error { return cliusage.Errorf(format, args...) }

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

// installedNames is txn.CheckNames for the command op, its refusals usage errors.
func installedNames(op string, names []string) error { return nameUsage(txn.CheckNames(op, names)) }

// needInstalled is txn.NeedInstalled for the command op, with installedNames' usage errors.
func needInstalled(op string, names []string, installed []db.Package) error {
	return nameUsage(txn.NeedInstalled(op, names, installed))
}

// nameUsage makes a *txn.NameError a usage error; upgrade's of a version says what does.
func nameUsage(err error) error {
	var ne *txn.NameError
	if !errors.As(err, &ne) {
		return err
	}
	if ne.Versioned && ne.Op == "upgrade" {
		return usagef("%v ('pkg install %s' installs the version it names)", err, ne.Arg)
	}
	return usagef("%v", err)
}

// notInstalled is the error of the command op for name, which installed lacks; a question
// about a package (info, files) suggests the repository when no installed name is close.
func notInstalled(op, name string, installed []db.Package) error {
	err := txn.NotInstalled(op, name, installed)
	if err.Close == "" && (op == "info" || op == "files") {
		return fmt.Errorf("%w (try 'pkg search %s')", err, name)
	}
	return err
}

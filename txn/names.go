package txn

import (
	"fmt"
	"slices"
	"strings"

	"pkg/db"
	"pkg/repo"
)

// A NameError is an argument of the operation Op that cannot name an installed package:
// a name with a version or constraint (Versioned), or not a package name at all.
type NameError struct {
	Op, Arg   string
	Versioned bool
}

func (e *NameError) Error() string {
	if e.Versioned {
		return fmt.Sprintf("%s takes names of installed packages, not %s", e.Op, e.Arg)
	}
	return fmt.Sprintf("%s: %q is not a package name", e.Op, e.Arg)
}

// A NotInstalledError is a name, an argument of the operation Op, that the root lacks;
// Close offers the installed packages whose names are close to it (repo.DidYouMean).
type NotInstalledError struct {
	Op, Name, Close string
}

func (e *NotInstalledError) Error() string {
	return fmt.Sprintf("%s %s: not installed%s", e.Op, e.Name, e.Close)
}

// CheckNames returns a *NameError for the first of names, the arguments of op, that
// cannot name an installed package.
func CheckNames(op string, names []string) error {
	for _, n := range names {
		if r, err := repo.ParseRequirement(n); err == nil && len(r.Constraints) > 0 {
			return &NameError{Op: op, Arg: n, Versioned: true}
		}
		if !repo.ValidName(n) && !repo.ValidName(strings.ToLower(n)) { // "Hello" gets a did-you-mean
			return &NameError{Op: op, Arg: n}
		}
	}
	return nil
}

// NeedInstalled returns the error of op for the first of names that installed lacks (a
// *NotInstalledError) or cannot name an installed package (CheckNames); nil for none.
func NeedInstalled(op string, names []string, installed []db.Record) error {
	if err := CheckNames(op, names); err != nil {
		return err
	}
	for _, n := range names {
		if !slices.ContainsFunc(installed, func(p db.Record) bool { return p.Name == n }) {
			return NotInstalled(op, n, installed)
		}
	}
	return nil
}

// NotInstalled returns the error of op for name, which installed lacks.
func NotInstalled(op, name string, installed []db.Record) *NotInstalledError {
	names := make([]string, len(installed))
	for i, p := range installed {
		names[i] = p.Name
	}
	return &NotInstalledError{Op: op, Name: name, Close: repo.DidYouMean(name, names)}
}

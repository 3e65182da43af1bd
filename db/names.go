package db

import (
	"fmt"
	"slices"

	"pkg/repo"
)

// A NotInstalledError is a name, an argument of the operation Op, that the root lacks;
// Close offers the installed packages whose names are close to it (repo.DidYouMean).
type NotInstalledError struct {
	Op, Name, Close string
}

func (e *NotInstalledError) Error() string {
	return fmt.Sprintf("%s %s: not installed%s", e.Op, e.Name, e.Close)
}

// NeedInstalled returns the error of op for the first of names that installed lacks (a
// *NotInstalledError) or cannot name an installed package (repo.CheckNames); nil for none.
func NeedInstalled(op string, names []string, installed []Record) error {
	if err := repo.CheckNames(op, names); err != nil {
		return err
	}
	for _, n := range names {
		if !slices.ContainsFunc(installed, func(p Record) bool { return p.Name == n }) {
			return NotInstalled(op, n, installed)
		}
	}
	return nil
}

// NotInstalled returns the error of op for name, which installed lacks.
func NotInstalled(op, name string, installed []Record) *NotInstalledError {
	names := make([]string, len(installed))
	for i, p := range installed {
		names[i] = p.Name
	}
	return &NotInstalledError{Op: op, Name: name, Close: repo.DidYouMean(name, names)}
}

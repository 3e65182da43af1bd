package db

import (
	"fmt"
	"slices"

	"pkg/internal/units"
	"pkg/repo"
)

// A NotInstalledError is a name, an argument of the operation Op, that the root lacks;
// ProvidedBy lists the installed packages that provide it, a virtual name, and Close,
// when none does, offers those whose names are close to it (repo.DidYouMean).
type NotInstalledError struct {
	Op, Name, Close string
	ProvidedBy      []string
}

func (e *NotInstalledError) Error() string {
	if len(e.ProvidedBy) > 0 {
		verb := "provides"
		if len(e.ProvidedBy) > 1 {
			verb = "provide"
		}
		return fmt.Sprintf("%s %s: not installed; installed %s %s it", e.Op, e.Name, units.List(e.ProvidedBy, 0), verb)
	}
	return fmt.Sprintf("%s %s: not installed%s", e.Op, e.Name, e.Close)
}

// NeedInstalled returns the error of op for the first of names that installed lacks (a
// *NotInstalledError), that names several versions installed (an *AmbiguousError) or that
// cannot name an installed package (repo.CheckNames); nil for none (Keys).
func NeedInstalled(op string, names []string, installed []Record) error {
	_, err := Keys(op, names, installed)
	return err
}

// NotInstalled returns the error of op for name, which installed lacks.
func NotInstalled(op, name string, installed []Record) *NotInstalledError {
	names := make([]string, len(installed))
	var providers []string
	for i, p := range installed {
		names[i] = p.Name
		if slices.ContainsFunc(p.Provides, func(v repo.Requirement) bool { return v.Name == name }) {
			providers = append(providers, p.Name)
		}
	}
	if len(providers) > 0 {
		slices.Sort(providers)
		return &NotInstalledError{Op: op, Name: name, ProvidedBy: providers}
	}
	return &NotInstalledError{Op: op, Name: name, Close: repo.DidYouMean(name, names)}
}

package db

import (
	"fmt"
	"slices"
	"strings"

	"pkg/repo"
)

// An AmbiguousError is an argument of the operation Op naming a package several of whose
// versions are installed (npm instances), where Op needs one: Keys lists them all.
type AmbiguousError struct {
	Op, Name string
	Keys     []string // NAME@VERSION of each installed instance, sorted
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%s %s: %d versions are installed (%s): name one", e.Op, e.Name, len(e.Keys), strings.Join(e.Keys, ", "))
}

// Keys returns the key (Record.Key) of the installed package each of args, the arguments
// of op, names: a name that one installed package has, or NAME@VERSION, which picks one of
// the versions of a name installed. An argument that cannot name an installed package (a
// *repo.NameError), that names none (a *NotInstalledError) or several (an
// *AmbiguousError) is refused.
func Keys(op string, args []string, installed []Record) ([]string, error) {
	if err := repo.CheckNames(op, args); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(args))
	for _, a := range args {
		k, err := key(op, a, installed)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// key is Keys of one argument, a, which CheckNames passed.
func key(op, a string, installed []Record) (string, error) {
	q, err := repo.ParseRequirement(a)
	if err != nil {
		return "", err
	}
	var found []Record
	for _, r := range installed {
		if r.Name == q.Name && q.AllowsOf(r.Kind, r.Version) {
			found = append(found, r)
		}
	}
	if len(found) > 1 && len(q.Constraints) > 0 { // "@1.7" allows 1.7.1 too: the exact version first
		if i := slices.IndexFunc(found, func(r Record) bool { return r.Version == q.Constraints[0].Version }); i >= 0 {
			found = found[i : i+1]
		}
	}
	switch len(found) {
	case 0:
		if len(q.Constraints) > 0 && slices.ContainsFunc(installed, func(r Record) bool { return r.Name == q.Name }) {
			return "", &NotInstalledError{Op: op, Name: a, Close: versionsOf(q.Name, installed)}
		}
		return "", NotInstalled(op, q.Name, installed)
	case 1:
		return found[0].Key(), nil
	}
	e := &AmbiguousError{Op: op, Name: a}
	for _, r := range found {
		e.Keys = append(e.Keys, r.Key())
	}
	slices.Sort(e.Keys)
	return "", e
}

// versionsOf says which versions of name installed holds, for a NotInstalledError.
func versionsOf(name string, installed []Record) string {
	var vs []string
	for _, r := range installed {
		if r.Name == name {
			vs = append(vs, r.Version)
		}
	}
	return "; installed: " + strings.Join(vs, ", ")
}

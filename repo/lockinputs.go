package repo

import (
	"fmt"
	"slices"
)

// InputsError is a lockfile made for other requirements than those given.
type InputsError struct {
	Path         string
	Locks, Given []Requirement
}

func (e *InputsError) Error() string {
	return fmt.Sprintf("%s records the requirements %s; the requirements given (%s) must be those, or none", e.Path, JoinRequirements(e.Locks), JoinRequirements(e.Given))
}

// With returns the recorded requirements with each given one in place of those of its name,
// and the given ones of other names added: what a lock keeping the recorded ones and adding
// the given ones is made for.
func (e *InputsError) With() []Requirement {
	reqs := slices.DeleteFunc(slices.Clone(e.Locks), func(l Requirement) bool {
		return slices.ContainsFunc(e.Given, func(g Requirement) bool { return g.Name == l.Name && g.Repo == l.Repo })
	})
	return append(reqs, e.Given...)
}

// ReadLockFor reads the lockfile at path (ReadLock) and refuses, with an *InputsError, one
// made for other requirements than reqs; no reqs stand for the lockfile's own.
func ReadLockFor(path string, reqs []Requirement) (*Lock, error) {
	l, err := ReadLock(path)
	if err == nil {
		err = checkInputs(l, reqs, path)
	}
	return l, err
}

// checkInputs refuses, with an *InputsError, requirements other than those the lockfile l
// at path was made for; no requirements stand for l's own.
func checkInputs(l *Lock, reqs []Requirement, path string) error {
	if len(reqs) == 0 || Inputs(reqs) == Inputs(l.Requires) {
		return nil
	}
	return &InputsError{Path: path, Locks: l.Requires, Given: reqs}
}

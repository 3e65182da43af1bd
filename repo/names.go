package repo

import (
	"fmt"
	"strings"
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

// CheckNames returns a *NameError for the first of names, the arguments of op, that
// cannot name an installed package.
func CheckNames(op string, names []string) error {
	for _, n := range names {
		if r, err := ParseRequirement(n); err == nil && len(r.Constraints) > 0 {
			return &NameError{Op: op, Arg: n, Versioned: true}
		}
		if !ValidName(n) && !ValidName(strings.ToLower(n)) { // "Hello" gets a did-you-mean
			return &NameError{Op: op, Arg: n}
		}
	}
	return nil
}

package repo

import (
	"fmt"
	"strings"

	"pkg/internal/termtext"
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
	return fmt.Sprintf("%s: %s is not a package name", e.Op, termtext.Quote(e.Arg))
}

// CheckNames returns a *NameError for the first of names, the arguments of op, that
// cannot name an installed package: a name, or NAME@VERSION, which picks one of several
// versions installed (npm's).
func CheckNames(op string, names []string) error {
	for _, n := range names {
		if r, err := ParseRequirement(n); err == nil && r.Repo == "" && len(r.Constraints) == 1 && r.Constraints[0].Op == "@" {
			continue
		}
		if r, err := ParseRequirement(n); err == nil && len(r.Constraints) > 0 {
			return &NameError{Op: op, Arg: n, Versioned: true}
		}
		if !ValidName(n) && !ValidName(strings.ToLower(n)) { // "Libc++" gets a did-you-mean
			return &NameError{Op: op, Arg: n}
		}
	}
	return nil
}

// maxNameLen bounds a package or repository name. npm allows 214 bytes; pkg keeps 128,
// since a name and its version (64) make one file name (.pnpm/NAME@VERSION,
// .pkg/saved/NAME-VERSION.N) within NAME_MAX's 255.
const maxNameLen = 128 // bytes

// ValidName reports whether s is a valid package name: [a-z0-9][a-z0-9._+-]*; an npm
// scoped name @SCOPE/NAME, SCOPE and NAME each [a-z0-9][a-z0-9._~-]* (npm's rule, lower
// case); or an npm name of an old package, [A-Za-z0-9][A-Za-z0-9._-]* with a capital
// (JSONStream), which only a package of kind npm has (capitalized); in at most 128 bytes.
func ValidName(s string) bool { return validName(s) }

// capitalized reports whether the name s has a capital letter: one of npm's names of old
// packages (validate-npm-package-name's validForOldPackages, before npm took lower case
// alone), which pkg takes for a package of kind npm and nothing else.
func capitalized(s string) bool { return strings.ContainsFunc(s, isUpper) }

// ValidRepoName reports whether s is a valid repository name: [a-z0-9][a-z0-9._+-]* in
// at most 128 bytes. A repository's name is a file name and prefixes "REPO/NAME", so it
// is never scoped.
func ValidRepoName(s string) bool { return validRepoName(s) }

func validName(s string) bool {
	if len(s) > maxNameLen {
		return false
	}
	rest, scoped := strings.CutPrefix(s, "@")
	if !scoped {
		return validRepoName(s) || validOldNPMName(s)
	}
	scope, name, ok := strings.Cut(rest, "/")
	return ok && validScopePart(scope) && validScopePart(name)
}

func validRepoName(s string) bool {
	if s == "" || len(s) > maxNameLen || !isNameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameStart(s[i]) && strings.IndexByte("._+-", s[i]) < 0 {
			return false
		}
	}
	return true
}

// validOldNPMName reports whether s, unscoped, is [A-Za-z0-9][A-Za-z0-9._-]*: what npm
// took before its names were lower case, without the "~'!()*" it took then too.
func validOldNPMName(s string) bool {
	if s == "" || len(s) > maxNameLen || !isNameStart(s[0]) && !isUpper(rune(s[0])) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameStart(s[i]) && !isUpper(rune(s[i])) && strings.IndexByte("._-", s[i]) < 0 {
			return false
		}
	}
	return true
}

func isUpper(c rune) bool { return 'A' <= c && c <= 'Z' }

// validScopePart reports whether s, the scope or the name of a scoped name, matches
// [a-z0-9][a-z0-9._~-]*: no "+", so that FileName is unambiguous, and no "/".
func validScopePart(s string) bool {
	if s == "" || !isNameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameStart(s[i]) && strings.IndexByte("._~-", s[i]) < 0 {
			return false
		}
	}
	return true
}

func isNameStart(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'z' }

// FileName returns the valid package name (or instance key) name as one file name: a
// scoped name's "/" becomes "+" ("@eslint/js" is "@eslint+js"). Only scoped names start
// with "@" and their parts hold no "+", so no two names share a file name.
func FileName(name string) string { return strings.Replace(name, "/", "+", 1) }

// NameOfFile is the name, or key, whose FileName is file: only a scoped name starts with
// "@", and its scope holds no "+", so its first "+" is its "/".
func NameOfFile(file string) string {
	if strings.HasPrefix(file, "@") {
		return strings.Replace(file, "+", "/", 1)
	}
	return file
}

func badName(s string) error {
	if len(s) > maxNameLen {
		return &valueError{ErrName, s, fmt.Sprintf("package name %.20q... is %d bytes, over %d", s, len(s), maxNameLen)}
	}
	return &valueError{ErrName, s, fmt.Sprintf("bad package name %s (want [a-z0-9][a-z0-9._+-]*, @SCOPE/NAME of [a-z0-9][a-z0-9._~-]*, or an old npm name of [A-Za-z0-9][A-Za-z0-9._-]*)", termtext.Quote(s))}
}

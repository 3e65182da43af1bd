package tarutil

import (
	"fmt"
	"strings"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"pkg/internal/termtext"
)

// ErrFolded reports a member whose name differs from an earlier member's only in case or
// Unicode normalization: where a directory folds names, the two are one file.
var ErrFolded error = &reason{"names differ only in case or Unicode normalization"}

// FoldedError is ErrFolded for two members, Other the earlier.
type FoldedError struct{ Other, Name string }

func (e *FoldedError) Error() string { return ErrFolded.Error() + e.detail() }

// detail is what e says after ErrFolded's text.
func (e *FoldedError) detail() string {
	return fmt.Sprintf(": %s and %s are one file where names fold", termtext.Quote(e.Other), termtext.Quote(e.Name))
}

func (e *FoldedError) Is(target error) bool { return target == ErrFolded }

// CheckFolded refuses members, as Validate takes them, of which two differ only in case or
// Unicode normalization (see foldKey), for an installer about to create them in a directory
// that folds names (an ext4 or f2fs casefold directory, vfat, exfat): there the second
// would fail to be created, or a symlink under one name would be written through under
// the other. Elsewhere the two are distinct files, and the policy takes them. The error,
// a *MemberError for the later member, names the earlier too (a *FoldedError).
func CheckFolded(members []Member) error {
	seen := make(map[string]int32, len(members)) // most keys are the names themselves
	for i := range members {
		name := members[i].Name
		key := foldKey(name)
		if j, ok := seen[key]; ok {
			return &MemberError{Name: name, Err: &FoldedError{Other: members[j].Name, Name: name}}
		}
		seen[key] = int32(i)
	}
	return nil
}

// foldKey returns a key under which two names that differ only in case or in Unicode
// normalization (a composed character against its decomposition, NFC against NFD) are
// equal: the canonical caseless form, NFD(fold(NFD(name))) (Unicode D145). Names that
// differ in anything else, as two different letters, have different keys.
func foldKey(name string) string {
	if isASCII(name) {
		return strings.ToLower(name) // name itself when it has no capital
	}
	return norm.NFD.String(cases.Fold().String(norm.NFD.String(name)))
}

// isASCII reports whether name is ASCII, whose key is its lower case.
func isASCII(name string) bool {
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 {
			return false
		}
	}
	return true
}

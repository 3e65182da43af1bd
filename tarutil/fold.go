package tarutil

import (
	"strings"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// foldKey returns a key under which two names that differ only in case or in Unicode
// normalization (a composed character against its decomposition, NFC against NFD) are
// equal: the canonical caseless form, NFD(fold(NFD(name))) (Unicode D145). On a
// case-insensitive or normalizing filesystem (macOS, ext4 and f2fs casefold directories,
// ZFS normalization=formD) such names are one file, so a symlink under one would be
// written through under the other: the policy refuses the pair. Names that differ in
// anything else, as two different letters, have different keys.
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

// Package termtext makes text from elsewhere (a server, another process) safe to print.
package termtext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable returns s with its control characters, which could make a terminal run an
// escape sequence, replaced by "?".
func Printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, s)
}

// maxQuoted is how many bytes of a text Quote shows: enough to recognize a name, few
// enough that a name of 4,095 bytes does not fill a screen.
const maxQuoted = 200

// Quote returns s quoted as %q does (control characters escaped), cut after its first
// 200 bytes, at a character's start, with an ellipsis and its length when longer:
// "xxx"… (4095 bytes).
func Quote(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	cut := maxQuoted
	for cut > maxQuoted-utf8.UTFMax && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:cut], len(s))
}

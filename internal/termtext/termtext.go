// Package termtext makes text from elsewhere (a server, another process) safe to print.
package termtext

import (
	"strings"
	"unicode"
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

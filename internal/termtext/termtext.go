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

// WithoutCredentials returns s with the user information of every URL in it removed, as
// https://user:token@host/ becomes https://host/, wherever the URL starts in s: a flag's
// value (--repo=NAME=URL), a word of another process's command line. A URL's user
// information ends at its authority's last "@", before the first "/", "?", "#" or space.
func WithoutCredentials(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			break
		}
		auth := i + len("://")
		end := strings.IndexAny(s[auth:], "/?# \t\n")
		if end < 0 {
			end = len(s) - auth
		}
		at := strings.LastIndexByte(s[auth:auth+end], '@')
		if at < 0 {
			b.WriteString(s[:auth+end])
		} else {
			b.WriteString(s[:auth])
			b.WriteString(s[auth+at+1 : auth+end])
		}
		s = s[auth+end:]
	}
	b.WriteString(s)
	return b.String()
}

// Package termtext makes text from elsewhere (a server, another process) safe to print.
package termtext

import (
	"fmt"
	"net/url"
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

// Quote returns s quoted as %q does, but for what Safe escapes, written as Safe writes it
// (\u001b, not %q's \x1b), cut after its first 200 bytes, at a character's start, with an
// ellipsis and its length when longer: "xxx"… (4095 bytes).
func Quote(s string) string {
	if len(s) <= maxQuoted {
		return quote(s)
	}
	cut := maxQuoted
	for cut > maxQuoted-utf8.UTFMax && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", quote(s[:cut]), len(s))
}

// quote is strconv.Quote with the characters Safe escapes written as \uXXXX.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	from := 0 // the start of what is not written yet
	unquoted := func(to int) {
		q := strconv.Quote(s[from:to])
		b.WriteString(q[1 : len(q)-1])
	}
	for i, r := range s {
		if escaped(r) {
			unquoted(i)
			fmt.Fprintf(&b, `\u%04x`, r)
			from = i + utf8.RuneLen(r)
		}
	}
	unquoted(len(s))
	b.WriteByte('"')
	return b.String()
}

// WithoutUser returns u as messages print it and indexes record it: without its user
// information, a user's name too, which may be a token (https://TOKEN@host/, as GitHub
// takes one). WithoutCredentials does the same for text that was not parsed as a URL.
func WithoutUser(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User = nil
	return c.String()
}

// WithoutCredentials returns s, one argument or location, with the user information of
// every URL in it removed, as https://user:token@host/ becomes https://host/, wherever the
// URL starts in s: a flag's value (--repo=NAME=URL), an argument of another process's
// command line. A URL runs to the next one's "://"; its user information ends at the last
// "@" before its path, query or fragment ("/", "?", "#"); where none is there, a password
// written unescaped may hold one of them (user:pa/ss@host, ci:2024#x@host), and the last
// "@" after it that does not begin a path's segment (npm's /@scope/) ends it. A URL with
// "@" in its path elsewhere (/npm/pkg@1.0/) may so lose more than its user information.
// White space is taken as part of a password. One that holds "@" and then "/"
// (u:p@ss/wd@host) is cut at its first "@", as net/url reads it, so its tail shows; fetch
// refuses such a URL without printing it.
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
		b.WriteString(s[:auth])
		s = s[auth:]
		end := strings.Index(s, "://") // the next URL's
		if end < 0 {
			end = len(s)
		}
		if at := userinfoEnd(s[:end]); at >= 0 {
			s = s[at+1:]
		}
	}
	b.WriteString(s)
	return b.String()
}

// userinfoEnd returns the index of the "@" that ends the user information at the start of
// rest, what follows a URL's "://", or -1 where it has none (WithoutCredentials).
func userinfoEnd(rest string) int {
	cut := strings.IndexAny(rest, "/?#")
	if cut < 0 {
		cut = len(rest)
	}
	if at := strings.LastIndexByte(rest[:cut], '@'); at >= 0 {
		return at
	}
	at := -1
	for i := max(cut, 1); i < len(rest); i++ {
		if rest[i] == '@' && rest[i-1] != '/' {
			at = i
		}
	}
	return at
}

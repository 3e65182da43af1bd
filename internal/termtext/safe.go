package termtext

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// escaped reports whether Safe escapes r: a control character but newline and tab (C0,
// DEL and C1: ESC begins CSI and OSC sequences, which can clear the screen, set the
// title or the clipboard, and BEL ends an OSC one; CR rewrites a line), a bidirectional
// control (U+202E shows what follows reversed, so a name can read as another), or a line
// or paragraph separator.
func escaped(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x2028 && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// clean reports whether s holds nothing Safe escapes.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			for _, r := range s[i:] {
				if r == utf8.RuneError || escaped(r) {
					return false
				}
			}
			return true
		}
	}
	return true
}

// plain reports whether p is printable ASCII, newlines and tabs: what Safe leaves as it
// is without decoding a character.
func plain(p []byte) bool {
	for _, c := range p {
		if c >= utf8.RuneSelf || c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// Safe returns s with what could make a terminal do anything but show text escaped:
// control characters but newline and tab, the bidirectional controls, the line and
// paragraph separators, each as \uXXXX (also an escape inside a JSON string), and bytes
// that are not UTF-8 as \xNN.
func Safe(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case escaped(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Writer writes what is written to it through Safe: a character cut between two writes
// is escaped as the bytes it is cut into, never written raw.
type Writer struct{ w io.Writer }

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w} }

func (w *Writer) Write(p []byte) (int, error) {
	if plain(p) {
		return w.w.Write(p)
	}
	if _, err := w.w.Write([]byte(Safe(string(p)))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Unwrap returns the writer w writes to, for what draws on a terminal itself (progress
// bars), which must make safe what it draws.
func (w *Writer) Unwrap() io.Writer { return w.w }

// HasControl reports whether s holds a control character (newline and tab too) or a
// bidirectional one: what no name or path a person typed holds.
func HasControl(s string) bool {
	for _, r := range s {
		if r == '\n' || r == '\t' || escaped(r) {
			return true
		}
	}
	return false
}

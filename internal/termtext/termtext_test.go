package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"a\nb", `"a\nb"`},
		{strings.Repeat("x", 200), `"` + strings.Repeat("x", 200) + `"`},
		{strings.Repeat("x", 4095), `"` + strings.Repeat("x", 200) + `"… (4095 bytes)`},
		{strings.Repeat("é", 3000), `"` + strings.Repeat("é", 100) + `"… (6000 bytes)`},
		{"x" + strings.Repeat("é", 3000), `"x` + strings.Repeat("é", 99) + `"… (6001 bytes)`}, // not cut inside a character
	}
	for _, tt := range tests {
		if got := Quote(tt.in); got != tt.want || !utf8.ValidString(got) {
			t.Errorf("Quote(%d bytes) = %s, want %s", len(tt.in), got, tt.want)
		}
	}
}

package termtext

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"a\nb", `"a\nb"`},
		{"a\x1bb\a", `"a\u001bb\u0007"`}, // as Safe escapes them, not as %q does
		{"bad\x1b[31mred\u202eX\u00a0", `"bad\u001b[31mred\u202eX\u00a0"`},
		{"a\xffb\U0001F600\U000E0001", "\"a\\xffb\U0001F600\\U000e0001\""},
		{`say "\"`, `"say \"\\\""`},
		{"tab\tcr\r", `"tab\tcr\u000d"`},
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

func TestWithoutCredentials(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://user:token@host/x", "https://host/x"},
		{"https://TOKEN@host", "https://host"},
		{"--repo=https://u:p@h:8080/r/", "--repo=https://h:8080/r/"},
		{"team=http://u:p@h/r/", "team=http://h/r/"},
		{"--repo=team=oci://u:p@h/team/tools", "--repo=team=oci://h/team/tools"},
		{"--repo a=http://u:p@h/ --repo http://v:q@g/", "--repo a=http://h/ --repo http://g/"},
		{"http://u:p@s@h/", "http://h/"}, // an unescaped @ in the password
		{"http://u:p@h?q=1@x", "http://h?q=1@x"},
		{"https://registry.example/@scope/pkg", "https://registry.example/@scope/pkg"}, // @ in the path
		{"https://h/p https://u:p@g", "https://h/p https://g"},
		{"no url here", "no url here"},
		{"ends in ://", "ends in ://"},
		{"x://@h", "x://h"},
		{"https://u:S3c#ret@h/", "https://h/"},
		{"https://u:S3c?ret@h/x", "https://h/x"},
		{"https://u:S3c/ret@h/x", "https://h/x"},
		{"team=https://u:S3c ret@h/", "team=https://h/"},
		{"http://h,http://u:S3cret@g/", "http://h,http://g/"},
		{"https://host:8080/@scope/pkg", "https://host:8080/@scope/pkg"},
		{"https://[::1]:80/@scope/pkg", "https://[::1]:80/@scope/pkg"},
		{"https://ci:2024#Xy@h.invalid/", "https://h.invalid/"},
		{"https://ci:2024/Xy@h.invalid/r/", "https://h.invalid/r/"},
		{"https://u:8#w@h/", "https://h/"},
		{"https://eyJh/bG@host/", "https://host/"},
		{"https://ci:p@ss/wd@h/", "https://ss/wd@h/"}, // as net/url reads it; fetch refuses it
		{"https://u:p@h/@scope/pkg@1", "https://h/@scope/pkg@1"},
	} {
		if got := WithoutCredentials(c.in); got != c.want {
			t.Errorf("WithoutCredentials(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestWithoutUser(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:tok@h/a.tar":  "https://h/a.tar",
		"https://TOKEN@h/a.tar?x#y": "https://h/a.tar?x#y",
		"https://h/a.tar":           "https://h/a.tar",
	} {
		u, err := url.Parse(in)
		if got := WithoutUser(u); err != nil || got != want {
			t.Errorf("WithoutUser(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	if got := WithoutUser(nil); got != "" {
		t.Errorf("WithoutUser(nil) = %q, want \"\"", got)
	}
}

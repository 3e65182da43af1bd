package termtext

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
)

// hostile are strings a repository, a lockfile or another user may put in what pkg
// prints, each with what Safe makes of it.
var hostile = []struct{ in, want string }{
	{"plain text, é, 日本", "plain text, é, 日本"},
	{"two\tcolumns\nand lines", "two\tcolumns\nand lines"},
	{"\x1b]0;title\a", `\u001b]0;title\u0007`},
	{"\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\a", `\u001b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\u0007`},
	{"\x1b[2J\x1b[H", `\u001b[2J\u001b[H`},
	{"over\rwritten", `over\u000dwritten`},
	{"del\x7f", `del\u007f`},
	{"c1 csi \u009b2J", `c1 csi \u009b2J`},
	{"evil\u202egpj.exe", `evil\u202egpj.exe`},
	{"\u2066isolate\u2069 \u200fmark\u061c", `\u2066isolate\u2069 \u200fmark\u061c`},
	{"line\u2028sep", `line\u2028sep`},
	{"cut \xe2\x80", `cut \xe2\x80`},
	{"raw c1 byte \x9b2J", `raw c1 byte \x9b2J`},
}

func TestSafe(t *testing.T) {
	for _, tt := range hostile {
		if got := Safe(tt.in); got != tt.want {
			t.Errorf("Safe(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestWriterJSON: a JSON document written through a Writer still decodes to the same
// strings, its hostile characters escaped.
func TestWriterJSON(t *testing.T) {
	for _, tt := range hostile[:len(hostile)-2] { // the last two are not UTF-8: JSON changes them
		var b bytes.Buffer
		if err := json.NewEncoder(NewWriter(&b)).Encode(map[string]string{"summary": tt.in}); err != nil {
			t.Fatal(err)
		}
		if !clean(b.String()) {
			t.Errorf("%q: %q still holds what a terminal acts on", tt.in, b.String())
		}
		var got map[string]string
		if err := json.Unmarshal(b.Bytes(), &got); err != nil || got["summary"] != tt.in {
			t.Errorf("%q: decoded %q, %v", tt.in, got["summary"], err)
		}
	}
}

// TestWriterCut: a bidi control cut between two writes is not written whole.
func TestWriterCut(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	s := "a\u202eb"
	w.Write([]byte(s[:2]))
	w.Write([]byte(s[2:]))
	if bytes.Contains(b.Bytes(), []byte("\u202e")) {
		t.Errorf("wrote %q", b.String())
	}
}

func TestHasControl(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want bool
	}{
		{"/srv/repo", false}, {"/srv/caf\xe9", false}, {"https://example.com/é/", false},
		{"/srv/\x1b[2J", true}, {"repo\n", true}, {"a\tb", true}, {"\u202erepo", true}, {"\u0085", true},
	} {
		if got := HasControl(tt.in); got != tt.want {
			t.Errorf("HasControl(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// BenchmarkWriter writes lines as pkg's listings do, through a Writer: clean ones (the
// common case, one scan) and ones with a bidirectional control in each.
func BenchmarkWriter(b *testing.B) {
	for _, bc := range []struct{ name, line string }{
		{"clean", "hello      1.2.0      says hello to whoever runs it, in any of 40 languages\n"},
		{"escaped", "hello      1.2.0      says hello \u202eto whoever runs it, in any of 40 languages\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			w := NewWriter(io.Discard)
			p := []byte(bc.line)
			b.ReportAllocs()
			b.SetBytes(int64(len(p)))
			for b.Loop() {
				w.Write(p)
			}
		})
	}
}

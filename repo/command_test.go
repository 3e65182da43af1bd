package repo

import (
	"slices"
	"testing"
)

// TestEntryTextKept checks that an entry's depends and bin are parsed when the index is
// read and written back as the same text, each spelling kept: lockfile digests and
// signatures cover that text.
func TestEntryTextKept(t *testing.T) {
	entry := `{"name":"hello","version":"1.2.0","archive":"hello.tar","size":0,"sha256":"` + testSum +
		`","depends":["lib>=1.0,<2","jq@1.7","x!=2"],"bin":["bin/hello","hello2=bin/hello2","h=bin/hello","hello3=hello3","bin/a=b"]}`
	ix, err := Parse([]byte(`{"format":1,"packages":[` + entry + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	p := ix.Packages[0]
	if got, want := p.Bin[2], (Command{Name: "h", Path: "bin/hello"}); got != want {
		t.Errorf("bin[2] = %#v, want %#v", got, want)
	}
	if got, want := p.Bin[1], (Command{Name: "hello2", Path: "bin/hello2"}); got.Name != want.Name || got.Path != want.Path || got == want {
		t.Errorf("bin[1] = %#v, want %#v spelled NAME=PATH", got, want)
	}
	if got := p.Depends[0]; got.Name != "lib" || !slices.Equal(got.Constraints, []Constraint{{">=", "1.0"}, {"<", "2"}}) {
		t.Errorf("depends[0] = %#v", got)
	}
	if out := jsonText(p); out != entry {
		t.Errorf("entry written as\n%s, want\n%s", out, entry)
	}
}

// TestCommandString checks the entries written for commands made in code: the path alone
// where it names the command, else NAME=PATH.
func TestCommandString(t *testing.T) {
	for _, tt := range []struct {
		c    Command
		want string
	}{
		{Command{Name: "jq", Path: "usr/bin/jq"}, "usr/bin/jq"},
		{Command{Name: "q", Path: "usr/bin/jq"}, "q=usr/bin/jq"},
		{Command{Name: "tool", Path: "tool"}, "tool"},
		{Command{Name: "a=b", Path: "bin/a=b"}, "bin/a=b"},
	} {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.c, got, tt.want)
		}
		if got := ParseCommand(tt.want); got != tt.c {
			t.Errorf("ParseCommand(%q) = %#v, want %#v", tt.want, got, tt.c)
		}
	}
}

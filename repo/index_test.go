package repo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var testSum = strings.Repeat("ab", 32)

var goodIndex = `{"format": 1,
 "packages": [
  {"name": "hello", "version": "1.2.0", "archive": "hello-1.2.0.tar.zst",
   "size": 10240, "sha256": "` + testSum + `",
   "depends": ["libgreet>=1.0"], "bin": ["bin/hello"], "summary": "says hello",
   "installed_size": 40960, "files": 12},
  {"name": "libgreet", "version": "1.0", "archive": "https://example.com/libgreet-1.0.tar.gz",
   "size": 0, "sha256": "` + testSum + `"}
 ]}`

func TestParse(t *testing.T) {
	got, err := Parse([]byte(goodIndex))
	if err != nil {
		t.Fatal(err)
	}
	want := &Index{Format: 1, Packages: []Package{
		{Name: "hello", Version: "1.2.0", Archive: "hello-1.2.0.tar.zst", Size: 10240, SHA256: testSum,
			Depends: deps("libgreet>=1.0"), Bin: bins("bin/hello"), Summary: "says hello",
			InstalledSize: 40960, Files: 12},
		{Name: "libgreet", Version: "1.0", Archive: "https://example.com/libgreet-1.0.tar.gz", SHA256: testSum},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse:\ngot  %+v\nwant %+v", got, want)
	}
}

func TestParseIgnoresUnknownFields(t *testing.T) {
	data := `{"format": 1, "generator": "x", "packages": [{"name": "a", "version": "1",
		"archive": "a.tar", "size": 1, "sha256": "` + testSum + `", "license": "MIT", "extra": {"n": [1]}}]}`
	ix, err := Parse([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(ix.Packages) != 1 || ix.Packages[0].Name != "a" {
		t.Errorf("Parse: got %+v", ix.Packages)
	}
}

func TestParseEmptyLists(t *testing.T) {
	data := `{"format": 1, "packages": [{"name": "a", "version": "1", "archive": "a.tar",
		"sha256": "` + testSum + `", "depends": [], "bin": []}]}`
	ix, err := Parse([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if p := ix.Packages[0]; p.Depends != nil || p.Bin != nil {
		t.Errorf("empty lists: got depends %#v, bin %#v; want nil", p.Depends, p.Bin)
	}
}

func TestParseRelations(t *testing.T) {
	data := `{"format": 1, "packages": [{"name": "zlib1g", "version": "1:1.2.13.dfsg-1", "archive": "z.deb",
		"sha256": "` + testSum + `", "depends": ["libc6>=2.14", "debconf>=0.5|debconf-2.0"],
		"provides": ["libz1", "libz=1:1.2.13"], "conflicts": ["zlib1<1:1.0"], "replaces": ["zlib1g-old"],
		"into": "lib/node_modules/zlib"}]}`
	ix, err := Parse([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	p := ix.Packages[0]
	want := Package{Name: "zlib1g", Version: "1:1.2.13.dfsg-1", Kind: KindDeb, Archive: "z.deb", SHA256: testSum, // a .deb: dpkg's order
		Depends:   []Requirement{{Name: "libc6", Constraints: []Constraint{{">=", "2.14"}}}, {Name: "debconf", Constraints: []Constraint{{">=", "0.5"}}, Or: []Requirement{{Name: "debconf-2.0"}}}},
		Provides:  []Requirement{{Name: "libz1"}, {Name: "libz", Constraints: []Constraint{{"=", "1:1.2.13"}}}},
		Conflicts: []Requirement{{Name: "zlib1", Constraints: []Constraint{{"<", "1:1.0"}}}},
		Replaces:  []Requirement{{Name: "zlib1g-old"}}, Into: "lib/node_modules/zlib"}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("Parse:\ngot  %+v\nwant %+v", p, want)
	}
	back, err := Parse(indexOf(t, p))
	if err != nil || !reflect.DeepEqual(back.Packages[0], want) {
		t.Errorf("Parse(encode(p)) = %+v, %v", back, err)
	}
	text := string(indexOf(t, p))
	for _, w := range []string{`"depends":["libc6\u003e=2.14","debconf\u003e=0.5|debconf-2.0"]`, `"provides":["libz1","libz=1:1.2.13"]`, `"into":"lib/node_modules/zlib"`} {
		if !strings.Contains(text, w) {
			t.Errorf("encoded %s, want %s in it", text, w)
		}
	}
}

func TestNewIndexRefusesNestedAlternatives(t *testing.T) {
	nested := hello(func(p *Package) {
		p.Depends = []Requirement{{Name: "a", Or: []Requirement{{Name: "b", Or: []Requirement{{Name: "c"}}}}}}
	})
	_, err := NewIndex(nested)
	if err == nil {
		t.Fatal("NewIndex took an alternative with alternatives")
	}
	checkError(t, err, "hello@1.2.0", "depends", `"a|b|c" reads otherwise`)
}

func TestCheckInto(t *testing.T) {
	for _, ok := range []string{"lib/node_modules/x", "usr", ".pkgx", "pkgs.d/x", "opt/pkgs"} {
		if err := CheckInto(ok); err != nil {
			t.Errorf("CheckInto(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "/usr", "a/../b", "a/", ".pkg", ".pkg/x", "pkgs", "pkgs/x", "a\\b"} {
		if ie := (*IntoError)(nil); !errors.As(CheckInto(bad), &ie) || ie.Into != bad {
			t.Errorf("CheckInto(%q) = %v, want an *IntoError", bad, CheckInto(bad))
		}
	}
}

func TestCheckEnv(t *testing.T) {
	for _, ok := range []string{"MAGIC={root}/usr/share/misc/magic.mgc", "A=", "_x1=a b 'c' $d", "TERMINFO=/usr/share/terminfo"} {
		if err := CheckEnv(ok); err != nil {
			t.Errorf("CheckEnv(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "MAGIC", "=x", "1A=x", "A-B=x", "PATH=/bin", "LD_LIBRARY_PATH=/lib", "A=x\ny", "A=\x1b[2J", "A=" + strings.Repeat("x", 4096)} {
		if ee := (*EnvError)(nil); !errors.As(CheckEnv(bad), &ee) || ee.Entry != bad {
			t.Errorf("CheckEnv(%q) = %v, want an *EnvError", bad, CheckEnv(bad))
		}
	}
	// An index entry is checked so too, and may not set one name twice.
	for _, env := range [][]string{{"A=1", "A=2"}, {"PATH=/x"}} {
		_, err := Parse(indexOf(t, hello(func(p *Package) { p.Env = env })))
		if ee := (*EnvError)(nil); !errors.As(err, &ee) {
			t.Errorf("Parse of env %q: %v, want an *EnvError", env, err)
		}
	}
	ix, err := Parse(indexOf(t, hello(func(p *Package) { p.Env = []string{"MAGIC={root}/m"} })))
	if err != nil || !slices.Equal(ix.Packages[0].Env, []string{"MAGIC={root}/m"}) {
		t.Errorf("Parse of env MAGIC={root}/m: %v, %v", ix, err)
	}
}

// indexOf encodes an index of format 1 holding ps.
func indexOf(t testing.TB, ps ...Package) []byte {
	t.Helper()
	data, err := json.Marshal(Index{Format: 1, Packages: ps})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func hello(edit func(p *Package)) Package {
	p := Package{Name: "hello", Version: "1.2.0", Archive: "hello-1.2.0.tar.zst", Size: 10, SHA256: testSum}
	edit(&p)
	return p
}

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name string
		p    Package
		want []string // substrings of the error
	}{
		{"bad name", hello(func(p *Package) { p.Name = "Hel+lo" }), []string{"packages[0]", `"Hel+lo"`}},
		{"capitals not npm", hello(func(p *Package) { p.Name = "Hello" }), []string{`"Hello"`, "old npm package's"}},
		{"empty name", hello(func(p *Package) { p.Name = "" }), []string{"packages[0]"}},
		{"long name", hello(func(p *Package) { p.Name = strings.Repeat("a", 129) }), []string{"packages[0]", "129 bytes"}},
		{"empty version", hello(func(p *Package) { p.Version = "" }), []string{`"hello"`, "empty version"}},
		{"bad version", hello(func(p *Package) { p.Version = "x1" }), []string{`"hello"`, `"x1"`}},
		{"version byte", hello(func(p *Package) { p.Version = "1/0" }), []string{`"hello"`, `"1/0"`}},
		{"long version", hello(func(p *Package) { p.Version = "1" + strings.Repeat("0", 64) }), []string{`"hello"`, "65 bytes"}},
		{"no archive", hello(func(p *Package) { p.Archive = "" }), []string{"hello@1.2.0", "no archive"}},
		{"absolute archive", hello(func(p *Package) { p.Archive = "/srv/hello.tar" }), []string{"hello@1.2.0", "/srv/hello.tar"}},
		{"dotdot archive", hello(func(p *Package) { p.Archive = "../hello.tar" }), []string{"hello@1.2.0"}},
		{"inner dotdot archive", hello(func(p *Package) { p.Archive = "a/../../hello.tar" }), []string{"hello@1.2.0"}},
		{"unclean archive", hello(func(p *Package) { p.Archive = "./hello.tar" }), []string{"hello@1.2.0"}},
		{"backslash archive", hello(func(p *Package) { p.Archive = `a\hello.tar` }), []string{"hello@1.2.0"}},
		{"encoded dots archive", hello(func(p *Package) { p.Archive = "%2e%2e/%2e%2e/hello.tar" }), []string{"hello@1.2.0", "%2e%2e"}},
		{"NUL archive", hello(func(p *Package) { p.Archive = "a\x00.tar" }), []string{"hello@1.2.0"}},
		{"scheme archive", hello(func(p *Package) { p.Archive = "file:/etc/passwd" }), []string{"hello@1.2.0"}},
		{"ftp archive", hello(func(p *Package) { p.Archive = "ftp://example.com/hello.tar" }), []string{"hello@1.2.0"}},
		{"hostless url", hello(func(p *Package) { p.Archive = "https:///hello.tar" }), []string{"hello@1.2.0"}},
		{"bad url", hello(func(p *Package) { p.Archive = "http://exa mple.com/x" }), []string{"hello@1.2.0"}},
		{"negative size", hello(func(p *Package) { p.Size = -1 }), []string{"hello@1.2.0", "size"}},
		{"short sha256", hello(func(p *Package) { p.SHA256 = "abcd" }), []string{"hello@1.2.0", "sha256"}},
		{"upper sha256", hello(func(p *Package) { p.SHA256 = strings.ToUpper(testSum) }), []string{"hello@1.2.0", "sha256"}},
		{"no sha256", hello(func(p *Package) { p.SHA256 = "" }), []string{"hello@1.2.0", "sha256"}},
		{"negative installed_size", hello(func(p *Package) { p.InstalledSize = -5 }), []string{"hello@1.2.0", "installed_size"}},
		{"negative files", hello(func(p *Package) { p.Files = -1 }), []string{"hello@1.2.0", "files"}},
		{"huge size", hello(func(p *Package) { p.Size = math.MaxInt64 }), []string{"hello@1.2.0", "size 9223372036854775807 is over the limit of 512 GiB"}},
		{"size past limit", hello(func(p *Package) { p.Size = maxSize + 1 }), []string{"hello@1.2.0", "size 549755813889 is over"}},
		{"huge installed_size", hello(func(p *Package) { p.InstalledSize = math.MaxInt64 }), []string{"hello@1.2.0", "installed_size 9223372036854775807 is over the limit of 256 GiB"}},
		{"too many files", hello(func(p *Package) { p.Files = maxFiles + 1 }), []string{"hello@1.2.0", "files 1048577 is over the limit of 1048576 files"}},
		{"bad depends", hello(func(p *Package) { p.Depends = deps("lib>=") }), []string{"hello@1.2.0", `"lib>="`}},
		{"absolute bin", hello(func(p *Package) { p.Bin = bins("/bin/sh") }), []string{"hello@1.2.0", "/bin/sh"}},
		{"escaping bin", hello(func(p *Package) { p.Bin = bins("bin/../../x") }), []string{"hello@1.2.0"}},
		{"dot bin", hello(func(p *Package) { p.Bin = bins(".") }), []string{"hello@1.2.0"}},
		{"empty bin", hello(func(p *Package) { p.Bin = bins("") }), []string{"hello@1.2.0"}},
		{"escape in summary", hello(func(p *Package) { p.Summary = "hi\x1b]0;OWNED\x07" }), []string{"hello@1.2.0", `"hi\u001b]0;OWNED\u0007" has control characters`}},
		{"one command twice", hello(func(p *Package) { p.Bin = bins("a/tool", "b/tool") }), []string{"hello@1.2.0", `"a/tool" and "b/tool"`}},
		{"pkg's link name", hello(func(p *Package) { p.Bin = bins("bin/.x.new") }), []string{"hello@1.2.0", "start with a dot"}},
		{"unnamed command", hello(func(p *Package) { p.Bin = bins("=bin/x") }), []string{"hello@1.2.0", `bad command name ""`}},
		{"named nothing", hello(func(p *Package) { p.Bin = bins("x=") }), []string{"hello@1.2.0", `bin "x="`}},
		{"named absolute", hello(func(p *Package) { p.Bin = bins("x=/bin/sh") }), []string{"hello@1.2.0", `"/bin/sh" is not a clean relative path`}},
		{"named unclean", hello(func(p *Package) { p.Bin = bins("x=./bin/x") }), []string{"hello@1.2.0", `"./bin/x"`}},
		{"named escape", hello(func(p *Package) { p.Bin = bins("x\x1b[2J=bin/x") }), []string{"hello@1.2.0", "bad command name"}},
		{"named backslash", hello(func(p *Package) { p.Bin = bins(`a\b=bin/x`) }), []string{"hello@1.2.0", "bad command name"}},
		{"lib absolute", hello(func(p *Package) { p.Lib = []string{"/usr/lib"} }), []string{"hello@1.2.0", `lib "/usr/lib" is not a clean relative path`}},
		{"lib unclean", hello(func(p *Package) { p.Lib = []string{"usr/lib/"} }), []string{"hello@1.2.0", `lib "usr/lib/" is not a clean relative path`}},
		{"lib separator", hello(func(p *Package) { p.Lib = []string{"usr/lib:/etc"} }), []string{"hello@1.2.0", `lib "usr/lib:/etc": a library directory may not hold ':' or ';'`}},
		{"lib twice", hello(func(p *Package) { p.Lib = []string{"lib", "lib"} }), []string{"hello@1.2.0", `lib "lib" listed twice`}},
		{"named dot", hello(func(p *Package) { p.Bin = bins(".x=bin/x") }), []string{"hello@1.2.0", "start with a dot"}},
		{"named twice", hello(func(p *Package) { p.Bin = bins("tool=a/x", "b/tool") }), []string{"hello@1.2.0", `"tool=a/x" and "b/tool"`}},
		{"bad alternative", hello(func(p *Package) { p.Depends = deps("a|B") }), []string{"hello@1.2.0", "depends", `"a|B"`}},
		{"depends repo", hello(func(p *Package) { p.Depends = []Requirement{{Name: "a", Repo: "team"}} }), []string{"hello@1.2.0", "depends", "names a repository"}},
		{"bad provides", hello(func(p *Package) { p.Provides = deps("libz1>=1") }), []string{"hello@1.2.0", "provides", `"libz1>=1"`}},
		{"provides two versions", hello(func(p *Package) { p.Provides = deps("libz1=1,=2") }), []string{"hello@1.2.0", "provides", `"libz1=1,=2"`}},
		{"provides alternatives", hello(func(p *Package) { p.Provides = deps("a|b") }), []string{"hello@1.2.0", "provides", "alternatives"}},
		{"conflicts alternatives", hello(func(p *Package) { p.Conflicts = deps("a|b") }), []string{"hello@1.2.0", "conflicts", "alternatives"}},
		{"bad conflicts", hello(func(p *Package) { p.Conflicts = deps("a<") }), []string{"hello@1.2.0", "conflicts", `"a<"`}},
		{"bad replaces", hello(func(p *Package) { p.Replaces = deps("A") }), []string{"hello@1.2.0", "replaces", `"A"`}},
		{"into absolute", hello(func(p *Package) { p.Into = "/usr" }), []string{"hello@1.2.0", `into "/usr"`}},
		{"into dotdot", hello(func(p *Package) { p.Into = "lib/../../x" }), []string{"hello@1.2.0", "into"}},
		{"into unclean", hello(func(p *Package) { p.Into = "lib/node_modules/" }), []string{"hello@1.2.0", "into"}},
		{"into .pkg", hello(func(p *Package) { p.Into = ".pkg/x" }), []string{"hello@1.2.0", `into ".pkg/x"`}},
		{"into pkgs", hello(func(p *Package) { p.Into = "pkgs" }), []string{"hello@1.2.0", `into "pkgs"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(indexOf(t, tt.p))
			if err == nil {
				t.Fatalf("Parse: no error")
			}
			if !errors.Is(err, ErrIndex) {
				t.Errorf("Parse: %v, want an ErrIndex", err)
			}
			checkError(t, err, tt.want...)
		})
	}
}

// checkError checks that err names each of want: the package and the field or
// value refused.
func checkError(t *testing.T, err error, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

func TestParseRefusesDuplicate(t *testing.T) {
	p := hello(func(*Package) {})
	_, err := Parse(indexOf(t, p, p))
	if err == nil {
		t.Fatal("Parse: no error")
	}
	if !errors.Is(err, ErrIndex) || !errors.Is(err, ErrDuplicate) {
		t.Errorf("Parse: %v, want an ErrIndex, ErrDuplicate", err)
	}
	checkError(t, err, "hello@1.2.0")
}

// TestParseRefusesFormat checks that an index of another format is refused as such by
// Parse and ParseMeta (a *FormatError naming it), whether or not the rest of it decodes as
// format 1, and that format 1 that does not decode is not.
func TestParseRefusesFormat(t *testing.T) {
	for _, tt := range []struct {
		data   string
		format int
	}{
		{`{"format": 2, "packages": {"changed": true}}`, 2}, {`{"packages": []}`, 0}, {`{"format": -1, "packages": []}`, -1},
		{`{"format": 2, "packages": []}`, 2}, {`{"format": 2, "name": {"changed": true}}`, 2}, {`{"format": 2, "name": "same"}`, 2},
	} {
		want := FormatError{Format: tt.format, Newest: indexFormat}
		_, err := Parse([]byte(tt.data))
		if fe := (*FormatError)(nil); !errors.Is(err, ErrIndex) || !errors.Is(err, ErrFormat) || !errors.As(err, &fe) || *fe != want {
			t.Errorf("Parse(%s): got error %v, want ErrFormat in a %+v", tt.data, err, want)
		}
		_, err = ParseMeta([]byte(tt.data))
		if fe := (*FormatError)(nil); !errors.Is(err, ErrIndex) || !errors.Is(err, ErrFormat) || !errors.As(err, &fe) || *fe != want {
			t.Errorf("ParseMeta(%s): got error %v, want ErrFormat in a %+v", tt.data, err, want)
		}
	}
	for _, data := range []string{`{"format": 1, "name": {"changed": true}}`, `{"format": 1, "name": "x",`} {
		if _, err := ParseMeta([]byte(data)); !errors.Is(err, ErrIndex) || errors.Is(err, ErrFormat) {
			t.Errorf("ParseMeta(%s): got error %v, want an ErrIndex that is not ErrFormat", data, err)
		}
	}
}

func TestParseRefusesBadJSON(t *testing.T) {
	for _, data := range []string{``, `[]`, `{"format": 1, "packages": [{"size": "big"}]}`, `{"format": 1,`} {
		if _, err := Parse([]byte(data)); err == nil {
			t.Errorf("Parse(%q): no error", data)
		}
	}
}

func TestParseRefusesOversized(t *testing.T) {
	data := make([]byte, MaxIndexSize+1)
	copy(data, `{"format": 1, "packages": []}`)
	for i := len(`{"format": 1, "packages": []}`); i < len(data); i++ {
		data[i] = ' '
	}
	_, err := Parse(data)
	if err == nil {
		t.Fatal("Parse: no error")
	}
	if !errors.Is(err, ErrIndex) || !errors.Is(err, ErrLimit) {
		t.Errorf("Parse of %d bytes: %v, want ErrLimit", len(data), err)
	}
	if _, err := Parse(data[:MaxIndexSize]); err != nil {
		t.Errorf("Parse at MaxIndexSize: %v", err)
	}
}

// TestParseLimits checks that the numbers at their limits pass, and those of a signed
// index's version past it do not.
func TestParseLimits(t *testing.T) {
	p := hello(func(p *Package) { p.Size, p.InstalledSize, p.Files = maxSize, maxInstalledSize, maxFiles })
	if _, err := Parse(indexOf(t, p)); err != nil {
		t.Errorf("Parse at the limits: %v", err)
	}
	data := `{"format": 1, "name": "demo", "version": 9007199254740992, "packages": []}`
	if _, err := Parse([]byte(data)); !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "index version 9007199254740992") {
		t.Errorf("Parse with version 2^53: %v", err)
	}
	if _, err := ParseMeta([]byte(data)); err == nil {
		t.Errorf("ParseMeta with version 2^53: no error")
	}
}

func TestParseAcceptsArchives(t *testing.T) {
	for _, a := range []string{"hello.tar.zst", "pool/h/hello-1.0.tar", "https://example.com/a/b.tar?sig=1", "http://localhost:8080/x.tar"} {
		p := hello(func(p *Package) { p.Archive = a })
		if _, err := Parse(indexOf(t, p)); err != nil {
			t.Errorf("archive %q: %v", a, err)
		}
	}
}

func TestParseCommand(t *testing.T) {
	tests := []struct{ entry, command, file string }{
		{"bin/hello", "hello", "bin/hello"},
		{"prettier=package/bin/prettier.cjs", "prettier", "package/bin/prettier.cjs"},
		{"x=a=b", "x", "a=b"},
		{"bin/a=b", "a=b", "bin/a=b"}, // an "=" after a "/" is the path's
		{"tool", "tool", "tool"},
		{"hello=bin/hello", "hello", "bin/hello"}, // written so, it stays so
	}
	for _, tt := range tests {
		c := ParseCommand(tt.entry)
		if c.Name != tt.command || c.Path != tt.file {
			t.Errorf("ParseCommand(%q) = %q, %q; want %q, %q", tt.entry, c.Name, c.Path, tt.command, tt.file)
		}
		if got := c.String(); got != tt.entry {
			t.Errorf("ParseCommand(%q).String() = %q, want the entry", tt.entry, got)
		}
	}
}

func TestCommandClean(t *testing.T) {
	tests := []struct{ entry, want string }{
		{"usr/bin/jq", "usr/bin/jq"},
		{"./usr/bin/jq", "usr/bin/jq"}, // as tar -t lists it
		{"usr//bin/./jq", "usr/bin/jq"},
		{"jq=./usr/bin/jq", "jq=usr/bin/jq"},
		{"./bin/a=b", "bin/a=b"},
		{"./a=b", "./a=b"}, // clean, it would name command a: left for the check to refuse
		{"/usr/bin/jq", "/usr/bin/jq"},
		{"../x", "../x"},
	}
	for _, tt := range tests {
		if got := ParseCommand(tt.entry).Clean().String(); got != tt.want {
			t.Errorf("ParseCommand(%q).Clean() = %q, want %q", tt.entry, got, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(goodIndex))
	f.Add([]byte(multiIndex))
	f.Add([]byte(`{"format": 1, "packages": []}`))
	f.Add([]byte(`{"format": 1, "packages": null, "x": 1}`))
	f.Add([]byte(`{"format": 1, "packages": [{"name": "a", "version": "1-rc1", "archive": "a.tar", "sha256": "` + testSum + `", "depends": ["b>=1,<2", "c@3"], "bin": []}]}`))
	f.Add([]byte(`{"format": 2}`))
	f.Add([]byte(`{"format": 1, "packages": [{"name": "a", "version": "1", "archive": "a.tar", "sha256": "` + testSum + `", "depends": ["b>=1|c|d=2"],
		"provides": ["v", "w=1:2"], "conflicts": ["x<=1"], "replaces": ["y"], "into": "lib/node_modules/a"}]}`))
	f.Add([]byte(`{"format": 1, "version": 9007199254740992, "packages": [{"name": "a", "version": "1", "archive": "a.tar", "size": 9223372036854775807, "sha256": "` + testSum + `", "installed_size": 9223372036854775807, "files": 9223372036854775807}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ix, err := Parse(data)
		if err != nil {
			return
		}
		again, err := json.Marshal(ix)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		ix2, err := Parse(again)
		if err != nil {
			t.Fatalf("Parse(Marshal(Parse(data))): %v\n%s", err, again)
		}
		if !reflect.DeepEqual(ix, ix2) {
			t.Fatalf("round trip:\ngot  %+v\nwant %+v", ix2, ix)
		}
	})
}

// TestCommandLenLimit checks that a command's name of maxCommandLen bytes passes and one
// byte more, which bin/.NAME.new could not be made of, is refused by Parse and by Add with
// a *CommandTooLongError naming the package and the command.
func TestCommandLenLimit(t *testing.T) {
	long := strings.Repeat("c", maxCommandLen)
	if _, err := Parse(indexOf(t, hello(func(p *Package) { p.Bin = bins(long + "=bin/hello") }))); err != nil {
		t.Errorf("Parse with a command of %d bytes: %v", maxCommandLen, err)
	}
	for _, bin := range []string{long + "c=bin/hello", "bin/" + long + "cc"} {
		_, err := Parse(indexOf(t, hello(func(p *Package) { p.Bin = bins(bin) })))
		var ce *CommandTooLongError
		if !errors.As(err, &ce) || ce.Package != "hello@1.2.0" || len(ce.Command) <= maxCommandLen {
			t.Errorf("Parse with bin %.10q...: %v, want a *CommandTooLongError", bin, err)
		}
		dir := t.TempDir()
		_, err = addUnsigned(dir, writeArchive(t, "hello-1.2.0.tar", "archive"), Package{Name: "hello", Version: "1.2.0", Bin: bins(bin)})
		if !errors.As(err, &ce) || ce.Package != "hello@1.2.0" {
			t.Errorf("Add with bin %.10q...: %v, want a *CommandTooLongError", bin, err)
		}
		checkDir(t, dir)
	}
}

func TestSameRelations(t *testing.T) {
	p := Package{Name: "a", Version: "1", Depends: deps("b|c"), Provides: deps("v=1"), Conflicts: deps("d<2"), Replaces: deps("e"), Into: "x"}
	for _, edit := range []func(q *Package){
		func(q *Package) { q.Depends = deps("b|d") },
		func(q *Package) { q.Provides = deps("v") },
		func(q *Package) { q.Conflicts = nil },
		func(q *Package) { q.Replaces = deps("e<1") },
		func(q *Package) { q.Into = "y" },
		func(q *Package) { q.Env = []string{"A=1"} },
	} {
		q := p
		edit(&q)
		if p.SameRelations(q) {
			t.Errorf("SameRelations(%+v, %+v) = true", p, q)
		}
	}
	if q := p; !p.SameRelations(q) {
		t.Error("SameRelations(p, p) = false")
	}
}

// BenchmarkParse parses an index of 20,000 packages (4.6 MB), and its Meta alone: a
// command that reads a repository does both (trust's verification reads the Meta).
func BenchmarkParse(b *testing.B) {
	ix := Index{Format: indexFormat, Meta: Meta{Name: "big"}}
	for i := range 20000 {
		ix.Packages = append(ix.Packages, Package{Name: fmt.Sprintf("pkg%05d", i), Version: "1.2.3", Archive: fmt.Sprintf("pkg%05d-1.2.3.tar.gz", i),
			Size: 12345, SHA256: strings.Repeat("ab", 32), Depends: []Requirement{{Name: "libc6", Constraints: []Constraint{{Op: ">=", Version: "2.36"}}}}, Summary: "a package of a big index"})
	}
	data, err := json.Marshal(ix)
	if err != nil {
		b.Fatal(err)
	}
	for _, parse := range []struct {
		name string
		f    func([]byte) error
	}{
		{"Parse", func(d []byte) error { _, err := Parse(d); return err }},
		{"ParseMeta", func(d []byte) error { _, err := ParseMeta(d); return err }},
	} {
		b.Run(parse.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := parse.f(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestDebKindNotWritten: an entry of a .deb is KindDeb as read, from its archive's name,
// in an index and in a lockfile, and neither writes the kind, which a pkg before it
// refuses as one it does not know.
func TestDebKindNotWritten(t *testing.T) {
	p := Package{Name: "git-man", Version: "1:2.39.5-0+deb12u3", Kind: KindDeb, Archive: "git-man-2.39.5-0+deb12u3.deb", SHA256: testSum}
	var b bytes.Buffer
	if err := (&Index{Format: indexFormat, Packages: []Package{p}}).encode(&b); err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()
	if bytes.Contains(data, []byte(`"kind"`)) {
		t.Errorf("index of a .deb's entry writes its kind:\n%s", data)
	}
	ix, err := Parse(data)
	if err != nil || ix.Packages[0].Kind != KindDeb {
		t.Fatalf("Parse: %+v, %v; want kind %q", ix, err, KindDeb)
	}
	u := Package{Name: "git-man", Version: "1", Archive: "https://example.org/pool/g/git-man_1_all.deb?x=1", SHA256: testSum}
	if normalize(&u); u.Kind != KindDeb {
		t.Errorf("a .deb by URL: kind %q, want %q", u.Kind, KindDeb)
	}
	if e := entryOf(p); e.Kind != "" {
		t.Errorf("lockfile entry of a .deb writes kind %q", e.Kind)
	}
}

package repo

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"pkg/internal/termtext"
)

func TestValidName(t *testing.T) {
	for _, tt := range []struct {
		name      string
		pkg, repo bool
	}{
		{"jq", true, true},
		{"libc++", true, true},
		{"@eslint/js", true, false},
		{"@types/node", true, false},
		{"@a.b/c~d-e_f", true, false},
		{"@../x", false, false},
		{"@a/b/c", false, false},
		{"@A/b", false, false},
		{"@a/B", false, false},
		{"@a/", false, false},
		{"@/b", false, false},
		{"@a", false, false},
		{"@", false, false},
		{"@a/+b", false, false},
		{"@a/b+c", false, false}, // FileName must stay unambiguous
		{"@a/.b", false, false},
		{"@a/_b", false, false},
		{"a/b", false, false},
		{"Jq", true, false}, // npm's names of old packages: JSONStream
		{"JSONStream", true, false},
		{"JSON.Stream_2-x", true, false},
		{"A+b", false, false}, // npm takes no "+", and libc++'s is lower case
		{"A~b", false, false},
		{"_A", false, false},
		{".A", false, false},
		{"-A", false, false},
		{"Ä", false, false},
		{strings.Repeat("A", maxNameLen), true, false},
		{strings.Repeat("A", maxNameLen+1), false, false},
		{"@a/" + strings.Repeat("b", maxNameLen-3), true, false},
		{"@a/" + strings.Repeat("b", maxNameLen-2), false, false},
	} {
		if got := ValidName(tt.name); got != tt.pkg {
			t.Errorf("ValidName(%q) = %v, want %v", tt.name, got, tt.pkg)
		}
		if got := ValidRepoName(tt.name); got != tt.repo {
			t.Errorf("ValidRepoName(%q) = %v, want %v", tt.name, got, tt.repo)
		}
	}
}

func TestFileName(t *testing.T) {
	for in, want := range map[string]string{"jq": "jq", "libc++": "libc++", "@eslint/js": "@eslint+js", "@eslint/js@9.1.0": "@eslint+js@9.1.0"} {
		if got := FileName(in); got != want {
			t.Errorf("FileName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseNPMRequirement(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Requirement
	}{
		{"debug@npm:^4.3.1", Requirement{Name: "debug", Constraints: []Constraint{{npmOp, "^4.3.1"}}}},
		{"@eslint/js@npm:9.1.0", Requirement{Name: "@eslint/js", Constraints: []Constraint{{npmOp, "9.1.0"}}}},
		{"x@npm:>=1.2.7 <1.3.0", Requirement{Name: "x", Constraints: []Constraint{{npmOp, ">=1.2.7 <1.3.0"}}}},
		{"x@npm:1.x || >=2.5.0", Requirement{Name: "x", Constraints: []Constraint{{npmOp, "1.x || >=2.5.0"}}}},
		{"x@npm:", Requirement{Name: "x", Constraints: []Constraint{{npmOp, ""}}}},
		{"team/@eslint/js@npm:^9", Requirement{Name: "@eslint/js", Repo: "team", Constraints: []Constraint{{npmOp, "^9"}}}},
		{"@eslint/js", Requirement{Name: "@eslint/js"}},
		{"@eslint/js@9.1", Requirement{Name: "@eslint/js", Constraints: []Constraint{{"@", "9.1"}}}},
		{"@eslint/js>=9", Requirement{Name: "@eslint/js", Constraints: []Constraint{{">=", "9"}}}},
		{"team/@eslint/js", Requirement{Name: "@eslint/js", Repo: "team"}},
	} {
		got, err := ParseRequirement(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseRequirement(%q) = %#v, %v; want %#v", tt.in, got, err, tt.want)
			continue
		}
		if s := got.String(); s != tt.in {
			t.Errorf("ParseRequirement(%q).String() = %q", tt.in, s)
		}
		if !got.Equal(tt.want) {
			t.Errorf("ParseRequirement(%q) is not Equal to itself", tt.in)
		}
	}
	a, _ := ParseRequirement("x@npm:^1")
	b, _ := ParseRequirement("x@npm:^1.0.0")
	if a.Equal(b) {
		t.Errorf("%s Equal %s: ranges spelled otherwise are other requirements", a, b)
	}
}

func TestParseNPMRequirementRefuses(t *testing.T) {
	for _, s := range []string{
		"x@npm:latest", "x@npm:^1.2.3.4", "x@npm:>=01.2", "x@npm:1.2.3 - ", "x@npm:git+https://x/y",
		"@../x@npm:1", "@a/b/c@npm:1", "@A/b@npm:1", "@a/@npm:1", "@/b", "@a", "@a/b/c", "@A/b",
		"team/@a/b/c", "x@npm:" + strings.Repeat("1", maxRangeLen+1),
	} {
		if r, err := ParseRequirement(s); err == nil {
			t.Errorf("ParseRequirement(%q) = %#v, want an error", s, r)
		}
	}
	var ve *valueError
	if _, err := ParseRequirement("@../x"); !errors.Is(err, ErrName) || !errors.As(err, &ve) || ve.value != "@../x" {
		t.Errorf("ParseRequirement(@../x) = %v, want ErrName naming it", err)
	}
	var re *RangeError
	if _, err := ParseRequirement("x@npm:latest"); !errors.As(err, &re) || re.Range != "latest" {
		t.Errorf("ParseRequirement(x@npm:latest) = %v, want a *RangeError naming the range", err)
	}
}

func TestNPMAllows(t *testing.T) {
	for _, tt := range []struct {
		rng, yes, no string // versions, space-separated
	}{
		{"^4.3.1", "4.3.1 4.3.2 4.9.0", "4.3.0 5.0.0 5.0.0-0 4.4.0-rc.1"},
		{"^0.2.3", "0.2.3 0.2.9", "0.3.0 0.2.2"},
		{"~1.2", "1.2.0 1.2.99", "1.3.0 1.1.9"},
		{"1.x", "1.0.0 1.99.99", "2.0.0 0.9.9"},
		{"*", "0.0.0 99.0.0", "1.0.0-rc.1"},
	} {
		r, err := ParseRequirement("x@npm:" + tt.rng)
		if err != nil {
			t.Fatal(err)
		}
		for v := range strings.FieldsSeq(tt.yes) {
			if !r.Allows(v) || !r.Met("", "x", v, nil) {
				t.Errorf("%s does not allow %s", r, v)
			}
		}
		for v := range strings.FieldsSeq(tt.no) {
			if r.Allows(v) {
				t.Errorf("%s allows %s", r, v)
			}
		}
	}
}

func TestCompareNPMVersions(t *testing.T) {
	order := []string{"0.0.0-0", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
		"1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.0+build.1", "1.0.1", "1.2.0", "1.10.0", "2.0.0"}
	for i, a := range order {
		for j, b := range order {
			if got, want := CompareNPMVersions(a, b), cmpInt(i, j); got != want {
				t.Errorf("CompareNPMVersions(%s, %s) = %d, want %d", a, b, got, want)
			}
		}
	}
	p := Package{Name: "x", Kind: KindNPM, Version: "1.0.0-1"}
	if p.CompareVersion(Package{Version: "1.0.0"}) >= 0 || CompareVersions("1.0.0-1", "1.0.0") <= 0 {
		t.Errorf("1.0.0-1 is a pre-release for npm, a revision otherwise")
	}
}

func TestKey(t *testing.T) {
	for _, tt := range []struct {
		p    Package
		want string
	}{
		{Package{Name: "jq", Version: "1.7"}, "jq"},
		{Package{Name: "debug", Version: "4.3.4", Kind: KindNPM}, "debug@4.3.4"},
		{Package{Name: "@eslint/js", Version: "9.1.0", Kind: KindNPM}, "@eslint/js@9.1.0"},
	} {
		if got := tt.p.Key(); got != tt.want {
			t.Errorf("%+v.Key() = %q, want %q", tt.p, got, tt.want)
		}
	}
}

// npmIndex is an index of npm packages: eslint depending on a scoped package and two
// versions of one name.
var npmIndex = `{"format": 1, "packages": [
  {"name": "@eslint/js", "version": "9.1.0", "kind": "npm", "archive": "@eslint+js-9.1.0.tgz", "size": 1, "sha256": "` + testSum + `"},
  {"name": "eslint", "version": "9.1.0", "kind": "npm", "archive": "eslint-9.1.0.tgz", "size": 1, "sha256": "` + testSum + `",
   "depends": ["@eslint/js@npm:9.1.0", "keys@npm:^4"], "optional": ["fsevents@npm:~2.3"], "peers": ["jiti@npm:*"], "bin": ["eslint=bin/eslint.js"]},
  {"name": "keys", "version": "3.4.3", "kind": "npm", "archive": "keys-3.4.3.tgz", "size": 1, "sha256": "` + testSum + `"},
  {"name": "keys", "version": "4.2.1", "kind": "npm", "archive": "keys-4.2.1.tgz", "size": 1, "sha256": "` + testSum + `"}
]}`

func TestParseNPMIndex(t *testing.T) {
	ix, err := Parse([]byte(npmIndex))
	if err != nil {
		t.Fatal(err)
	}
	e := ix.Packages[1]
	if e.Kind != KindNPM || JoinRequirements(e.Depends) != "@eslint/js@npm:9.1.0 keys@npm:^4" ||
		JoinRequirements(e.Optional) != "fsevents@npm:~2.3" || JoinRequirements(e.Peers) != "jiti@npm:*" {
		t.Errorf("eslint = %+v", e)
	}
	back, err := NewIndex(ix.Packages...)
	if err != nil || !reflect.DeepEqual(back.Packages, ix.Packages) {
		t.Errorf("NewIndex(Parse(npmIndex).Packages) = %v, %v", back, err)
	}
	if !e.SameRelations(e) {
		t.Errorf("SameRelations(eslint, eslint) = false")
	}
	for _, change := range []func(*Package){
		func(p *Package) { p.Kind = "" }, func(p *Package) { p.Optional = nil }, func(p *Package) { p.Peers = nil },
	} {
		f := e
		change(&f)
		if f.SameRelations(e) {
			t.Errorf("SameRelations(%+v, eslint) = true", f)
		}
	}
}

func TestParseNPMIndexRefuses(t *testing.T) {
	entry := func(fields string) string {
		return `{"format": 1, "packages": [{"name": "x", "version": "1.0.0", "archive": "x.tgz", "size": 1, "sha256": "` + testSum + `", ` + fields + `}]}`
	}
	for _, tt := range []struct{ fields, why string }{
		{`"kind": "rpm"`, "an unknown kind"},
		{`"kind": "npm", "version": "1.0"`, "a version that is not semver"},
		{`"kind": "npm", "depends": ["y>=1"]}`, "a depends that is not an npm range"},
		{`"kind": "npm", "into": "lib/node_modules/x"`, "an into"},
		{`"optional": ["y@npm:1"]`, "optional on a package not npm"},
		{`"peers": ["y@npm:1"]`, "peers on a package not npm"},
		{`"kind": "npm", "provides": ["y@npm:1"]`, "an npm range in provides"},
		{`"kind": "npm", "conflicts": ["y@npm:1"]`, "an npm range in conflicts"},
		{`"kind": "npm", "depends": ["y@npm:latest"]`, "a bad range"},
	} {
		text := strings.Replace(entry(strings.TrimSuffix(tt.fields, "}")), `"version": "1.0.0", `, "", strings.Count(tt.fields, `"version"`))
		if ix, err := Parse([]byte(text)); !errors.Is(err, ErrIndex) {
			t.Errorf("Parse of an entry with %s = %v, %v; want ErrIndex", tt.why, ix, err)
		}
	}
	scoped := strings.Replace(entry(`"kind": "npm"`), `"name": "x"`, `"name": "@../x"`, 1)
	if _, err := Parse([]byte(scoped)); !errors.Is(err, ErrIndex) || !strings.Contains(err.Error(), `"@../x"`) {
		t.Errorf("Parse of @../x = %v, want ErrIndex naming it", err)
	}
}

// TestLegacyNPMNames: npm's names of old packages, with capitals (JSONStream), are taken
// for packages of kind npm, in requirements, index entries and lockfile lines; a package
// of another kind is refused one, as its name and in its relations.
func TestLegacyNPMNames(t *testing.T) {
	legacy := strings.Replace(npmIndex, `"name": "keys", "version": "3.4.3", "kind": "npm", "archive": "keys-3.4.3.tgz"`,
		`"name": "JSONStream", "version": "1.3.5", "kind": "npm", "archive": "JSONStream-1.3.5.tgz", "depends": ["jsonparse@npm:^1.2.0", "through@npm:>=2.2.7 <3"]`, 1)
	ix, err := Parse([]byte(legacy))
	if err != nil {
		t.Fatal(err)
	}
	req, err := ParseRequirement("JSONStream@npm:1.3.5")
	if err != nil || req.Name != "JSONStream" {
		t.Fatalf("ParseRequirement(JSONStream@npm:1.3.5) = %v, %v", req, err)
	}
	var js Package
	for _, p := range ix.Packages {
		if p.Name == "JSONStream" {
			js = p
		}
	}
	js.Archive, js.Depends = testRepoURL+js.Archive, nil
	text := encodeLock(t, NewLock(testRepoURL, []Requirement{req}, []Package{js}))
	if l, err := decodeLock([]byte(text)); err != nil || l.Packages[0].Key() != "JSONStream@1.3.5" {
		t.Errorf("decodeLock of JSONStream's line = %+v, %v", l, err)
	}
	if _, err := decodeLock([]byte(strings.Replace(text, `"kind":"npm",`, "", 1))); !errors.Is(err, ErrLockfile) || !strings.Contains(err.Error(), `"JSONStream"`) {
		t.Errorf("decodeLock of a line named JSONStream not of kind npm = %v, want ErrLockfile naming it", err)
	}
	entry := `{"format": 1, "packages": [{"name": "%s", "version": "1.0", "archive": "x.tar", "size": 1, "sha256": "` + testSum + `", "depends": ["%s"]}]}`
	for _, tt := range [][2]string{{"Hello", "y"}, {"hello", "Y"}, {"hello", "y|Y>=1"}} {
		_, err := Parse([]byte(fmt.Sprintf(entry, tt[0], tt[1])))
		if !errors.Is(err, ErrIndex) || !strings.Contains(err.Error(), "npm") {
			t.Errorf("Parse of %s depending on %s, not of kind npm = %v, want ErrIndex saying capitals are npm's", tt[0], tt[1], err)
		}
	}
}

func TestNPMLockRoundTrip(t *testing.T) {
	ix, err := Parse([]byte(npmIndex))
	if err != nil {
		t.Fatal(err)
	}
	ix.Packages = append(ix.Packages[:2], ix.Packages[3]) // one version of keys: the Debian resolver keeps one of a name
	ix.Packages[1].Peers, ix.Packages[1].Optional = nil, nil
	req, _ := ParseRequirement("eslint@npm:^9")
	pkgs, err := ix.Resolve([]Requirement{req})
	if err != nil {
		t.Fatal(err)
	}
	for i := range pkgs {
		pkgs[i].Archive = testRepoURL + pkgs[i].Archive
	}
	l := NewLock(testRepoURL, []Requirement{req}, pkgs)
	text := encodeLock(t, l)
	for _, want := range []string{`"eslint@npm:^9"`, `{"name":"@eslint/js","version":"9.1.0","kind":"npm","url":"https://example.com/repo/@eslint+js-9.1.0.tgz"`} {
		if !strings.Contains(text, want) {
			t.Errorf("lockfile:\n%s\nlacks %s", text, want)
		}
	}
	back, err := decodeLock([]byte(text))
	if err != nil || !reflect.DeepEqual(withoutOrders(back), l) {
		t.Errorf("decodeLock(encode(l)) = %+v, %v; want %+v", back, err, l)
	}
}

// TestHostileNames refuses, naming them, scoped names that are not npm's wherever a
// package name is read: requirements, index entries, lockfile lines, removals.
func TestHostileNames(t *testing.T) {
	for _, name := range []string{"@../x", "@a/b/c", "@A/b", "@a/", "@/b", "@a", "@a/../b", "@a/b\x00", "@a/B", "A+b", "_A"} {
		if _, err := ParseRequirement(name); !errors.Is(err, ErrName) {
			t.Errorf("ParseRequirement(%q) = %v, want ErrName", name, err)
		}
		index := strings.Replace(npmIndex, `"name": "@eslint/js"`, `"name": `+jsonText(name), 1)
		if _, err := Parse([]byte(index)); !errors.Is(err, ErrIndex) || !strings.Contains(err.Error(), termtext.Quote(name)) {
			t.Errorf("Parse of an entry named %q = %v, want ErrIndex naming it", name, err)
		}
		if _, err := Remove(t.Context(), t.TempDir(), Removal{Name: name}, nil); !errors.Is(err, ErrName) {
			t.Errorf("Remove(%q) = %v, want ErrName", name, err)
		}
		if _, err := Add(t.Context(), t.TempDir(), "x.tgz", Package{Name: name, Version: "1.0.0"}, false, nil); !errors.Is(err, ErrName) {
			t.Errorf("Add(%q) = %v, want ErrName", name, err)
		}
	}
	ix, err := Parse([]byte(npmIndex))
	if err != nil {
		t.Fatal(err)
	}
	p := ix.Packages[0]
	p.Archive = testRepoURL + p.Archive
	text := encodeLock(t, NewLock(testRepoURL, []Requirement{{Name: p.Name}}, []Package{p}))
	for _, name := range []string{"@../x", "@a/b/c", "@A/b"} {
		hostile := strings.ReplaceAll(text, `"@eslint/js"`, jsonText(name))
		if _, err := decodeLock([]byte(hostile)); !errors.Is(err, ErrLockfile) {
			t.Errorf("decodeLock of a line named %q = %v, want ErrLockfile", name, err)
		}
	}
	if _, err := decodeLock([]byte(text)); err != nil {
		t.Errorf("decodeLock of @eslint/js's lock: %v", err)
	}
}

package fetch

import (
	"errors"
	"reflect"
	"testing"

	"pkg/repo"
)

// TestParseControl reads a control file's first paragraph: fields by any case, relation
// fields with their continuation lines, nothing of a second paragraph.
func TestParseControl(t *testing.T) {
	got := parseControl([]byte("Package: hello\r\nversion: 1:2.0-1\nArchitecture: amd64\nPRE-DEPENDS: libc6 (>= 2.35)\n" +
		"Depends: a,\n b (<< 2)\n\t| c\nDescription: says hello\n more\nBreaks: old\n\nConflicts: second-paragraph\n"))
	want := &Control{Package: "hello", Version: "1:2.0-1", Architecture: "amd64", Description: "says hello",
		Relations: map[string]string{"Pre-Depends": "libc6 (>= 2.35)", "Depends": "a, b (<< 2) | c", "Breaks": "old"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseControl:\ngot  %+v\nwant %+v", got, want)
	}
}

// TestRequirements maps Debian relations to pkg's requirements, and refuses, naming the
// package, the field and the relation, what pkg cannot represent.
func TestRequirements(t *testing.T) {
	tests := []struct {
		arch   string
		field  string
		text   string
		want   []string // as repo.Requirement.String writes them
		refuse string   // the relation refused, or ""
	}{
		{"amd64", "Depends", "golang-1.19-src (>= 1.19.8-2), libc6 (>= 2.34)", []string{"golang-1.19-src>=1.19.8-2", "libc6>=2.34"}, ""},
		{"amd64", "Depends", "libcurl4 (= 7.88.1-10+deb12u15), zlib1g (>= 1:1.1.4)", []string{"libcurl4=7.88.1-10+deb12u15", "zlib1g>=1:1.1.4"}, ""},
		{"amd64", "Depends", "media-types | mime-support, debconf (>= 0.5) | debconf-2.0", []string{"media-types|mime-support", "debconf>=0.5|debconf-2.0"}, ""},
		{"amd64", "Depends", "a (<< 2), b (>> 1), c (<= 3), d(>=4), e ( = 5 ), f (< 6), g (> 7),", []string{"a<2", "b>1", "c<=3", "d>=4", "e=5", "f<=6", "g>=7"}, ""},
		{"amd64", "Depends", "python3:any (>= 3.11), perl:native, libc6:amd64", []string{"python3>=3.11", "perl", "libc6"}, ""},
		{"all", "Depends", "libc6:i386", []string{"libc6"}, ""},
		{"amd64", "Provides", "libz1 (= 1:1.2.13), awk", []string{"libz1=1:1.2.13", "awk"}, ""},
		{"amd64", "Breaks", "dh-golang (<< 1.43~)", []string{"dh-golang<1.43~"}, ""},
		{"amd64", "Depends", "", nil, ""},
		{"amd64", "Depends", "libc6:i386", nil, "libc6:i386"},
		{"amd64", "Depends", "libwine-dev (= 8.0~repack-4) | libwine-dev:i386 (= 8.0~repack-4), b:i386 | c", []string{"libwine-dev=8.0~repack-4", "c"}, ""},
		{"amd64", "Conflicts", "libc6-i386:x32, libc6-x32", []string{"libc6-x32"}, ""},
		{"amd64", "Replaces", "a:i386", nil, ""},
		{"amd64", "Provides", "a:i386", nil, "a:i386"},
		{"amd64", "Depends", "a, b [amd64]", nil, "b [amd64]"},
		{"amd64", "Depends", "a <!nocheck>", nil, "a <!nocheck>"},
		{"amd64", "Depends", "Big", nil, "Big"},
		{"amd64", "Depends", "a (>= 1:x)", nil, "a (>= 1:x)"},
		{"amd64", "Depends", "a (>= 1", nil, "a (>= 1"},
		{"amd64", "Depends", "a (~ 1)", nil, "a (~ 1)"},
		{"amd64", "Depends", "a (>=)", nil, "a (>=)"},
		{"amd64", "Depends", "a | ", nil, "a |"},
		{"amd64", "Conflicts", "a | b", nil, "a | b"},
		{"amd64", "Provides", "a (>= 1)", nil, "a (>= 1)"},
	}
	for _, tt := range tests {
		c := &Control{Package: "hello", Architecture: tt.arch, Relations: map[string]string{tt.field: tt.text}}
		reqs, err := c.Requirements(tt.field)
		var ce *ControlError
		switch {
		case tt.refuse != "":
			if !errors.As(err, &ce) || ce.Package != "hello" || ce.Field != tt.field || ce.Relation != tt.refuse {
				t.Errorf("%s: %q: %v, want a *ControlError of hello's %s for %q", tt.field, tt.text, err, tt.field, tt.refuse)
			}
		case err != nil:
			t.Errorf("%s: %q: %v", tt.field, tt.text, err)
		default:
			var got []string
			for _, r := range reqs {
				got = append(got, r.String())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s: %q = %q, want %q", tt.field, tt.text, got, tt.want)
			}
		}
	}
	c := &Control{Package: "x", Relations: map[string]string{"Depends": "b", "Pre-Depends": "a"}}
	if reqs, err := c.Requirements("Pre-Depends", "Depends"); err != nil || repo.JoinRequirements(reqs) != "a b" {
		t.Errorf("Requirements of two fields: %v, %v; want a b, in the order asked", reqs, err)
	}
}

// TestControlCheck refuses a Package or Version pkg's index cannot hold, naming the field.
func TestControlCheck(t *testing.T) {
	for _, tt := range []struct{ pkg, version, field string }{
		{"hello", "1:2.36-9+deb12u14", ""},
		{"Hello", "1", "Package"},
		{"hello", "1:2:3", "Version"},
		{"hello", "", "Version"},
		{"hello", "1,>2", "Version"},
		{"hello", "1|b", "Version"},
	} {
		err := (&Control{Package: tt.pkg, Version: tt.version}).Check()
		var ce *ControlError
		if tt.field == "" && err != nil || tt.field != "" && (!errors.As(err, &ce) || ce.Field != tt.field) {
			t.Errorf("Check of %s %s: %v, want an error of field %q", tt.pkg, tt.version, err, tt.field)
		}
		if tt.field == "Version" && !errors.Is(err, repo.ErrVersion) {
			t.Errorf("Check of %s %s: %v, want a repo.ErrVersion", tt.pkg, tt.version, err)
		}
	}
	if err := (&Control{Package: "hello"}).Check(); err == nil || err.Error() != "control file of hello: Version: empty version" {
		t.Errorf("Check of hello without a version: %v", err)
	}
}

// FuzzControl: any control file parses, and a relation Requirements takes round-trips
// through pkg's requirement syntax.
func FuzzControl(f *testing.F) {
	f.Add([]byte("Package: a\nArchitecture: amd64\nDepends: b (>= 1) | c:any, d\nProvides: e (= 2)\nBreaks: f (<< 3)\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := parseControl(data)
		for _, field := range relationFields {
			reqs, err := c.Requirements(field)
			if err != nil {
				continue
			}
			for _, r := range reqs {
				back, err := repo.ParseRequirement(r.String())
				if err != nil || !back.Equal(r) {
					t.Fatalf("%s: %q reads back as %+v, %v", field, r, back, err)
				}
			}
		}
	})
}

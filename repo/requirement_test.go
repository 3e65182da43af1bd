package repo

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseRequirement(t *testing.T) {
	tests := []struct {
		in   string
		want Requirement
	}{
		{"jq", Requirement{Name: "jq"}},
		{"jq=1.7", Requirement{Name: "jq", Constraints: []Constraint{{"=", "1.7"}}}},
		{"jq@1.7.1", Requirement{Name: "jq", Constraints: []Constraint{{"@", "1.7.1"}}}},
		{"jq@2", Requirement{Name: "jq", Constraints: []Constraint{{"@", "2"}}}},
		{"jq@1.7-rc1", Requirement{Name: "jq", Constraints: []Constraint{{"@", "1.7-rc1"}}}},
		{"jq@v1.7", Requirement{Name: "jq", Constraints: []Constraint{{"@", "v1.7"}}}},
		{"util-linux=2:2.39.5-0+deb12u3", Requirement{Name: "util-linux", Constraints: []Constraint{{"=", "2:2.39.5-0+deb12u3"}}}},
		{"jq>=1.0_beta", Requirement{Name: "jq", Constraints: []Constraint{{">=", "1.0_beta"}}}},
		{"jq>=1.6", Requirement{Name: "jq", Constraints: []Constraint{{">=", "1.6"}}}},
		{"jq<2", Requirement{Name: "jq", Constraints: []Constraint{{"<", "2"}}}},
		{"jq>=1.6,<2", Requirement{Name: "jq", Constraints: []Constraint{{">=", "1.6"}, {"<", "2"}}}},
		{"jq<=1.6,>1,!=1.5", Requirement{Name: "jq", Constraints: []Constraint{{"<=", "1.6"}, {">", "1"}, {"!=", "1.5"}}}},
		{"libssl1.1+x-dev", Requirement{Name: "libssl1.1+x-dev"}},
		{"g++>=13-rc1", Requirement{Name: "g++", Constraints: []Constraint{{">=", "13-rc1"}}}},
		{"python3.12", Requirement{Name: "python3.12"}},
		{"team/jq", Requirement{Name: "jq", Repo: "team"}},
		{"team/jq@1.7", Requirement{Name: "jq", Repo: "team", Constraints: []Constraint{{"@", "1.7"}}}},
		{"my.repo/jq>=1,<2", Requirement{Name: "jq", Repo: "my.repo", Constraints: []Constraint{{">=", "1"}, {"<", "2"}}}},
	}
	for _, tt := range tests {
		got, err := ParseRequirement(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseRequirement(%q) = %#v, %v; want %#v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseRequirementRefuses(t *testing.T) {
	tests := []string{
		"", "J+Q", "_jq>=1", "jq>=", "jq@", "jq=", ">=1", "@1", "jq>=1,", "jq>=1,,<2", "jq>=1,jq<2",
		"jq==1", "jq=>1", "jq!1", "jq>=V1", "jq>=1:", "jq=a:1", "jq >=1", "jq@1,<2", "jq@1,", "jq>=1,@2", "jq@@1", "jq@>=1", "jq>=1.0 ", "_jq",
		"/jq", "team/", "Team/jq", "a/b/jq", "team/jq/x", "jq@1/2", "jq>=1/2",
		strings.Repeat("a", 129), "jq=1" + strings.Repeat("0", 64),
	}
	for _, in := range tests {
		got, err := ParseRequirement(in)
		if err == nil {
			t.Errorf("ParseRequirement(%q) = %#v, want error", in, got)
			continue
		}
		if re := (*requirementError)(nil); !errors.As(err, &re) || re.Text != in {
			t.Errorf("ParseRequirement(%q): error %#v, want a *requirementError naming it", in, err)
		}
	}
}

func TestAllows(t *testing.T) {
	tests := []struct {
		req     string
		version string
		want    bool
	}{
		{"jq", "0.1", true},
		{"jq=1.7", "1.7", true},
		{"jq=1.7", "1.7.0", false},
		{"jq>=1.6,<2", "1.6", true},
		{"jq>=1.6,<2", "1.10", true},
		{"jq>=1.6,<2", "2", false},
		{"jq>=1.6,<2", "2-rc1", true},    // a pre-release of 2 is below 2
		{"jq>=1.6,<2", "2.0-rc1", false}, // but 2.0 is above 2
		{"jq>=1.6,<2", "1.5.9", false},
		{"jq<=1.6", "1.6", true},
		{"jq>1.6", "1.6", false},
		{"jq>1.6", "1.6.1", true},
		{"jq!=1.6", "1.6", false},
		{"jq!=1.6", "1.7", true},
		{"jq@2", "2", true},
		{"jq@2", "2.0", true},
		{"jq@2", "2.1.3", true},
		{"jq@2", "20", false},
		{"jq@2", "2-rc1", false},
		{"jq@2", "1.9", false},
		{"jq@1.7", "1.7", true},
		{"jq@1.7", "1.7.0", true},
		{"jq@1.7", "1.7.12", true},
		{"jq@1.7", "1.70", false},
		{"jq@1.7", "1.7-rc1", false},
		{"jq@1.7", "1.8", false},
		{"jq@1.7.1", "1.7.1", true},
		{"jq@1.7.1", "1.7.1.2", true},
		{"jq@1.7.1", "1.7.10", false},
		{"jq@1.7.1", "1.7", false},
		{"jq=2", "2.0", false},
		{"im@6.9.8", "6.9.8+1", true}, // a packaging revision
		{"im@6.9.8", "6.9.8+1.2", true},
		{"im@6.9.8", "6.9.8-1", true}, // a Debian revision
		{"im@6.9.8", "6.9.8-2.1+deb12u3", true},
		{"im@6.9.8", "6.9.8-1~bpo11+1", true},
		{"im@6.9.8", "6.9.8_1", true},
		{"im@6.9.8", "v6.9.8", true},
		{"im@6.9.8", "v6.9.8.1", true},
		{"im@6.9.8", "0:6.9.8", true},
		{"im@6.9.8", "6.9.80", false},
		{"im@6.9.8", "6.9.8-rc1", false},
		{"im@6.9.8", "6.9.8~rc1", false},
		{"im@6.9.8", "6.9.8_beta", false},
		{"im@6.9.8", "6.9.8-", false},
		{"im@6.9.8", "1:6.9.8", false}, // another epoch
		{"im@6.9.8", "6.9.9", false},
		{"im@v6.9", "6.9.8", true},
		{"im@1:2.39", "1:2.39.5-0+deb12u3", true},
		{"im@1:2.39", "2.39.5", false},
		{"im@1.6-2", "1.6-2.1+deb12u3", true},
		{"im@1.6-2", "1.6-20", false},
		{"im>=1:2.39", "1:2.39.5-0+deb12u3", true},
		{"im>=1:2.39", "2.40", false},
		{"im<1.6", "1.6-1", false},
		{"im<1.6", "1.6~rc1-1", true},
		{"im>=v1.2,<v2", "1.10", true},
	}
	for _, tt := range tests {
		r, err := ParseRequirement(tt.req)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Allows(tt.version); got != tt.want {
			t.Errorf("%s Allows(%q) = %v, want %v", tt.req, tt.version, got, tt.want)
		}
	}
}

func TestRequirementString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"jq", "jq"},
		{"jq@1.7.1", "jq@1.7.1"},
		{"jq@2", "jq@2"},
		{"jq=1.7.1", "jq=1.7.1"},
		{"jq>=1.6,<2", "jq>=1.6,<2"},
	}
	for _, tt := range tests {
		r, err := ParseRequirement(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.String(); got != tt.want {
			t.Errorf("ParseRequirement(%q).String() = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestLockAt checks that a lockfile keeps an "@" requirement as it was given.
func TestLockAt(t *testing.T) {
	l := testLock(t, []string{"jq 1.6", "jq 1.7", "jq 1.7.12", "jq 1.70"}, "jq@1.7")
	text := encodeLock(t, l)
	if !strings.Contains(text, `"requires": [
    "jq@1.7"
  ]`) {
		t.Errorf("Encode:\n%s\nwant requires jq@1.7", text)
	}
	back, err := decodeLock([]byte(text))
	if err != nil || !reflect.DeepEqual(withoutOrders(back), l) {
		t.Errorf("decodeLock(encode(l)) = %+v, %v; want %+v", back, err, l)
	}
	if order, err := back.Order(); err != nil || ids(order) != "jq 1.7.12" {
		t.Errorf("Order = %q, %v; want jq 1.7.12", ids(order), err)
	}
}

func FuzzParseRequirement(f *testing.F) {
	for _, s := range []string{"jq", "jq@1.7.1", "jq@2", "jq>=1.6,<2", "a<=1,>0,!=0.5", "JQ", "jq>=", "a>=1|b|c<2", "@eslint/js@npm:^9 || 1.2 - 2", "team/@a/b@1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRequirement(s)
		if err != nil {
			return
		}
		for a := range r.Alternatives() {
			if !validName(a.Name) || len(r.Or) > 0 && a.Repo != "" {
				t.Fatalf("ParseRequirement(%q): bad alternative %#v", s, a)
			}
			for _, c := range a.Constraints {
				if c.Op == npmOp {
					if _, err := parseRange(c.Version); err != nil {
						t.Fatalf("ParseRequirement(%q): bad range %q", s, c.Version)
					}
				} else if checkVersion(c.Version) != nil {
					t.Fatalf("ParseRequirement(%q): bad version %q", s, c.Version)
				}
			}
		}
		r2, err := ParseRequirement(r.String())
		if err != nil || !reflect.DeepEqual(r, r2) {
			t.Fatalf("ParseRequirement(%q) = %#v, %v; want %#v", r.String(), r2, err, r)
		}
	})
}

func TestParseRequirements(t *testing.T) {
	reqs, err := ParseRequirements([]string{"jq>=1.6,<2", "app", "tool@1"})
	if err != nil || JoinRequirements(reqs) != "jq>=1.6,<2 app tool@1" {
		t.Errorf("ParseRequirements: %q, %v", JoinRequirements(reqs), err)
	}
	if _, err := ParseRequirements([]string{"app", "Bad!"}); err == nil {
		t.Error("ParseRequirements took Bad!")
	}
}

func TestParseAlternatives(t *testing.T) {
	got, err := ParseRequirement("debconf>=0.5|debconf-2.0|cdebconf=1")
	want := Requirement{Name: "debconf", Constraints: []Constraint{{">=", "0.5"}}, Or: []Requirement{
		{Name: "debconf-2.0"}, {Name: "cdebconf", Constraints: []Constraint{{"=", "1"}}}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseRequirement = %#v, %v; want %#v", got, err, want)
	}
	if s := got.String(); s != "debconf>=0.5|debconf-2.0|cdebconf=1" {
		t.Errorf("String = %q", s)
	}
	if alts := slices.Collect(got.Alternatives()); len(alts) != 3 || alts[0].Or != nil || alts[0].Name != "debconf" || alts[2].Name != "cdebconf" {
		t.Errorf("Alternatives = %#v", alts)
	}
	for _, in := range []string{"a|", "|a", "a||b", "a|B+c", "a|b>=", "team/a|b", "a|team/b", "a@1|b@", "a | b"} {
		_, err := ParseRequirement(in)
		if re := (*requirementError)(nil); !errors.As(err, &re) || re.Text != in {
			t.Errorf("ParseRequirement(%q): error %v, want a *requirementError naming it", in, err)
		}
	}
	other, _ := ParseRequirement("debconf>=0.5|debconf-2.0")
	if got.Equal(other) || !other.Equal(other) {
		t.Errorf("Equal does not compare the alternatives")
	}
}

func TestMet(t *testing.T) {
	tests := []struct {
		req      string
		name     string
		version  string
		provides []string
		want     bool
	}{
		{"zlib1g>=1:1.2", "zlib1g", "1:1.2.13", nil, true},
		{"zlib1g>=1:1.3", "zlib1g", "1:1.2.13", nil, false},
		{"libz1", "zlib1g", "1:1.2.13", []string{"libz1"}, true},
		{"libz1", "zlib1g", "1:1.2.13", []string{"libz1=1:1.2.13"}, true},
		{"libz1>=1", "zlib1g", "1:1.2.13", []string{"libz1"}, false},            // an unversioned provides meets no versioned need
		{"libz1>=1", "zlib1g", "1:1.2.13", []string{"libz1=1:1.2.13"}, true},    // the provided version counts,
		{"libz1>=2:0", "zlib1g", "1:1.2.13", []string{"libz1=1:1.2.13"}, false}, // not the package's
		{"zlib1g>=1", "libz", "3", []string{"libz1=3"}, false},
		{"debconf>=0.5|debconf-2.0", "debconf", "1.5.82", nil, true},
		{"debconf>=0.5|debconf-2.0", "debconf", "0.4", nil, false},
		{"debconf>=0.5|debconf-2.0", "cdebconf", "0.270", []string{"debconf-2.0"}, true},
		{"debconf>=0.5|debconf-2.0", "debconf-2.0", "1", nil, true},
		{"a|b", "c", "1", []string{"d"}, false},
	}
	for _, tt := range tests {
		r, err := ParseRequirement(tt.req)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Met("", tt.name, tt.version, deps(tt.provides...)); got != tt.want {
			t.Errorf("%s Met(%s, %s, %q) = %v, want %v", tt.req, tt.name, tt.version, tt.provides, got, tt.want)
		}
	}
}

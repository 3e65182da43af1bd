package repo

import (
	"errors"
	"slices"
	"testing"
)

func TestLookup(t *testing.T) {
	ix := testIndex("jq 1.6", "jq 1.10", "jq 1.7.1", "jq 2.0-rc1", "jq 3.0-beta", "yq 4")
	tests := []struct {
		req, want, err string
		near           []string // with err "missing": the *MissingError's names it may mean; "conflict": a *conflictError
	}{
		{req: "jq", want: "jq 1.10"},             // releases first
		{req: "jq>1.10", want: "jq 3.0-beta"},    // a pre-release when no release will do
		{req: "jq>=2.0-rc1", want: "jq 2.0-rc1"}, // or of the release a constraint names one of
		{req: "jq@2.0-rc1", want: "jq 2.0-rc1"},
		{req: "jq<2", want: "jq 1.10"},
		{req: "jq@1.7.1", want: "jq 1.7.1"},
		{req: "jq>=1.7,<1.8", want: "jq 1.7.1"},
		{req: "jq>=4", err: "conflict"},
		{req: "zq", err: "missing", near: []string{"jq", "yq"}},
		{req: "xyz", err: "missing"},
	}
	for _, tt := range tests {
		got, err := ix.Lookup(parseReqs(t, tt.req)[0])
		var me *MissingError
		switch {
		case tt.err == "missing":
			if !errors.As(err, &me) || me.Name != tt.req || !slices.Equal(me.Near, tt.near) {
				t.Errorf("Lookup(%s): got error %v, want a *MissingError naming %q", tt.req, err, tt.near)
			}
		case tt.err == "conflict":
			if want := conflict("jq", []string{"3.0-beta", "2.0-rc1", "1.10", "1.7.1", "1.6"}, "jq>=4 (requested)"); !sameError(err, want) {
				t.Errorf("Lookup(%s): got error %#v, want %#v", tt.req, err, want)
			}
		case err != nil:
			t.Errorf("Lookup(%s): %v", tt.req, err)
		case ids([]Package{got}) != tt.want:
			t.Errorf("Lookup(%s) = %s, want %s", tt.req, ids([]Package{got}), tt.want)
		}
	}
}

func TestSearch(t *testing.T) {
	ix := testIndex("jq 1.6", "jq 1.10", "yq 4", "hello 1.0", "hello 2.0", "hello 3.0-rc1", "libgreet 1.0", "libgreet 1.1-rc1")
	summaries := map[string]string{"jq 1.10": "JSON processor", "yq 4": "YAML and json processor", "hello 2.0": "says hello"}
	for i, p := range ix.Packages {
		ix.Packages[i].Summary = summaries[p.Name+" "+p.Version]
	}
	tests := []struct {
		word, want string
	}{
		{"", "hello 2.0, jq 1.10, libgreet 1.0, yq 4"}, // the versions install takes
		{"json", "jq 1.10, yq 4"},
		{"JSON", "jq 1.10, yq 4"},
		{"Q", "jq 1.10, yq 4"},
		{"hello", "hello 2.0"},
		{"greet", "libgreet 1.0"},
		{"nothing", ""},
	}
	for _, tt := range tests {
		if got := ids(ix.Search(tt.word)); got != tt.want {
			t.Errorf("Search(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
	if got := (&Index{}).Search(""); len(got) != 0 {
		t.Errorf("Search on an empty index = %v", got)
	}
}

func TestSimilar(t *testing.T) {
	names := []string{"hello", "help", "shell", "libgreet", "greeter", "python", "jq", "yq"}
	tests := []struct {
		name string
		want []string
	}{
		{"helo", []string{"hello", "help"}},
		{"pyhton", []string{"python"}},
		{"greet", []string{"greeter", "libgreet"}},
		{"zq", []string{"jq", "yq"}},
		{"hello", nil}, // itself is no suggestion
		{"xyz", nil},
		{"e", nil},
	}
	for _, tt := range tests {
		if got := Similar(tt.name, names); !slices.Equal(got, tt.want) {
			t.Errorf("Similar(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

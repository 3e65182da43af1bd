package repo

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestMerge merges three indexes: a name comes from the first that has it, whatever
// versions later ones have, unless pinned; each entry knows its repository; dependencies
// resolve across them.
func TestMerge(t *testing.T) {
	names := []string{"team", "stable", "extra"}
	ixs := []*Index{
		testIndex("app 1.0 lib>=1", "tool 1.0"),
		testIndex("lib 1.0", "tool 9.0", "app 5.0"),
		testIndex("lib 7.0", "more 1.0 tool"),
	}
	tests := []struct {
		reqs []string
		want string // name version repo, ...
	}{
		{[]string{"app"}, "lib 1.0 stable, app 1.0 team"},
		{[]string{"tool"}, "tool 1.0 team"},
		{[]string{"stable/tool"}, "tool 9.0 stable"},
		{[]string{"more"}, "tool 1.0 team, more 1.0 extra"},
		{[]string{"stable/app"}, "app 5.0 stable"},
		{[]string{"app", "extra/lib"}, "lib 7.0 extra, app 1.0 team"},
	}
	for _, tt := range tests {
		reqs := parseReqs(t, tt.reqs...)
		pins, err := Pins(reqs)
		if err != nil {
			t.Fatal(err)
		}
		ix, err := Merge(names, ixs, pins)
		if err != nil {
			t.Fatalf("Merge for %q: %v", tt.reqs, err)
		}
		pkgs, err := ix.Resolve(reqs)
		if err != nil {
			t.Fatalf("Resolve %q: %v", tt.reqs, err)
		}
		var got []string
		for _, p := range pkgs {
			got = append(got, p.Name+" "+p.Version+" "+p.Repo)
		}
		if strings.Join(got, ", ") != tt.want {
			t.Errorf("Resolve %q = %s; want %s", tt.reqs, strings.Join(got, ", "), tt.want)
		}
	}
}

func TestMergeRefusesPins(t *testing.T) {
	names := []string{"team", "stable"}
	ixs := []*Index{testIndex("app 1.0"), testIndex("lib 1.0")}
	tests := []struct {
		reqs []string
		want pinError
	}{
		{[]string{"stabel/lib"}, pinError{Repo: "stabel", Name: "lib", Repos: []string{"team", "stable"}}},
		{[]string{"team/lib"}, pinError{Repo: "team", Name: "lib"}},
	}
	for _, tt := range tests {
		pins, err := Pins(parseReqs(t, tt.reqs...))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Merge(names, ixs, pins)
		var pe *pinError
		if !errors.As(err, &pe) || !reflect.DeepEqual(*pe, tt.want) {
			t.Errorf("Merge for %q: %#v; want a *pinError %+v", tt.reqs, err, tt.want)
		}
	}
	for _, tt := range []struct {
		e    pinError
		want string
	}{
		{pinError{Repo: "stabel", Name: "lib", Repos: []string{"team", "stable"}}, `requirement stabel/lib: no repository stabel in use (team and stable); did you mean "stable"?`},
		{pinError{Repo: "team", Name: "lib"}, "requirement team/lib: repository team has no package lib"},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	if _, err := Pins(parseReqs(t, "team/app", "stable/app")); !errors.Is(err, ErrTwoPins) || errAs[*twoPinsError](err) == nil || *errAs[*twoPinsError](err) != (twoPinsError{"app", "team", "stable"}) {
		t.Errorf("Pins of app to two: %v", err)
	}
	if _, err := Parse([]byte(`{"format":1,"packages":[{"name":"a","version":"1","archive":"a.tar","size":0,"sha256":"` + testSum + `","depends":["team/lib"]}]}`)); !errors.Is(err, ErrIndex) || !strings.Contains(err.Error(), `requirement "team/lib" names a repository`) {
		t.Errorf("Parse of a depends naming a repository: %v", err)
	}
}

// TestLockRepos round-trips a lock of two repositories (format 3): each line names its
// repository, and a line naming one the lock does not list is refused.
func TestLockRepos(t *testing.T) {
	reqs := parseReqs(t, "app")
	ix, err := Merge([]string{"team", "stable"}, []*Index{testIndex("app 1.0 lib"), testIndex("lib 1.0")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := ix.Resolve(reqs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pkgs {
		pkgs[i].Archive = testRepoURL + pkgs[i].Archive
	}
	l := NewLock(testRepoURL, reqs, pkgs)
	l.Index = &LockIndex{Name: "team", Version: 3, Keys: []string{"0123456789abcdef"}}
	l.Repos = []LockRepo{{Name: "team", URL: testRepoURL, Index: l.Index}, {Name: "stable", URL: "file:///srv/stable/"}}
	text := encodeLock(t, l)
	for _, want := range []string{`"lockfile": 1,`, `"repos": [`, `{"name":"stable","url":"file:///srv/stable/"}`, `"sha256":"` + testSum + `","repo":"stable"}`} {
		if !strings.Contains(text, want) {
			t.Errorf("lockfile lacks %s:\n%s", want, text)
		}
	}
	back, err := decodeLock([]byte(text))
	if err != nil {
		t.Fatalf("decodeLock: %v\n%s", err, text)
	}
	if encodeLock(t, back) != text {
		t.Errorf("round trip:\n%s\nwant\n%s", encodeLock(t, back), text)
	}
	if r, ok := back.Of("stable"); !ok || r.URL != "file:///srv/stable/" {
		t.Errorf("Of(stable) = %+v, %v", r, ok)
	}
	for _, tt := range []struct{ old, new, want string }{
		{`"repo":"stable"`, `"repo":"other"`, `repo "other" is not one of the lockfile's repos`},
		{`{"name":"stable","url":"file:///srv/stable/"}`, `{"name":"team","url":"file:///srv/stable/"}`, "repos[1]: team is listed twice"},
		{",\n    " + `{"name":"stable","url":"file:///srv/stable/"}`, ``, "repos names one repository"},
		{`"repo": "https://example.com/repo/"`, `"repo": "https://example.com/other/"`, "not those of the first of its repos"},
	} {
		_, err := decodeLock([]byte(strings.Replace(text, tt.old, tt.new, 1)))
		if !errors.Is(err, ErrLockfile) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("decodeLock with %s: %v; want %q", tt.new, err, tt.want)
		}
	}
}

// errAs returns the error of type E in err's chain, or the zero E.
func errAs[E error](err error) E {
	var e E
	errors.As(err, &e)
	return e
}

package repo

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// testIndex builds an index from lines of "name version depends...", where a word
// "provides:R", "conflicts:R" or "replaces:R" adds R to that list instead.
func testIndex(lines ...string) *Index {
	ix := &Index{Format: 1}
	for _, l := range lines {
		f := strings.Fields(l)
		p := Package{Name: f[0], Version: f[1], Archive: f[0] + "-" + f[1] + ".tar", SHA256: testSum}
		for _, w := range f[2:] {
			field, req, _ := strings.Cut(w, ":")
			switch field {
			case "provides":
				p.Provides = append(p.Provides, deps(req)...)
			case "conflicts":
				p.Conflicts = append(p.Conflicts, deps(req)...)
			case "replaces":
				p.Replaces = append(p.Replaces, deps(req)...)
			default:
				p.Depends = append(p.Depends, deps(w)...)
			}
		}
		ix.Packages = append(ix.Packages, p)
	}
	return ix
}

func parseReqs(t *testing.T, ss ...string) []Requirement {
	t.Helper()
	var reqs []Requirement
	for _, s := range ss {
		r, err := ParseRequirement(s)
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, r)
	}
	return reqs
}

// ids lists packages as "name version, ...".
func ids(ps []Package) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.Name + " " + p.Version
	}
	return strings.Join(s, ", ")
}

// preIndex has a package whose pre-releases z asks for, and packages that need both.
var preIndex = []string{"b 1.9", "b 2.0-rc1", "b 2.0-rc2", "b 3.0-beta", "z 1 b>=2.0-rc1", "app 1 b z", "app2 1 z b"}

func TestResolve(t *testing.T) {
	tests := []struct {
		name  string
		index []string
		reqs  []string
		want  string
	}{
		{"single", []string{"hello 1.0"}, []string{"hello"}, "hello 1.0"},
		{"none", []string{"hello 1.0"}, nil, ""},
		{"newest", []string{"hello 1.9", "hello 1.10", "hello 1.2", "hello 1.11-rc1"}, []string{"hello"}, "hello 1.10"},
		{"only pre-releases", []string{"hello 1.11-rc1", "hello 1.11-rc2"}, []string{"hello"}, "hello 1.11-rc2"},
		{"pre-release asked for", []string{"hello 1.10", "hello 1.11-rc1", "hello 1.11-rc2", "hello 2.0-beta"}, []string{"hello>=1.11-rc1"}, "hello 1.11-rc2"},
		{"release of a pre-release asked for", []string{"hello 1.11-rc2", "hello 1.11", "hello 2.0-beta"}, []string{"hello>=1.11-rc1"}, "hello 1.11"},
		{"pre-release needed", []string{"a 1 b>1.0", "b 1.0", "b 1.1~beta"}, []string{"a"}, "b 1.1~beta, a 1"},
		{"pre-release excluded is not asked for", []string{"lib 1.9", "lib 2.0-rc1", "lib 2.0-rc2"}, []string{"lib!=2.0-rc1"}, "lib 1.9"},
		// A need found after b is decided re-ranks b's candidates: the same b whatever the order.
		{"pre-release asked for late", preIndex, []string{"b", "z"}, "b 2.0-rc2, z 1"},
		{"pre-release asked for first", preIndex, []string{"z"}, "b 2.0-rc2, z 1"},
		{"pre-release asked for by a dependency's dependency", preIndex, []string{"app"}, "b 2.0-rc2, z 1, app 1"},
		{"pre-release asked for by a later dependency", preIndex, []string{"app2"}, "b 2.0-rc2, z 1, app2 1"},
		{"pre-release when the release fails", []string{"a 1 b", "b 1.0 c>=2", "b 1.1~beta", "c 1"}, []string{"a"}, "b 1.1~beta, a 1"},
		{"newest allowed", []string{"hello 1.9", "hello 1.10", "hello 2.0"}, []string{"hello<2"}, "hello 1.10"},
		{"exact", []string{"jq 1.6", "jq 1.7.1", "jq 1.8"}, []string{"jq=1.7.1"}, "jq 1.7.1"},
		{"at", []string{"jq 1.6", "jq 1.7.1", "jq 1.8"}, []string{"jq@1.7.1"}, "jq 1.7.1"},
		{"at major", []string{"x 1.9", "x 2.0", "x 2.4.1", "x 3.0"}, []string{"x@2"}, "x 2.4.1"},
		{"at minor", []string{"x 1.7", "x 1.7.12", "x 1.70", "x 1.8-rc1"}, []string{"x@1.7"}, "x 1.7.12"},
		{"chain", []string{"a 1 b", "b 1 c", "c 1"}, []string{"a"}, "c 1, b 1, a 1"},
		{
			"diamond",
			[]string{"a 1 b c", "b 1 d>=1", "c 1 d<3", "d 1.0", "d 2.0", "d 3.0"},
			[]string{"a"},
			"d 2.0, b 1, c 1, a 1",
		},
		{"independent by name", []string{"z 1", "a 1", "m 1"}, []string{"z", "a", "m"}, "a 1, m 1, z 1"},
		{"shared dependency", []string{"x 1 lib", "y 1 lib", "lib 1"}, []string{"y", "x"}, "lib 1, x 1, y 1"},
		{"requests combine", []string{"lib 1.0", "lib 1.5", "lib 2.5"}, []string{"lib>=1.2", "lib<2"}, "lib 1.5"},
		{"duplicate depends", []string{"a 1 lib>=1 lib<2", "lib 1.5", "lib 2.0"}, []string{"a"}, "lib 1.5, a 1"},
		{
			// a 2 needs c<2, whose only version needs a<2: only a 1 works.
			"backtrack",
			[]string{"a 1", "a 2 c<2", "c 1 a<2", "c 2", "b 1"},
			[]string{"a", "b"},
			"a 1, b 1",
		},
		{
			// lib is decided (2.5) before mid, which needs lib<2.
			"revise earlier choice",
			[]string{"app 1 lib", "zed 1 mid", "mid 1 lib<2", "lib 1.5", "lib 2.5"},
			[]string{"app", "zed"},
			"lib 1.5, app 1, mid 1, zed 1",
		},
		{"release after its pre-releases", []string{"jq 1.7-rc1", "jq 1.7", "jq 1.7-rc2"}, []string{"jq"}, "jq 1.7"},
		{"multi-digit pre-release", []string{"jq 1.7-rc9", "jq 1.7-rc10", "jq 1.6"}, []string{"jq>1.6"}, "jq 1.7-rc10"},
		{"multi-digit segments", []string{"jq 1.9.9", "jq 1.10.0", "jq 1.2.10"}, []string{"jq"}, "jq 1.10.0"},
		{"below a release excludes it", []string{"jq 1.9", "jq 2.0", "jq 2.0.1"}, []string{"jq<2.0"}, "jq 1.9"},
		{
			"depends syntax",
			[]string{
				"app 1 a b=1.0 c>=1.6 d<2 e>=1.6,<2 f@1.7.1",
				"a 1", "b 1.0", "b 1.1", "c 1.5", "c 1.6", "d 1.9", "d 2", "e 1.5", "e 1.8", "e 2.1", "f 1.7", "f 1.7.1", "f 1.8",
			},
			[]string{"app"},
			"a 1, b 1.0, c 1.6, d 1.9, e 1.8, f 1.7.1, app 1",
		},
		{
			"request syntax",
			[]string{"a 1", "a 2", "b 1.0", "b 1.1", "c 1.5", "c 1.6", "d 1.9", "d 2", "e 1.5", "e 1.8", "e 2.1", "f 1.7.1", "f 1.8"},
			[]string{"a", "b=1.0", "c>=1.6", "d<2", "e>=1.6,<2", "f@1.7.1"},
			"a 2, b 1.0, c 1.6, d 1.9, e 1.8, f 1.7.1",
		},
		{
			// both sides of a diamond narrow the shared dependency.
			"diamond intersection",
			[]string{"a 1 b c", "b 1 d>=1.2,<3", "c 1 d!=2.0,<2.5", "d 1.0", "d 1.2", "d 2.0", "d 2.4", "d 2.6"},
			[]string{"a"},
			"d 2.4, b 1, c 1, a 1",
		},
		{
			// app 2 depends on a missing package; app 1 does not.
			"skip broken version",
			[]string{"app 1", "app 2 gone"},
			[]string{"app"},
			"app 1",
		},
		// A cycle's packages come together, by name, after what the cycle depends on.
		{"cycle", []string{"b 1 a", "a 1 b"}, []string{"b"}, "a 1, b 1"},
		{"self cycle", []string{"a 1 a"}, []string{"a"}, "a 1"},
		{"cycle through a diamond", []string{"a 1 b c", "b 1 d", "c 1", "d 1 a"}, []string{"a"}, "c 1, a 1, b 1, d 1"},
		{"cycle inside a chain", []string{"top 1 a", "a 1 b", "b 1 c", "c 1 b z", "z 1"}, []string{"top"}, "z 1, b 1, c 1, a 1, top 1"},
		{"two cycles", []string{"app 1 x a", "a 1 b", "b 1 a", "x 1 y", "y 1 x b"}, []string{"app"}, "a 1, b 1, x 1, y 1, app 1"},
		{"cycle at versions", []string{"a 1 b>=2", "b 1", "b 2 a=1"}, []string{"a"}, "a 1, b 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := testIndex(tt.index...).Resolve(parseReqs(t, tt.reqs...))
			if err != nil {
				t.Fatal(err)
			}
			if ids(got) != tt.want {
				t.Errorf("Resolve: got %q, want %q", ids(got), tt.want)
			}
		})
	}
}

func TestResolveRefuses(t *testing.T) {
	tests := []struct {
		name  string
		index []string
		reqs  []string
		want  error
	}{
		{"not found", []string{"a 1"}, []string{"nope"}, &MissingError{Name: "nope"}},
		{"misspelt", []string{"hello 1", "help 2", "shell 1"}, []string{"helo"}, &MissingError{Name: "helo", Near: []string{"hello", "help"}}},
		{"swapped", []string{"python 3"}, []string{"pyhton"}, &MissingError{Name: "pyhton", Near: []string{"python"}}},
		{"part", []string{"libgreet 1", "lib 1", "greeter 1"}, []string{"greet"}, &MissingError{Name: "greet", Near: []string{"greeter", "libgreet"}}},
		{"missing dependency", []string{"app 1.0 lib"}, []string{"app"}, &MissingError{Name: "lib", By: "app 1.0"}},
		{
			"conflict",
			[]string{"app 1.0 lib>=2", "tool 3.1 lib<2", "lib 1.5", "lib 2.5"},
			[]string{"app", "tool"},
			conflict("lib", nil, "lib>=2 (required by app 1.0)", "lib<2 (required by tool 3.1)"),
		},
		{
			"deep conflict",
			[]string{"app 1.0 mid", "mid 1 lib>=2", "tool 3.1 lib<2", "lib 1.5", "lib 2.5"},
			[]string{"app", "tool"},
			conflict("lib", nil, "lib<2 (required by tool 3.1)", "lib>=2 (required by mid 1)"),
		},
		{
			"requests conflict",
			[]string{"lib 1.5", "lib 2.5"},
			[]string{"lib>=2", "lib<2"},
			conflict("lib", nil, "lib>=2 (requested)", "lib<2 (requested)"),
		},
		{"no version", []string{"lib 1.5"}, []string{"lib>=2"}, conflict("lib", []string{"1.5"}, "lib>=2 (requested)")},
		{"many versions", []string{"lib 1", "lib 2", "lib 3", "lib 4", "lib 5", "lib 6"}, []string{"lib>=7"},
			conflict("lib", []string{"6", "5", "4", "3", "2", "1"}, "lib>=7 (requested)")},
		{
			"diamond conflict",
			[]string{"a 1 b c", "b 1 d>=2", "c 1 d<2", "d 1.0", "d 2.0"},
			[]string{"a"},
			conflict("d", nil, "d>=2 (required by b 1)", "d<2 (required by c 1)"),
		},
		{
			"pinned versions conflict",
			[]string{"app 1 jq@1.6", "tool 1 jq>=1.7", "jq 1.6", "jq 1.7"},
			[]string{"app", "tool"},
			conflict("jq", nil, "jq@1.6 (required by app 1)", "jq>=1.7 (required by tool 1)"),
		},
		{
			"pre-release is not the release",
			[]string{"app 1 jq>=2", "jq 1.9", "jq 2-rc1"},
			[]string{"app"},
			conflict("jq", nil, "jq>=2 (required by app 1)"),
		},
		{"missing exact version", []string{"jq 1.7", "jq 1.7.1.1"}, []string{"jq=1.7.1"}, conflict("jq", nil, "jq=1.7.1 (requested)")},
		{"missing at version", []string{"x 1.9", "x 20", "x 2-rc1"}, []string{"x@2"}, conflict("x", []string{"20", "2-rc1", "1.9"}, "x@2 (requested)")},
		{"missing deep dependency", []string{"a 1 b", "b 1 c"}, []string{"a"}, &MissingError{Name: "c", By: "b 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := testIndex(tt.index...).Resolve(parseReqs(t, tt.reqs...))
			if err == nil {
				t.Fatalf("Resolve: got %q, want error", ids(got))
			}
			if !sameError(err, tt.want) {
				t.Errorf("Resolve: got error\n%#v, want\n%#v", err, tt.want)
			}
		})
	}
}

// conflict is the *conflictError on name of needs, each as imposed.String words it,
// the index offering the versions offered (nil: any).
func conflict(name string, offered []string, needs ...string) *conflictError {
	e := &conflictError{Name: name}
	for _, n := range needs {
		req, by, _ := strings.Cut(strings.TrimSuffix(n, ")"), " (")
		by = strings.TrimPrefix(strings.TrimPrefix(by, "requested"), "required by ")
		req, provided := strings.CutPrefix(req, "providing ")
		r, err := ParseRequirement(req)
		if err != nil {
			panic(err)
		}
		e.Needs = append(e.Needs, imposed{Requirement: r, By: by, Provided: provided})
	}
	for _, v := range offered {
		e.Offered = append(e.Offered, Package{Version: v})
	}
	return e
}

// sameError reports whether err is of want's type with the fields that say what failed:
// the names, requirements and versions of a *conflictError (its offered versions when
// want lists some), a *MissingError's fields, a *ConflictsError's, a *requirementError's text.
func sameError(err, want error) bool {
	switch w := want.(type) {
	case *conflictError:
		var e *conflictError
		if !errors.As(err, &e) || e.Name != w.Name || e.More != w.More || len(e.Needs) != len(w.Needs) {
			return false
		}
		for i, n := range e.Needs {
			if n.By != w.Needs[i].By || n.Requirement.String() != w.Needs[i].Requirement.String() || n.Provided != w.Needs[i].Provided {
				return false
			}
		}
		return w.Offered == nil || slices.EqualFunc(e.Offered, w.Offered, func(a, b Package) bool { return a.Version == b.Version })
	case *MissingError:
		var e *MissingError
		return errors.As(err, &e) && e.Name == w.Name && e.By == w.By && slices.Equal(e.Near, w.Near) && slices.Equal(e.Providers, w.Providers)
	case *ConflictsError:
		var e *ConflictsError
		return errors.As(err, &e) && e.Name == w.Name && e.Version == w.Version && e.Conflicts.String() == w.Conflicts.String() &&
			e.Other == w.Other && e.OtherVersion == w.OtherVersion
	case *requirementError:
		var e *requirementError
		return errors.As(err, &e) && e.Text == w.Text
	}
	return errors.Is(err, want)
}

// imposes reports whether err is a *conflictError on name among whose needs is need,
// as imposed.String words it.
func imposes(err error, name, need string) bool {
	var e *conflictError
	return errors.As(err, &e) && e.Name == name && slices.ContainsFunc(e.Needs, func(n imposed) bool { return n.String() == need })
}

// TestResolveErrorText checks the words of the errors resolution returns, which pkg prints.
func TestResolveErrorText(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&MissingError{Name: "helo", Near: []string{"hello", "help"}}, `package "helo" not found; did you mean "hello" or "help"?`},
		{&MissingError{Name: "pyhton", Near: []string{"python"}}, `package "pyhton" not found; did you mean "python"?`},
		{&MissingError{Name: "lib", By: "app 1.0"}, `package "lib" not found (required by app 1.0)`},
		{&MissingError{Name: "libz1>=1", By: "vz 1", Providers: []string{"zlib1g"}}, `package "libz1>=1" not found (required by vz 1); provided by zlib1g, at no version it allows`},
		{&MissingError{Name: "v>=2|w", By: "a 1", Providers: []string{"o", "p"}}, `package "v>=2|w" not found (required by a 1); provided by o and p, at no version it allows`},
		{conflict("lib", nil, "lib>=2 (required by app 1.0)", "lib<2 (requested)"), `no version of "lib" satisfies lib>=2 (required by app 1.0) and lib<2 (requested); the index has `},
		{conflict("lib", []string{"6", "5", "4", "3", "2", "1"}, "lib>=7 (requested)"), `no version of "lib" satisfies lib>=7 (requested); the index has 6, 5, 4, 3 and 2 older`},
		{conflict("x", []string{"20", "2-rc1", "1.9"}, "x@2 (requested)"), `no version of "x" satisfies x@2 (requested); the index has 20, 2-rc1 and 1.9`},
		{&ConflictsError{Name: "mawk", Version: "1.3", Conflicts: deps("gawk<5")[0], Other: "gawk", OtherVersion: "4.2"}, "mawk 1.3 conflicts with gawk 4.2 (its conflicts list gawk<5)"},
		{conflict("libz1", nil, "providing libz1>=2 (required by curl 8)"), `no version of "libz1" satisfies providing libz1>=2 (required by curl 8); the index has `},
		{&requirementError{Text: "B+c", Err: badName("B+c")}, `requirement "B+c": bad package name "B+c" (want [a-z0-9][a-z0-9._+-]*, @SCOPE/NAME of [a-z0-9][a-z0-9._~-]*, or an old npm name of [A-Za-z0-9][A-Za-z0-9._-]*)`},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

// TestResolveGivesUp checks that a search too large to finish stops, and soon (once its
// work passes the budget, whatever the machine's speed), and says where it was stuck.
func TestResolveGivesUp(t *testing.T) {
	r := resolverFor(expandIndex(pigeonholeIndex(10)).versions())
	_, err := r.resolve(expandReqs(pigeonholeReqs(10)))
	ge := (*gaveUpError)(nil)
	if !errors.Is(err, ErrGaveUp) || !errors.As(err, &ge) || len(ge.busiest) == 0 || !strings.HasPrefix(ge.busiest[0], "p") {
		t.Fatalf("resolve: got error %v, want one that gives up, naming the packages it backtracked over", err)
	}
	if over := r.work - maxResolveWork; over > 10_000 { // a step past the budget at most
		t.Errorf("resolve did %d units of work, %d past the budget", r.work, over)
	}
}

// FuzzResolve checks on indexes of "name version depends..." lines that Resolve does not
// panic and that what it returns meets every requirement, dependencies first.
func FuzzResolve(f *testing.F) {
	f.Add("a 1 b c\nb 1 d>=1\nc 1 d<3\nd 1.0\nd 2.0\nd 3.0", "a")
	f.Add("a 1\na 2 c<2\nc 1 a<2\nc 2\nb 1", "a,b")
	f.Add("app 1 lib\nzed 1 mid\nmid 1 lib<2\nlib 1.5\nlib 2.5", "app,zed")
	f.Add("a 1 b\nb 1 a", "a")
	f.Add("curl 8 libz1 d>=2|e\nzlib 1 provides:libz1\nd 1\nd 2 conflicts:zlib\ne 1 d\nx 1 provides:e=1", "curl")
	f.Add(manyIndex, manyReqs)
	f.Add(pigeonholeIndex(6), pigeonholeReqs(6))
	f.Fuzz(func(t *testing.T, index, reqs string) {
		ix, rs := expandIndex(index), expandReqs(reqs)
		got, err := ix.Resolve(rs)
		if err != nil {
			return
		}
		checkResolved(t, rs, got)
	})
}

// checkResolved checks that got meets reqs and every depends of its packages, that no
// two of them conflict, and that each comes after its dependencies but for those that
// depend on it in turn (a cycle).
func checkResolved(t *testing.T, reqs []Requirement, got []Package) {
	t.Helper()
	metBy := func(r Requirement, among []Package) int {
		return slices.IndexFunc(among, func(q Package) bool { return r.Met(q.Kind, q.Name, q.Version, q.Provides) })
	}
	for i, p := range got {
		if slices.ContainsFunc(got[:i], func(q Package) bool { return q.Name == p.Name }) {
			t.Fatalf("%s twice in %s", p.Name, ids(got))
		}
		for _, q := range got {
			for _, c := range p.Conflicts {
				if q.Name != p.Name && c.Met(q.Kind, q.Name, q.Version, q.Provides) {
					t.Fatalf("%s %s conflicts with %s %s in %s", p.Name, p.Version, q.Name, q.Version, ids(got))
				}
			}
		}
		for _, r := range p.Depends {
			switch j := metBy(r, got); {
			case j < 0:
				t.Fatalf("%s %s: dependency %s not met in %s", p.Name, p.Version, r, ids(got))
			case metBy(r, got[:i+1]) < 0 && !reaches(got, got[j].Name, p.Name):
				t.Fatalf("%s %s: dependency %s met after it, outside a cycle, in %s", p.Name, p.Version, r, ids(got))
			}
		}
	}
	for _, r := range reqs {
		if metBy(r, got) < 0 {
			t.Fatalf("requirement %s not met by %s", r, ids(got))
		}
	}
}

// reaches reports whether from needs to, through the dependencies among pkgs (any package
// meeting one).
func reaches(pkgs []Package, from, to string) bool {
	seen := map[string]bool{from: true}
	todo := []string{from}
	for len(todo) > 0 {
		n := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if n == to {
			return true
		}
		i := slices.IndexFunc(pkgs, func(p Package) bool { return p.Name == n })
		for _, r := range pkgs[i].Depends {
			for _, q := range pkgs {
				if r.Met(q.Kind, q.Name, q.Version, q.Provides) && !seen[q.Name] {
					seen[q.Name] = true
					todo = append(todo, q.Name)
				}
			}
		}
	}
	return false
}

// The index of issue 17, in expandIndex's notation: base at 100,000 versions and 200
// packages that need it, all met by the newest.
const (
	manyIndex = "base 1.*100000\nd*200 1 base>=1.10,!=1.500"
	manyReqs  = "d*200"
)

// maxExpand bounds the packages and requirements expandIndex and expandReqs make: enough
// for manyIndex, few enough that the fuzzer's larger counts cost no more.
const maxExpand = 101_000

// expandIndex builds an index from lines of "name version depends...", as testIndex, in
// which a name or version "X*N" stands for N of them, X0 to X(N-1): "d*3 1.*2 base"
// is d0, d1 and d2, each at 1.0 and 1.1, each needing base.
func expandIndex(index string) *Index {
	var lines []string
	for l := range strings.Lines(index) {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		for _, name := range expand(f[0], maxExpand-len(lines)) {
			for _, v := range expand(f[1], maxExpand-len(lines)) {
				lines = append(lines, strings.Join(append([]string{name, v}, f[2:]...), " "))
			}
		}
	}
	return testIndex(lines...)
}

// expandReqs parses comma-separated requirements, skipping those that do not parse, in
// which "X*N" stands for N names, as in expandIndex.
func expandReqs(reqs string) []Requirement {
	var rs []Requirement
	for s := range strings.SplitSeq(reqs, ",") {
		for _, s := range expand(s, maxExpand-len(rs)) {
			if r, err := ParseRequirement(s); err == nil {
				rs = append(rs, r)
			}
		}
	}
	return rs
}

// expand returns s, or for "X*N" X0 to X(N-1), at most limit of them.
func expand(s string, limit int) []string {
	x, count, ok := strings.Cut(s, "*")
	n, err := strconv.Atoi(count)
	if !ok || err != nil || n < 0 {
		return []string{s}
	}
	out := make([]string, 0, min(n, limit))
	for i := range min(n, limit) {
		out = append(out, x+strconv.Itoa(i))
	}
	return out
}

// pigeonholeIndex returns the index of TestResolveGivesUp for n packages: each must take
// a version no other takes, out of n-1, which a backtracking search proves impossible
// only by trying every assignment.
func pigeonholeIndex(n int) string {
	var b strings.Builder
	for i := range n {
		for v := 1; v < n; v++ {
			fmt.Fprintf(&b, "p%d %d", i, v)
			for j := range n {
				if j != i {
					fmt.Fprintf(&b, " p%d!=%d", j, v)
				}
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func pigeonholeReqs(n int) string { return fmt.Sprintf("p*%d", n) }

// TestResolveManyVersions checks that a name with many versions and many packages that
// need it resolves as a name with few would.
func TestResolveManyVersions(t *testing.T) {
	const base = "base 1.*100000\nbase 2.0-rc*3\n"
	tests := []struct{ name, index, want string }{
		{"newest", manyIndex, "base 1.99999"},
		{"newest release", base + "d*200 1 base>=1.10,!=1.500", "base 1.99999"},
		{"pre-release asked for", base + "d*200 1 base>=2.0-rc1", "base 2.0-rc2"},
		{"below", base + "d*200 1 base<1.500", "base 1.499"},
		{"at", base + "d*200 1 base@1.5", "base 1.5"},
		{"exact", base + "d*200 1 base=1.5", "base 1.5"},
		{"each its own bound", base + "d*200 1 base<=1.100 base>1.99", "base 1.100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := expandIndex(tt.index).Resolve(expandReqs(manyReqs))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 201 || ids(got[:1]) != tt.want {
				t.Fatalf("Resolve: got %d packages starting %q, want 201 starting %q", len(got), ids(got[:min(len(got), 1)]), tt.want)
			}
		})
	}
}

// FuzzBounds checks that no version outside the range bounds returns meets the
// requirement: x, then the constraints given.
func FuzzBounds(f *testing.F) {
	const vs = "1 1.7 1.07 1.7.12 1.7.1-rc1 1.70 1.7a 1.7-rc1 1.7-rc1.2 1.7-rc10 1.7~rc1 1.8 1.7+b 2.0~x 1.7..1 1.7.-x" +
		" v1.7 v1.7.3 1:1.7 1:1.8 1.7-2 1.7-2-3 1.7_2-1 1.7B 1.7-2.1+deb12u3 1.7+1~x 1.7.1~rc1 1.7a 1.7a_2-1 1.7b 1.9 1.10"
	for _, c := range []string{"@1.7", "@1.7-rc1", "@1", "@1.07", "=1.7", "<1.7", "<=1.7", ">1.7", ">=1.7", "!=1.7", ">=1.7-rc1,<1.8", "@1.7.", "@1.7+b",
		"@v1.7", "@1:1.7", "@1.7-2", "@1.7a", "@1.9", "@1.7_2"} {
		f.Add(vs, c)
	}
	f.Fuzz(func(t *testing.T, versions, constraints string) {
		q, err := ParseRequirement("x" + constraints)
		if err != nil {
			return
		}
		var all []Package
		for _, v := range strings.Fields(versions) {
			if checkVersion(v) == nil {
				all = append(all, Package{Name: "x", Version: v})
			}
		}
		sortNewestFirst(all)
		r := resolverFor(map[string][]Package{"x": all})
		lo, hi := r.bounds("x", need{req: q})
		for i, p := range all {
			if (i < lo || i >= hi) && q.Allows(p.Version) {
				t.Fatalf("bounds(%s) = [%d, %d) leaves out %s, at %d of %s", q, lo, hi, p.Version, i, ids(all))
			}
		}
	})
}

// BenchmarkResolve times the resolver's worst cases: a name with many versions that
// many packages need, and searches that must backtrack through every assignment of
// versions or of alternatives; and a real chain, Debian's curl.
func BenchmarkResolve(b *testing.B) {
	cases := []struct{ name, index, reqs string }{
		{"versions=100000/dependents=200", manyIndex, manyReqs},
		{"pigeonhole=7", pigeonholeIndex(7), pigeonholeReqs(7)},
		{"alternatives-pigeonhole=7", altPigeonholeIndex(7), pigeonholeReqs(7)},
		{"debian-curl", strings.Join(bookworm, "\n"), "curl"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ix, rs := expandIndex(c.index), expandReqs(c.reqs)
			b.ReportAllocs()
			for b.Loop() {
				ix.Resolve(rs)
			}
		})
	}
}

// TestResolveRelations checks the rules of provides, alternatives and conflicts.
func TestResolveRelations(t *testing.T) {
	tests := []struct {
		name  string
		index []string
		reqs  []string
		want  string
	}{
		{"provided", []string{"curl 8 libz1", "zlib1g 1 provides:libz1"}, []string{"curl"}, "zlib1g 1, curl 8"},
		{"provided at a version", []string{"curl 8 libz1>=1.2", "zlib1g 1 provides:libz1=1.2.13"}, []string{"curl"}, "zlib1g 1, curl 8"},
		{"the version provided counts", []string{"a 1 v>=2", "p 5 provides:v=1", "p 3 provides:v=2"}, []string{"a"}, "p 3, a 1"},
		{"a name before its providers", []string{"a 1 v", "v 1", "p 1 provides:v"}, []string{"a"}, "v 1, a 1"},
		{"providers by name", []string{"a 1 v", "q 1 provides:v", "p 1 provides:v"}, []string{"a"}, "p 1, a 1"},
		{"a provider required already", []string{"a 1 v q", "q 1 provides:v", "p 1 provides:v"}, []string{"a"}, "q 1, a 1"},
		{"a provider chosen already", []string{"a 1 v", "q 1 provides:v", "p 1 provides:v"}, []string{"q", "a"}, "q 1, a 1"},
		{"first alternative", []string{"a 1 x|y", "x 1", "y 1"}, []string{"a"}, "x 1, a 1"},
		{"alternative the index lacks", []string{"a 1 x|y", "y 1"}, []string{"a"}, "y 1, a 1"},
		{"alternative at no version", []string{"a 1 x>=2|y", "x 1", "y 1"}, []string{"a"}, "y 1, a 1"},
		{"alternative chosen already", []string{"a 1 y x|y", "x 1", "y 1"}, []string{"a"}, "y 1, a 1"},
		{"alternative provided", []string{"a 1 debconf>=0.5|debconf-2.0", "debconf 0.4", "cdebconf 1 provides:debconf-2.0"}, []string{"a"}, "cdebconf 1, a 1"},
		{"alternative that fails later", []string{"a 1 x|y", "x 1 gone", "y 1"}, []string{"a"}, "y 1, a 1"},
		{"alternative that clashes", []string{"a 1 x|y lib<2", "x 1 lib>=2", "y 1", "lib 1", "lib 2"}, []string{"a"}, "lib 1, y 1, a 1"},
		{"conflict avoided", []string{"a 1 x|y z", "x 1 conflicts:z", "y 1", "z 1"}, []string{"a"}, "y 1, z 1, a 1"},
		{"conflict the other way avoided", []string{"a 1 x|y z", "x 1", "y 1", "z 1 conflicts:x"}, []string{"a"}, "y 1, z 1, a 1"},
		{"conflict at a version", []string{"a 1 b c", "b 1 conflicts:c>=2", "c 1", "c 2"}, []string{"a"}, "b 1, c 1, a 1"},
		{"older version without the conflict", []string{"a 1 b c", "b 1", "b 2 conflicts:c", "c 1"}, []string{"a"}, "b 1, c 1, a 1"},
		{"conflict with what it provides", []string{"a 1 libcomerr2", "b 1 provides:libcomerr2=1.47 conflicts:libcomerr2<1.43"}, []string{"a"}, "b 1, a 1"},
		{"virtual cycle", []string{"a 1 v", "b 1 provides:v a"}, []string{"a"}, "a 1, b 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reqs := parseReqs(t, tt.reqs...)
			got, err := testIndex(tt.index...).Resolve(reqs)
			if err != nil {
				t.Fatal(err)
			}
			if ids(got) != tt.want {
				t.Errorf("Resolve: got %q, want %q", ids(got), tt.want)
			}
			checkResolved(t, reqs, got)
		})
	}
}

// TestResolveRelationsRefuses checks the refusals of provides, alternatives and conflicts.
func TestResolveRelationsRefuses(t *testing.T) {
	tests := []struct {
		name  string
		index []string
		reqs  []string
		want  error
	}{
		{"unversioned provides for a versioned need", []string{"a 1 v>=1", "p 1 provides:v"}, []string{"a"}, &MissingError{Name: "v>=1", By: "a 1", Providers: []string{"p"}}},
		{"no alternative", []string{"a 1 x|y"}, []string{"a"}, &MissingError{Name: "x|y", By: "a 1"}},
		{"conflicts", []string{"a 1 conflicts:b", "b 1"}, []string{"a", "b"},
			&ConflictsError{Name: "a", Version: "1", Conflicts: deps("b")[0], Other: "b", OtherVersion: "1"}},
		{"conflicts the other way", []string{"a 1", "b 1 conflicts:a<2"}, []string{"a", "b"},
			&ConflictsError{Name: "b", Version: "1", Conflicts: deps("a<2")[0], Other: "a", OtherVersion: "1"}},
		{"conflicts with what one provides", []string{"exim 1 provides:mta conflicts:mta", "postfix 1 provides:mta conflicts:mta"}, []string{"exim", "postfix"},
			&ConflictsError{Name: "postfix", Version: "1", Conflicts: deps("mta")[0], Other: "exim", OtherVersion: "1"}},
		{"conflicts through dependencies", []string{"app 1 x y", "x 1 lib", "y 1 conflicts:lib", "lib 1"}, []string{"app"},
			&ConflictsError{Name: "y", Version: "1", Conflicts: deps("lib")[0], Other: "lib", OtherVersion: "1"}},
		{"provided at a version refused", []string{"a 1 v>=2", "p 1 provides:v=1"}, []string{"a"}, &MissingError{Name: "v>=2", By: "a 1", Providers: []string{"p"}}},
		{"alternatives provided at no version allowed", []string{"a 1 v>=2|w>=1", "q 1 provides:w", "p 1 provides:v=1", "o 1 provides:v=1"}, []string{"a"},
			&MissingError{Name: "v>=2|w>=1", By: "a 1", Providers: []string{"o", "p", "q"}}},
		{"request for alternatives", []string{"x 1"}, []string{"x|y"}, ErrAlternatives},
		{"request for a provided name", []string{"zlib1g 1 provides:libz1", "zlib-ng 1 provides:libz1"}, []string{"libz1"},
			&MissingError{Name: "libz1", Near: []string{"zlib-ng", "zlib1g"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := testIndex(tt.index...).Resolve(parseReqs(t, tt.reqs...))
			if err == nil {
				t.Fatalf("Resolve: got %q, want error", ids(got))
			}
			if !sameError(err, tt.want) {
				t.Errorf("Resolve: got error\n%#v, want\n%#v", err, tt.want)
			}
		})
	}
}

// altPigeonholeIndex is pigeonholeIndex made of alternatives and conflicts: each of n
// pigeons p0... needs one of n-1 holes, xI-H for pigeon I in hole H, each of which
// conflicts with the other pigeons in its hole. No selection exists, and only searching
// every assignment shows it.
func altPigeonholeIndex(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "p%d 1 ", i)
		for h := range n - 1 {
			if h > 0 {
				b.WriteByte('|')
			}
			fmt.Fprintf(&b, "x%d-%d", i, h)
		}
		b.WriteByte('\n')
		for h := range n - 1 {
			fmt.Fprintf(&b, "x%d-%d 1", i, h)
			for j := range n {
				if j != i {
					fmt.Fprintf(&b, " conflicts:x%d-%d", j, h)
				}
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// TestResolveGivesUpAlternatives checks that alternatives and conflicts that make the
// search exponential stop it at the budget, as versions do (TestResolveGivesUp).
func TestResolveGivesUpAlternatives(t *testing.T) {
	r := resolverFor(expandIndex(altPigeonholeIndex(11)).versions())
	_, err := r.resolve(expandReqs(pigeonholeReqs(11)))
	if !errors.Is(err, ErrGaveUp) {
		t.Fatalf("resolve: got error %v, want one that gives up", err)
	}
	if over := r.work - maxResolveWork; over > 10_000 {
		t.Errorf("resolve did %d units of work, %d past the budget", r.work, over)
	}
	small := expandIndex(altPigeonholeIndex(4))
	if _, err := small.Resolve(expandReqs(pigeonholeReqs(4))); err == nil || errors.Is(err, ErrGaveUp) {
		t.Errorf("Resolve of 4 pigeons in 3 holes: %v, want a conflict found", err)
	}
}

// TestJoinReqs: a resolution's requirements read as a list, those past maxClashNeeds-1
// counted, never "1 more".
func TestJoinReqs(t *testing.T) {
	reqs := make([]Requirement, maxClashNeeds+1)
	for i := range reqs {
		reqs[i] = Requirement{Name: fmt.Sprintf("r%d", i)}
	}
	for _, tt := range []struct {
		n    int
		want string
	}{
		{1, "r0"},
		{2, "r0 and r1"},
		{3, "r0, r1 and r2"},
		{maxClashNeeds, "r0, r1, r2, r3, r4, r5, r6 and r7"},
		{maxClashNeeds + 1, "r0, r1, r2, r3, r4, r5, r6 and 2 more"},
	} {
		if got := joinReqs(reqs[:tt.n]); got != tt.want {
			t.Errorf("joinReqs of %d = %q, want %q", tt.n, got, tt.want)
		}
	}
}

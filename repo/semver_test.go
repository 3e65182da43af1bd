package repo

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// npmRangeTable is node-semver's documentation of ranges, example by example
// (https://github.com/npm/node-semver README, "Ranges" and "Advanced Range Syntax", as of
// semver 7): each range, what the README says it desugars to ("" where it says none),
// versions it names as matching and as not. Where the README writes "<2.0.0" node-semver
// 7 compares with "<2.0.0-0"; the two differ on 2.0.0's pre-releases only, which neither
// allows (the pre-release rule).
var npmRangeTable = []struct {
	rng, means string
	yes, no    string // versions, space-separated
}{
	{"1.x || >=2.5.0 || 5.0.0 - 7.2.3", "", "1.2.3", ""},
	{">=1.2.7", "", "1.2.7 1.2.8 2.5.3 1.3.9", "1.2.6 1.1.0"},
	{">=1.2.7 <1.3.0", "", "1.2.7 1.2.8 1.2.99", "1.2.6 1.3.0 1.1.0"},
	{"1.2.7 || >=1.2.9 <2.0.0", "", "1.2.7 1.2.9 1.4.6", "1.2.8 2.0.0"},
	{"1.2.3", "=1.2.3", "1.2.3 1.2.3+build2012", "1.2.4 1.2.3-beta"},
	{">1.2.3-alpha.3", "", "1.2.3-alpha.7 3.4.5", "3.4.5-alpha.9 1.2.3-alpha.3"},
	{"<1.2.3", "", "1.2.2 0.0.1", "1.2.3-beta 1.2.3"},
	// Hyphen ranges
	{"1.2.3 - 2.3.4", ">=1.2.3 <=2.3.4", "1.2.3 2.3.4 2.0.0", "1.2.2 2.3.5 2.3.4-rc.1"},
	{"1.2 - 2.3.4", ">=1.2.0 <=2.3.4", "1.2.0 2.3.4", "1.1.9 2.3.5"},
	{"1.2.3 - 2.3", ">=1.2.3 <2.4.0", "2.3.99 1.2.3", "2.4.0 1.2.2"},
	{"1.2.3 - 2", ">=1.2.3 <3.0.0", "2.99.99", "3.0.0 3.0.0-0"},
	// X-ranges
	{"*", ">=0.0.0", "0.0.0 1.2.3 99.99.99", "1.2.3-rc.1"},
	{"1.x", ">=1.0.0 <2.0.0", "1.0.0 1.99.99", "2.0.0 0.99.99 1.5.0-rc.1"},
	{"1.2.x", ">=1.2.0 <1.3.0", "1.2.0 1.2.99", "1.3.0 1.1.99"},
	{"", ">=0.0.0", "0.0.0 3.2.1", "3.2.1-beta"},
	{"1", ">=1.0.0 <2.0.0", "1.0.0 1.9.9", "2.0.0 0.9.9"},
	{"1.2", ">=1.2.0 <1.3.0", "1.2.0 1.2.9", "1.3.0"},
	// Tilde ranges
	{"~1.2.3", ">=1.2.3 <1.3.0", "1.2.3 1.2.99", "1.3.0 1.2.2"},
	{"~1.2", ">=1.2.0 <1.3.0", "1.2.0 1.2.99", "1.3.0"},
	{"~1", ">=1.0.0 <2.0.0", "1.0.0 1.99.0", "2.0.0"},
	{"~0.2.3", ">=0.2.3 <0.3.0", "0.2.3 0.2.9", "0.3.0 0.2.2"},
	{"~0.2", ">=0.2.0 <0.3.0", "0.2.0", "0.3.0"},
	{"~0", ">=0.0.0 <1.0.0", "0.0.0 0.9.9", "1.0.0"},
	{"~1.2.3-beta.2", ">=1.2.3-beta.2 <1.3.0", "1.2.3-beta.4 1.2.3 1.2.9", "1.2.4-beta.2 1.2.3-beta.1 1.3.0"},
	// Caret ranges
	{"^1.2.3", ">=1.2.3 <2.0.0", "1.2.3 1.9.9", "2.0.0 1.2.2 2.0.0-rc.1"},
	{"^0.2.3", ">=0.2.3 <0.3.0", "0.2.3 0.2.9", "0.3.0"},
	{"^0.0.3", ">=0.0.3 <0.0.4", "0.0.3", "0.0.4 0.0.2"},
	{"^1.2.3-beta.2", ">=1.2.3-beta.2 <2.0.0", "1.2.3-beta.4 1.9.0", "1.2.4-beta.2 1.2.3-beta.1"},
	{"^0.0.3-beta", ">=0.0.3-beta <0.0.4", "0.0.3-pr.2 0.0.3", "0.0.4 0.0.3-alpha"},
	{"^1.2.x", ">=1.2.0 <2.0.0", "1.2.0 1.9.0", "2.0.0 1.1.0"},
	{"^0.0.x", ">=0.0.0 <0.1.0", "0.0.0 0.0.9", "0.1.0"},
	{"^0.0", ">=0.0.0 <0.1.0", "0.0.9", "0.1.0"},
	{"^1.x", ">=1.0.0 <2.0.0", "1.0.0 1.9.9", "2.0.0"},
	{"^0.x", ">=0.0.0 <1.0.0", "0.0.0 0.9.9", "1.0.0"},
	// Functions: "a version might not be greater than a range, less than a range, or satisfy a range"
	{"1.2 <1.2.9 || >2.0.0", "", "1.2.8 2.0.1", "1.2.10 1.2.9 2.0.0"},
}

// probes are versions every row's range and its desugaring must agree on.
var probes = strings.Fields("0.0.0 0.0.2 0.0.3-alpha 0.0.3 0.0.4 0.1.0 0.2.2 0.2.3 0.3.0 0.9.9 1.0.0-rc.1 1.0.0 1.1.9 " +
	"1.2.0 1.2.2 1.2.3-beta.1 1.2.3-beta.2 1.2.3-beta.4 1.2.3 1.2.4-beta.2 1.2.7 1.2.8 1.2.9 1.2.10 1.3.0 1.9.9 " +
	"2.0.0-0 2.0.0-rc.1 2.0.0 2.3.4 2.3.5 2.4.0 3.0.0 5.0.0 7.2.3 7.2.4")

func TestNPMRangeTable(t *testing.T) {
	for _, tt := range npmRangeTable {
		r, err := parseRange(tt.rng)
		if err != nil {
			t.Errorf("parseRange(%q): %v", tt.rng, err)
			continue
		}
		for v := range strings.FieldsSeq(tt.yes) {
			if !npmAllows(tt.rng, v) {
				t.Errorf("%q does not allow %s", tt.rng, v)
			}
		}
		for v := range strings.FieldsSeq(tt.no) {
			if npmAllows(tt.rng, v) {
				t.Errorf("%q allows %s", tt.rng, v)
			}
		}
		if tt.means == "" {
			continue
		}
		m, err := parseRange(tt.means)
		if err != nil {
			t.Fatalf("parseRange(%q): %v", tt.means, err)
		}
		for _, p := range probes {
			v, _ := parseSemver(p)
			if got, want := r.allows(v), m.allows(v); got != want {
				t.Errorf("%q allows %s: %v; %q: %v", tt.rng, p, got, tt.means, want)
			}
		}
	}
}

// moreRanges are spellings the README's table leaves out: operators with partial versions,
// spaces after operators, "v" and "=" prefixes, wildcards in hyphen ranges, and ranges
// node-semver refuses.
var moreRanges = []string{
	">1", ">1.2", ">=1", ">=1.2", "<1", "<1.2", "<=1", "<=1.2", "<=1.2.x", ">1.x", "<1.x.3", "=1", "=1.2.3",
	">=*", "<*", ">*", "<=*", "x", "X", "1.X", "1.2.*", "~>1.2", "~> 1.2.3", ">= 1.2.3", "^ 1.2", "< 2",
	"v1.2.3", "=v1.2.3", "^v1.2", "1.2.3+build", ">=1.2.3-0", "<2.0.0-0", "1.x - 2.x", "* - 2", "1 - *",
	"1.2.3-rc.1 - 1.2.3", "^0.0.0", "~0.0.1", "^0.1.x", "1.2.3 || 2.x", "||", " 1.2.3 ", "1.2.3 ||",
	">=1.2.3 <1.2.3", "1.2.x-beta", "0.0.0-0", "<0.0.0-0", "^1.x.3", "~x.2", "1.x.3 - 2", "x.1 - 2",
	"1.2.3\t<2", "\t^1.2\n",
	// refused
	"latest", "next", "1.2.3.4", "01.2.3", "1.02", "1.2.3-01", "a.b.c", ">=", "~", "1.2.3 -", "- 1.2",
	"1.2.3 - 2.3.4 - 5", "git+https://github.com/a/b", "file:../x", "npm:y@1", "workspace:*", ">>1", "1.2.3-", "1.2.3+", "1.x.3", "x.2", "<=*.1",
}

// TestNPMRangesAgainstNode compares npmAllows with npm's own semver (the copy npm runs)
// over the table's ranges and more, on every probe version: the same verdict on each pair,
// and the same ranges refused. It needs node and npm (.ci/run installs them).
func TestNPMRangesAgainstNode(t *testing.T) {
	semverDir := npmSemver(t)
	var ranges []string
	for _, tt := range npmRangeTable {
		ranges = append(ranges, tt.rng)
		if tt.means != "" {
			ranges = append(ranges, tt.means)
		}
	}
	ranges = append(ranges, moreRanges...)
	ranges = append(ranges, generatedRanges(2000)...)
	versions := slices.Clone(probes)
	for _, tt := range npmRangeTable {
		versions = append(versions, strings.Fields(tt.yes+" "+tt.no)...)
	}
	slices.Sort(versions)
	versions = slices.Compact(versions)
	in, _ := json.Marshal(map[string][]string{"ranges": ranges, "versions": versions})
	const script = `const semver = require(process.argv[1]);
const {ranges, versions} = JSON.parse(require('fs').readFileSync(0, 'utf8'));
console.log(JSON.stringify(ranges.map(r => semver.validRange(r) === null ? null : versions.map(v => semver.satisfies(v, r)))));`
	cmd := exec.Command("node", "-e", script, semverDir)
	cmd.Stdin = strings.NewReader(string(in))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var verdicts [][]bool
	if err := json.Unmarshal(out, &verdicts); err != nil {
		t.Fatalf("node's output %q: %v", out, err)
	}
	for i, rng := range ranges {
		_, err := parseRange(rng)
		if (verdicts[i] == nil) != (err != nil) {
			t.Errorf("range %q: node-semver valid: %v; parseRange: %v", rng, verdicts[i] != nil, err)
			continue
		}
		var re *RangeError
		if err != nil && !errors.As(err, &re) {
			t.Errorf("parseRange(%q) = %v, want a *RangeError", rng, err)
		}
		for j, v := range verdicts[i] {
			if got := npmAllows(rng, versions[j]); got != v {
				t.Errorf("%q allows %s: %v, node-semver: %v", rng, versions[j], got, v)
			}
		}
	}
}

// generatedRanges returns n ranges drawn from operators and partial versions, the same
// every run: one or two sets, each a hyphen range or one to three comparators.
func generatedRanges(n int) []string {
	ops := []string{"", "=", "<", "<=", ">", ">=", "~", "^", "~>", "v", "> "}
	partials := strings.Fields("0 1 2 0.0 0.2 1.2 0.0.3 0.2.3 1.2.3 1.2.7 2.0.0 x * 1.x 0.x 1.2.x 0.0.x 1.2.3-beta.2 " +
		"0.0.3-beta 1.2.3-alpha.3 2.0.0-0 1.x.3 1.2.3+b")
	rnd := rand.New(rand.NewPCG(33, 1))
	pick := func(xs []string) string { return xs[rnd.IntN(len(xs))] }
	out := make([]string, n)
	for i := range out {
		sets := make([]string, 1+rnd.IntN(2))
		for j := range sets {
			if rnd.IntN(5) == 0 {
				sets[j] = pick(partials) + " - " + pick(partials)
				continue
			}
			cs := make([]string, 1+rnd.IntN(3))
			for k := range cs {
				cs[k] = pick(ops) + pick(partials)
			}
			sets[j] = strings.Join(cs, " ")
		}
		out[i] = strings.Join(sets, " || ")
	}
	return out
}

// npmSemver returns the directory of the semver package npm itself uses.
func npmSemver(t *testing.T) string {
	t.Helper()
	root, err := exec.Command("npm", "root", "-g").Output()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("npm root -g: %v", err)
		}
		t.Skipf("no npm (%v)", err)
	}
	npmDir := strings.TrimSpace(string(root)) + "/npm"
	out, err := exec.Command("node", "-p", `require('path').dirname(require.resolve('semver/package.json', {paths: [process.argv[1], '/usr/share/nodejs']}))`, npmDir).Output()
	if err != nil {
		t.Fatalf("node: semver of npm in %s: %v", npmDir, err)
	}
	return strings.TrimSpace(string(out))
}

func TestParseSemver(t *testing.T) {
	for _, s := range []string{"1.2.3", "v1.2.3", "0.0.0", "1.2.3-alpha.1", "1.2.3-0", "1.2.3+build.5", "1.2.3-x-y.z+b-1", "9007199254740991.0.0"} {
		if _, ok := parseSemver(s); !ok {
			t.Errorf("parseSemver(%q) refused", s)
		}
		if err := CheckNPMVersion(s); err != nil && len(s) <= maxVersionLen {
			t.Errorf("CheckNPMVersion(%q) = %v", s, err)
		}
	}
	for _, s := range []string{"1.2", "1.2.3.4", "01.2.3", "1.2.3-01", "1.2.3-", "1.2.3+", "1.2.3-a..b", "1.2.3-a_b", "9007199254740992.0.0", "=1.2.3", "latest"} {
		if _, ok := parseSemver(s); ok {
			t.Errorf("parseSemver(%q) accepted", s)
		}
		if err := CheckNPMVersion(s); !errors.Is(err, ErrVersion) {
			t.Errorf("CheckNPMVersion(%q) = %v, want ErrVersion", s, err)
		}
	}
}

func FuzzParseRange(f *testing.F) {
	for _, tt := range npmRangeTable {
		f.Add(tt.rng, "1.2.3")
	}
	for _, r := range moreRanges {
		f.Add(r, "1.2.3-beta.4")
	}
	f.Fuzz(func(t *testing.T, rng, version string) {
		r, err := parseRange(rng)
		if err != nil {
			return
		}
		v, ok := parseSemver(version)
		if !ok {
			return
		}
		if got := npmAllows(rng, version); got != r.allows(v) {
			t.Fatalf("npmAllows(%q, %q) = %v, parsed range: %v", rng, version, got, !got)
		}
		if req, err := ParseRequirement("x@npm:" + rng); err != nil || req.String() != "x@npm:"+rng || req.Allows(version) != r.allows(v) {
			t.Fatalf("ParseRequirement(x@npm:%s) = %v, %v", rng, req, err)
		}
	})
}

func BenchmarkNPMAllows(b *testing.B) {
	for _, rng := range []string{"^4.3.1", ">=1.2.7 <1.3.0 || 2.x || 3.0.0 - 3.4"} {
		b.Run(rng, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				npmAllows(rng, "4.3.9")
			}
		})
	}
}

// TestParseRangeOnce checks that a range parsed again comes from what the first parse
// kept, the same as a parse, and that a range that does not parse is refused each time.
func TestParseRangeOnce(t *testing.T) {
	for _, text := range []string{"^4.3.1", ">=1.2.7 <1.3.0 || 2.x || 3.0.0 - 3.4", "*", "~1.2.3-rc.1"} {
		want, err := parseRange(text)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if got, err := parseRangeOnce(text); err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("parseRangeOnce(%q) = %v, %v; want %v", text, got, err, want)
			}
		}
		if _, ok := parsed.ranges.Load(text); !ok {
			t.Errorf("parseRangeOnce(%q) kept nothing", text)
		}
	}
	for range 2 {
		var re *RangeError
		if _, err := parseRangeOnce(">=1.2.x.y"); !errors.As(err, &re) {
			t.Errorf("parseRangeOnce of a bad range: %v, want a *RangeError", err)
		}
	}
}

// TestParseRangeOnceBounds: parseRangeOnce keeps maxParsed ranges at most, and none longer
// than maxKeptRange, and parses those it does not keep all the same.
func TestParseRangeOnceBounds(t *testing.T) {
	parsed.ranges.Clear()
	parsed.n.Store(0)
	t.Cleanup(func() { parsed.ranges.Clear(); parsed.n.Store(0) })
	long := strings.Repeat("1 ", maxKeptRange/2) + "1"
	if _, err := parseRangeOnce(long); err != nil {
		t.Fatal(err)
	}
	if _, ok := parsed.ranges.Load(long); ok {
		t.Errorf("a range of %d bytes kept, over maxKeptRange %d", len(long), maxKeptRange)
	}
	for i := range maxParsed + 10 {
		if _, err := parseRangeOnce(fmt.Sprintf("^%d.0.0", i)); err != nil {
			t.Fatal(err)
		}
	}
	kept := 0
	parsed.ranges.Range(func(any, any) bool { kept++; return true })
	if kept != maxParsed {
		t.Errorf("%d ranges kept, want maxParsed (%d)", kept, maxParsed)
	}
}

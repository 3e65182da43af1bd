package repo

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// npm's versions and ranges, as node-semver (v7, neither loose nor includePrerelease)
// defines them: https://github.com/npm/node-semver#ranges.

// maxRangeLen bounds an npm range's text, which an index or a package.json gives.
const maxRangeLen = 1024 // bytes

// maxSemverNumber is the largest major, minor or patch node-semver takes:
// Number.MAX_SAFE_INTEGER.
const maxSemverNumber = 1<<53 - 1

// semver is a version as node-semver reads it: MAJOR.MINOR.PATCH, a pre-release (its
// dot-separated identifiers) and build metadata, which no comparison looks at.
type semver struct {
	major, minor, patch uint64
	pre                 []string
}

// parseSemver parses a full version, "v" allowed before it, as node-semver's strict
// grammar has it (no leading zeros in numbers).
func parseSemver(s string) (semver, bool) {
	s = strings.TrimPrefix(s, "v")
	main, build, hasBuild := strings.Cut(s, "+")
	if hasBuild && !validIdentifiers(build, false) {
		return semver{}, false
	}
	main, pre, hasPre := strings.Cut(main, "-")
	if hasPre && !validIdentifiers(pre, true) {
		return semver{}, false
	}
	// Three numbers, cut in turn: a version is parsed for every range it is tried against.
	var v semver
	for i, n := range [...]*uint64{&v.major, &v.minor, &v.patch} {
		part, rest, more := strings.Cut(main, ".")
		if more == (i == 2) {
			return semver{}, false
		}
		x, ok := parseSemverNumber(part)
		if !ok {
			return semver{}, false
		}
		*n, main = x, rest
	}
	if hasPre {
		v.pre = strings.Split(pre, ".")
	}
	return v, true
}

// parseSemverNumber parses 0 or a decimal without a leading zero, at most maxSemverNumber.
func parseSemverNumber(s string) (uint64, bool) {
	if s == "" || len(s) > 1 && s[0] == '0' || strings.ContainsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil && n <= maxSemverNumber
}

// validIdentifiers reports whether s is dot-separated identifiers of [0-9A-Za-z-], none
// empty; of a pre-release (pre), a numeric one has no leading zero.
func validIdentifiers(s string, pre bool) bool {
	for id := range strings.SplitSeq(s, ".") {
		if id == "" || strings.Trim(id, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-") != "" {
			return false
		}
		if pre && len(id) > 1 && id[0] == '0' && strings.Trim(id, "0123456789") == "" {
			return false
		}
	}
	return true
}

// compare orders v and w by semver precedence: numbers, then a pre-release below its
// release, identifiers compared in turn (numeric ones numerically and below others,
// others in ASCII order), fewer below more.
func (v semver) compare(w semver) int {
	if c := cmp.Or(cmp.Compare(v.major, w.major), cmp.Compare(v.minor, w.minor), cmp.Compare(v.patch, w.patch)); c != 0 {
		return c
	}
	switch {
	case len(v.pre) == 0 && len(w.pre) == 0:
		return 0
	case len(v.pre) == 0:
		return 1
	case len(w.pre) == 0:
		return -1
	}
	return slices.CompareFunc(v.pre, w.pre, compareIdentifiers)
}

func compareIdentifiers(a, b string) int {
	an, aNum := numericIdentifier(a)
	bn, bNum := numericIdentifier(b)
	switch {
	case aNum && bNum:
		return cmp.Compare(an, bn)
	case aNum:
		return -1
	case bNum:
		return 1
	}
	return strings.Compare(a, b)
}

func numericIdentifier(s string) (uint64, bool) {
	if strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// sameRelease reports whether v and w have the same major, minor and patch.
func (v semver) sameRelease(w semver) bool {
	return v.major == w.major && v.minor == w.minor && v.patch == w.patch
}

// CheckNPMVersion reports why v cannot be the version of an npm package: it must be a
// semver version (node-semver's strict grammar) and a valid version (CheckVersion).
func CheckNPMVersion(v string) error {
	if err := checkVersion(v); err != nil {
		return err
	}
	if _, ok := parseSemver(v); !ok {
		return &valueError{ErrVersion, v, fmt.Sprintf("bad version %q: not a semver version (MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD])", v)}
	}
	return nil
}

// CompareNPMVersions orders a and b, versions of an npm package, by semver precedence
// (1.0.0-rc.1 < 1.0.0 < 1.0.1); versions of equal precedence (differing in build
// metadata) bytewise, so that only identical strings compare equal. A version that is
// not semver is ordered as CompareVersions orders it, after all that are.
func CompareNPMVersions(a, b string) int {
	av, aOK := parseSemver(a)
	bv, bOK := parseSemver(b)
	switch {
	case aOK && bOK:
		return cmp.Or(av.compare(bv), strings.Compare(a, b))
	case aOK:
		return -1
	case bOK:
		return 1
	}
	return CompareVersions(a, b)
}

// comparator is one bound of a range: op is "", "<", "<=", ">" or ">=" ("" is "="),
// against v; any is the comparator every version satisfies.
type comparator struct {
	op  string
	v   semver
	any bool
}

func (c comparator) allows(v semver) bool {
	return c.any || holds(cmp.Or(c.op, "="), v.compare(c.v))
}

// npmRange is a parsed range: a version satisfies it when it satisfies every comparator
// of one of its sets.
type npmRange [][]comparator

// A RangeError refuses text that is not an npm range.
type RangeError struct {
	Range  string
	Reason string
}

func (e *RangeError) Error() string { return fmt.Sprintf("npm range %.80q: %s", e.Range, e.Reason) }

// npmAllows reports whether version is in the npm range rng: in one of its sets, and, a
// pre-release, only where that set names a pre-release of the same major, minor and
// patch (node-semver's testSet). A range or version that does not parse allows nothing.
func npmAllows(rng, version string) bool {
	r, err := parseRangeOnce(rng)
	if err != nil {
		return false
	}
	v, ok := parseSemver(version)
	return ok && r.allows(v)
}

func (r npmRange) allows(v semver) bool {
	for _, set := range r {
		if allowsAll(set, v) && (len(v.pre) == 0 || namesPreOf(set, v)) {
			return true
		}
	}
	return false
}

func allowsAll(set []comparator, v semver) bool {
	for _, c := range set {
		if !c.allows(v) {
			return false
		}
	}
	return true
}

// namesPreOf reports whether a comparator of set has a pre-release of v's release.
func namesPreOf(set []comparator, v semver) bool {
	return slices.ContainsFunc(set, func(c comparator) bool { return !c.any && len(c.v.pre) > 0 && c.v.sameRelease(v) })
}

// parsed holds the ranges parseRangeOnce parsed, by their text, up to maxParsed of them and
// those of at most maxKeptRange bytes: a resolution asks each edge's range of its
// candidates more than once.
var parsed struct {
	ranges sync.Map // string → npmRange, never changed once stored
	n      atomic.Int32
}

// What parsed keeps at most: 24 MiB. A range's parse takes about 90 times its text (a
// 1 KiB one of single-digit comparators 90 KB of heap, a 63-byte one 6 KB), and npm's
// are short: bench/peers.sh's lock's 570 are 64 bytes at most.
const (
	maxParsed    = 4096 // ranges
	maxKeptRange = 64   // bytes of text
)

// parseRangeOnce is parseRange, its result kept for the next parse of the same text.
func parseRangeOnce(text string) (npmRange, error) {
	if r, ok := parsed.ranges.Load(text); ok {
		return r.(npmRange), nil
	}
	r, err := parseRange(text)
	if err == nil && len(text) <= maxKeptRange && parsed.n.Load() < maxParsed && parsed.n.Add(1) <= maxParsed {
		parsed.ranges.Store(text, r)
	}
	return r, err
}

// parseRange parses an npm range: sets separated by "||", each a hyphen range
// ("1.2.3 - 2.3") or comparators separated by spaces, each an operator (one of < <= > >=
// = ~ ~> ^ or none) and a version, full or partial (1, 1.2, 1.x, *), spaces allowed after
// the operator.
func parseRange(text string) (npmRange, error) {
	if len(text) > maxRangeLen {
		return nil, &RangeError{text[:maxRangeLen], fmt.Sprintf("%d bytes, over %d", len(text), maxRangeLen)}
	}
	var r npmRange
	for part := range strings.SplitSeq(text, "||") {
		set, err := parseSet(part)
		if err != nil {
			return nil, &RangeError{text, err.Error()}
		}
		r = append(r, set)
	}
	return r.simplify(), nil
}

// simplify does what node-semver's Range does with its sets, which the pre-release rule
// can tell: of several, the sets that allow nothing go (all of them: the first stays),
// and a set that allows any release is the whole range, so "* || ^1.2.3-rc.1" allows no
// pre-release.
func (r npmRange) simplify() npmRange {
	if len(r) < 2 {
		return r
	}
	some := slices.DeleteFunc(slices.Clone(r), func(set []comparator) bool { return set[0].none() })
	if len(some) == 0 {
		return r[:1]
	}
	for _, set := range some {
		if !slices.ContainsFunc(set, func(c comparator) bool { return !c.anyRelease() }) {
			return npmRange{set}
		}
	}
	return some
}

// none reports whether c is "<0.0.0-0", which nothing satisfies.
func (c comparator) none() bool {
	return !c.any && c.op == "<" && c.v.compare(semver{pre: []string{"0"}}) == 0
}

// anyRelease reports whether c is any, or ">=0.0.0", which node-semver takes for it.
func (c comparator) anyRelease() bool { return c.any || c.op == ">=" && c.v.compare(semver{}) == 0 }

// parseSet parses one "||"-separated part of a range.
func parseSet(s string) ([]comparator, error) {
	fields := strings.Fields(s)
	if len(fields) == 3 && fields[1] == "-" {
		return hyphenRange(fields[0], fields[2])
	}
	var set []comparator
	for i := 0; i < len(fields); i++ {
		tok := fields[i]
		if isLoneOperator(tok) && i+1 < len(fields) {
			i++
			tok += fields[i]
		}
		cs, err := parseComparator(tok)
		if err != nil {
			return nil, err
		}
		set = append(set, cs...)
	}
	if i := slices.IndexFunc(set, comparator.none); i >= 0 {
		return set[i : i+1], nil // as node-semver has it: a set with one is that one
	}
	if len(set) == 0 {
		return []comparator{{any: true}}, nil // "" and "*" allow any release
	}
	return set, nil
}

func isLoneOperator(s string) bool {
	switch s {
	case "<", "<=", ">", ">=", "=", "~", "~>", "^":
		return true
	}
	return false
}

// partial is a version with some parts left out or wildcards (x, X, *): n counts the
// parts given as numbers, in order (1.x.3 gives 1); late is set when a number follows a
// wildcard, as in 1.x.3.
type partial struct {
	semver
	n    int
	late bool
}

// parsePartial parses [v=]*MAJOR[.MINOR[.PATCH[-PRE][+BUILD]]], each part a number or
// x, X or *; a pre-release and build only after a third part.
func parsePartial(s string) (partial, error) {
	s = strings.TrimLeft(s, "v=")
	main, build, hasBuild := strings.Cut(s, "+")
	main, pre, hasPre := strings.Cut(main, "-")
	parts := strings.Split(main, ".")
	switch {
	case len(parts) > 3 || (hasPre || hasBuild) && len(parts) != 3:
		return partial{}, fmt.Errorf("%q is not a version", s)
	case hasPre && !validIdentifiers(pre, true), hasBuild && !validIdentifiers(build, false):
		return partial{}, fmt.Errorf("%q: bad pre-release or build", s)
	}
	var p partial
	wild := false
	for i, n := range []*uint64{&p.major, &p.minor, &p.patch}[:len(parts)] {
		if parts[i] == "x" || parts[i] == "X" || parts[i] == "*" {
			wild = true
			continue
		}
		x, ok := parseSemverNumber(parts[i])
		if !ok {
			return partial{}, fmt.Errorf("%q is not a version", s)
		}
		if wild {
			p.late = true
		} else {
			*n, p.n = x, i+1
		}
	}
	if hasPre && p.n == 3 {
		p.pre = strings.Split(pre, ".")
	}
	return p, nil
}

// parseComparator parses one comparator of a set, which stands for one or two.
func parseComparator(tok string) ([]comparator, error) {
	switch {
	case strings.HasPrefix(tok, "^"):
		p, err := parsePartial(tok[1:])
		return caret(p), err
	case strings.HasPrefix(tok, "~>"):
		p, err := parsePartial(tok[2:])
		return tilde(p), err
	case strings.HasPrefix(tok, "~"):
		p, err := parsePartial(tok[1:])
		return tilde(p), err
	}
	op := ""
	for _, o := range []string{">=", "<=", ">", "<", "="} {
		if rest, ok := strings.CutPrefix(tok, o); ok {
			op, tok = o, rest
			break
		}
	}
	if op == "=" {
		op = ""
	}
	p, err := parsePartial(tok)
	if err != nil {
		return nil, err
	}
	if p.late { // node-semver 7.8's invalidXRangeOrder; ^ and ~ take it
		return nil, fmt.Errorf("%q: a number after a wildcard", tok)
	}
	return xRange(op, p), nil
}

// below is the comparator "<M.m.p-0": below every version of that release, its
// pre-releases included.
func below(major, minor, patch uint64) comparator {
	return comparator{op: "<", v: semver{major, minor, patch, []string{"0"}}}
}

func atLeast(v semver) comparator { return comparator{op: ">=", v: v} }

// caret is ^p: changes that do not modify the left-most non-zero part.
func caret(p partial) []comparator {
	M, m, pt := p.major, p.minor, p.patch
	switch {
	case p.n == 0:
		return []comparator{{any: true}}
	case p.n == 1:
		return []comparator{atLeast(semver{M, 0, 0, nil}), below(M+1, 0, 0)}
	case p.n == 2 && M == 0:
		return []comparator{atLeast(semver{M, m, 0, nil}), below(M, m+1, 0)}
	case p.n == 2:
		return []comparator{atLeast(semver{M, m, 0, nil}), below(M+1, 0, 0)}
	case M == 0 && m == 0:
		return []comparator{atLeast(p.semver), below(M, m, pt+1)}
	case M == 0:
		return []comparator{atLeast(p.semver), below(M, m+1, 0)}
	}
	return []comparator{atLeast(p.semver), below(M+1, 0, 0)}
}

// tilde is ~p: patch-level changes if a minor version is given, else minor-level ones.
func tilde(p partial) []comparator {
	switch p.n {
	case 0:
		return []comparator{{any: true}}
	case 1:
		return []comparator{atLeast(semver{p.major, 0, 0, nil}), below(p.major+1, 0, 0)}
	case 2:
		return []comparator{atLeast(semver{p.major, p.minor, 0, nil}), below(p.major, p.minor+1, 0)}
	}
	return []comparator{atLeast(p.semver), below(p.major, p.minor+1, 0)}
}

// xRange is op and p: a full version as it is, a partial one as the range of the versions
// it stands for (node-semver's replaceXRange).
func xRange(op string, p partial) []comparator {
	M, m := p.major, p.minor
	switch {
	case p.n == 3:
		return []comparator{{op: op, v: p.semver}}
	case p.n == 0 && (op == "<" || op == ">"):
		return []comparator{below(0, 0, 0)} // nothing
	case p.n == 0:
		return []comparator{{any: true}}
	case op == ">" && p.n == 1: // >1 is >=2.0.0
		return []comparator{atLeast(semver{M + 1, 0, 0, nil})}
	case op == ">":
		return []comparator{atLeast(semver{M, m + 1, 0, nil})}
	case op == "<=" && p.n == 1: // <=1 is <2.0.0-0
		return []comparator{below(M+1, 0, 0)}
	case op == "<=":
		return []comparator{below(M, m+1, 0)}
	case op == "<" && p.n == 1:
		return []comparator{below(M, 0, 0)}
	case op == "<":
		return []comparator{below(M, m, 0)}
	case op == ">=": // >=1 is >=1.0.0
		return []comparator{atLeast(semver{M, m, 0, nil})}
	case p.n == 1:
		return []comparator{atLeast(semver{M, 0, 0, nil}), below(M+1, 0, 0)}
	}
	return []comparator{atLeast(semver{M, m, 0, nil}), below(M, m+1, 0)}
}

// hyphenRange is "from - to": from, a partial one filled with zeros, to to, a partial one
// up to the end of what it names.
func hyphenRange(fromText, toText string) ([]comparator, error) {
	from, err := parsePartial(fromText)
	if err != nil {
		return nil, err
	}
	to, err := parsePartial(toText)
	if err != nil {
		return nil, err
	}
	var set []comparator
	if from.n > 0 {
		v := from.semver
		if from.n < 3 {
			v.pre = nil
		}
		set = append(set, atLeast(v))
	}
	switch to.n {
	case 1:
		set = append(set, below(to.major+1, 0, 0))
	case 2:
		set = append(set, below(to.major, to.minor+1, 0))
	case 3:
		set = append(set, comparator{op: "<=", v: to.semver})
	}
	if len(set) == 0 {
		set = []comparator{{any: true}}
	}
	return set, nil
}

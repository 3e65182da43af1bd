package repo

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

const maxVersionLen = 64 // bytes

// CheckVersion reports why v cannot be a package's version (an error that is ErrVersion),
// as checkVersion says.
func CheckVersion(v string) error { return checkVersion(v) }

// checkVersion reports why v is not a valid version: non-empty, at most maxVersionLen
// bytes of [0-9A-Za-z.+~_-], starting with a digit, or with "v" and a digit; an epoch,
// digits and ":", may come first.
func checkVersion(v string) error {
	bad := func(format string, args ...any) error {
		return &valueError{ErrVersion, v, fmt.Sprintf(format, args...)}
	}
	switch {
	case v == "":
		return bad("empty version")
	case len(v) > maxVersionLen:
		return bad("version %.20q... is %d bytes, over %d", v, len(v), maxVersionLen)
	}
	_, up := splitEpoch(v)
	if up == "" || !isDigit(trimV(up)[0]) {
		return bad("bad version %q: must start with a digit, or v and a digit, after any epoch (1:)", v)
	}
	for i := 0; i < len(up); i++ {
		if !isVersionByte(up[i]) {
			return bad("bad version %q: byte %q is not one of [0-9A-Za-z.+~_-]", v, up[i])
		}
	}
	return nil
}

func isVersionByte(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || strings.IndexByte(".+~_-", c) >= 0
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// CompareVersions returns -1, 0 or +1 as version a sorts before, equal to, or after b.
//
// A version is [epoch:][v]release[pre-release][-revision]. The epoch, digits and ":"
// (Debian), sorts first, numerically; none is 0. A leading "v" (git tags) is ignored.
// The revision is what follows the last "-" or "_" when a digit follows it (Debian's
// "1.6-2.1+deb12u3"); it sorts after its absence (1.0 < 1.0-1 < 1.0.1). The pre-release
// is what follows the first "~", or "-" or "_" that no digit follows (semver's "1.0-rc1",
// "1.0_beta"); a version without one sorts after one with (1.0-rc1 < 1.0~rc2 < 1.0).
//
// Within each part, a "~" sorts before everything, even the part's end, and a "+" after
// the end but before a longer release (1.0-1~bpo1 < 1.0-1 < 1.0-1+deb12u1 < 1.0-1.1,
// 1.6 < 1.6+dfsg < 1.6.1). Between them, a part is split on "." into segments, compared
// left to right; a missing segment sorts before a present one (1.0 < 1.0.1). Within a
// segment, runs of digits compare by numeric value (1.9 < 1.10, rc2 < rc10) and runs of
// other bytes bytewise; a digit run sorts before another run at the same place, and a
// missing run before a present one (1.0 < 1.0a < 1.0b).
//
// Versions equal under these rules but spelled differently (1.09 and 1.9, 1.0-rc1 and
// 1.0~rc1, v1.2 and 1.2, 0:1.2 and 1.2) are ordered bytewise, so the order is total and
// only identical strings compare equal.
func CompareVersions(a, b string) int {
	if c := compareParts(a, b); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func compareParts(a, b string) int {
	av, bv := parseVersion(a), parseVersion(b)
	if c := compareNumbers(av.epoch, bv.epoch); c != 0 {
		return c
	}
	if c := comparePlus(av.release, bv.release); c != 0 {
		return c
	}
	if av.hasPre != bv.hasPre {
		return cmp.Compare(boolInt(bv.hasPre), boolInt(av.hasPre))
	}
	if c := compareTilde(av.pre, bv.pre); c != 0 {
		return c
	}
	if av.hasRev != bv.hasRev {
		return cmp.Compare(boolInt(av.hasRev), boolInt(bv.hasRev))
	}
	return compareTilde(av.rev, bv.rev)
}

// compareTilde compares a and b as Debian does "~": what precedes the first "~" first,
// then the one without "~" after the one with it, then what follows it, the same way
// (1.0~~ < 1.0~~a < 1.0~ < 1.0).
func compareTilde(a, b string) int {
	aRel, aPre, aHas := strings.Cut(a, "~")
	bRel, bPre, bHas := strings.Cut(b, "~")
	if c := comparePlus(aRel, bRel); c != 0 {
		return c
	}
	if aHas != bHas {
		return cmp.Compare(boolInt(bHas), boolInt(aHas))
	}
	if !aHas {
		return 0
	}
	return compareTilde(aPre, bPre)
}

// comparePlus compares what precedes the first "+" first, then the one without "+"
// before the one with it, then what follows it, the same way: a "+" suffix sorts after
// its release and before any longer one (1.6 < 1.6+dfsg < 1.6.1), as Debian orders "+"
// before "." and semver ignores build metadata.
func comparePlus(a, b string) int {
	aRel, aBuild, aHas := strings.Cut(a, "+")
	bRel, bBuild, bHas := strings.Cut(b, "+")
	if c := compareDotted(aRel, bRel); c != 0 {
		return c
	}
	if aHas != bHas {
		return cmp.Compare(boolInt(aHas), boolInt(bHas))
	}
	if !aHas {
		return 0
	}
	return comparePlus(aBuild, bBuild)
}

// version is a version split into the parts CompareVersions orders by.
type version struct {
	epoch   string // digits; "" is 0
	release string // without the epoch and a leading "v"
	pre     string
	rev     string
	hasPre  bool
	hasRev  bool
	preAt   int // the index in the whole version where the pre-release's marker is
}

// parseVersion splits v into its parts; see CompareVersions. Any string parses.
func parseVersion(v string) version {
	var p version
	epoch, up := splitEpoch(v)
	p.epoch = epoch
	off := len(v) - len(up)
	if t := trimV(up); t != up {
		up, off = t, off+1
	}
	if i := lastDash(up); i >= 0 && i+1 < len(up) && isDigit(up[i+1]) {
		up, p.rev, p.hasRev = up[:i], up[i+1:], true
	}
	p.release, p.preAt = up, -1
	if i := preMarker(up); i >= 0 {
		p.release, p.pre, p.hasPre, p.preAt = up[:i], up[i+1:], true, off+i
	}
	return p
}

// lastDash returns the index of the last "-" or "_" in s, or -1. strings.LastIndexAny
// decodes a string under 9 bytes rune by rune: 3/4 of parseVersion's time in BenchmarkResolve.
func lastDash(s string) int {
	i := len(s) - 1
	for i >= 0 && s[i] != '-' && s[i] != '_' {
		i--
	}
	return i
}

// splitEpoch splits off a leading epoch, digits followed by ":".
func splitEpoch(v string) (epoch, rest string) {
	i := 0
	for i < len(v) && isDigit(v[i]) {
		i++
	}
	if i > 0 && i < len(v) && v[i] == ':' {
		return v[:i], v[i+1:]
	}
	return "", v
}

// preMarker returns the index in up, a version without epoch or revision, of the byte
// that starts its pre-release: the first "~", or "-" or "_" not followed by a digit; or -1.
func preMarker(up string) int {
	for i := 0; i < len(up); i++ {
		switch up[i] {
		case '~':
			return i
		case '-', '_':
			if i+1 == len(up) || !isDigit(up[i+1]) {
				return i
			}
		}
	}
	return -1
}

// PreRelease returns the release v is a pre-release of ("2.0" for "2.0-rc1"), if it is one.
// The release keeps v's spelling of its epoch and release: "1:2.0" for "1:2.0~rc1-1".
func PreRelease(v string) (release string, ok bool) {
	p := parseVersion(v)
	if !p.hasPre {
		return "", false
	}
	return v[:p.preAt], true
}

// releaseOf returns, as a list for preferred's welcome, the release p's version is a
// pre-release of: none when it is a release, or p is of KindDeb, which has none.
func releaseOf(p Package) []string {
	if rel, ok := PreRelease(p.Version); ok && p.Kind != KindDeb {
		return []string{rel}
	}
	return nil
}

// preferred orders vs, candidates newest first, the way pkg tries them: releases before
// pre-releases, but for the pre-releases of a release in welcome (see Requirement.welcomes
// and resolver.welcome). It returns vs itself when that is the order.
func preferred(vs []Package, welcome []string) []Package {
	late := func(p Package) bool { return ranksLate(p, welcome) }
	i := slices.IndexFunc(vs, late)
	if i < 0 {
		return vs
	}
	out := slices.Clone(vs[:i])
	for _, p := range vs[i:] {
		if !late(p) {
			out = append(out, p)
		}
	}
	for _, p := range vs[i:] {
		if late(p) {
			out = append(out, p)
		}
	}
	return out
}

// ranksLate reports whether p's version is a pre-release that ranks after the releases:
// one of a release not in welcome. No version of KindDeb does: apt takes the newest.
func ranksLate(p Package, welcome []string) bool {
	rel, ok := PreRelease(p.Version)
	return ok && p.Kind != KindDeb && !slices.ContainsFunc(welcome, func(w string) bool { return compareParts(w, rel) == 0 })
}

// extensionsEnd returns a version that sorts after v0 and every version "@v0" allows,
// at no later a place than it must: v0 with the last run of its release raised (1.7 → 1.8,
// 1.7a → 1.7b). It reports false for a v0 with a pre-release, a revision or a "+", whose
// extensions this bound does not keep below it.
func extensionsEnd(v0 string) (string, bool) {
	p := parseVersion(v0)
	if p.hasPre || p.hasRev || strings.ContainsAny(p.release, "+-_~") {
		return "", false
	}
	head, rel := v0[:len(v0)-len(p.release)], p.release // head: the epoch and any "v"
	last := rel[len(rel)-1]
	switch {
	case last == '.':
		return "", false
	case !isDigit(last):
		return head + rel[:len(rel)-1] + string(last+1), true
	}
	i := len(rel)
	for i > 0 && isDigit(rel[i-1]) {
		i--
	}
	return head + rel[:i] + increment(rel[i:]), true
}

// increment adds one to a run of decimal digits.
func increment(digits string) string {
	b := []byte(digits)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < '9' {
			b[i]++
			return string(b)
		}
		b[i] = '0'
	}
	return "1" + string(b)
}

func compareDotted(a, b string) int {
	for {
		aSeg, aRest, aMore := strings.Cut(a, ".")
		bSeg, bRest, bMore := strings.Cut(b, ".")
		if c := compareSegment(aSeg, bSeg); c != 0 {
			return c
		}
		if !aMore || !bMore {
			return cmp.Compare(boolInt(aMore), boolInt(bMore))
		}
		a, b = aRest, bRest
	}
}

func compareSegment(a, b string) int {
	for a != "" && b != "" {
		aRun, aRest := nextRun(a)
		bRun, bRest := nextRun(b)
		if c := compareRun(aRun, bRun); c != 0 {
			return c
		}
		a, b = aRest, bRest
	}
	return cmp.Compare(len(a), len(b))
}

// nextRun splits off the leading run of digits or of non-digits of a non-empty s.
func nextRun(s string) (run, rest string) {
	digit := isDigit(s[0])
	i := 1
	for i < len(s) && isDigit(s[i]) == digit {
		i++
	}
	return s[:i], s[i:]
}

func compareRun(a, b string) int {
	aNum, bNum := isDigit(a[0]), isDigit(b[0])
	switch {
	case aNum && bNum:
		return compareNumbers(a, b)
	case aNum != bNum:
		return cmp.Compare(boolInt(bNum), boolInt(aNum))
	}
	return strings.Compare(a, b)
}

// compareNumbers compares digit strings of any length by value.
func compareNumbers(a, b string) int {
	a = strings.TrimLeft(a, "0")
	b = strings.TrimLeft(b, "0")
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

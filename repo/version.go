package repo

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

const maxVersionLen = 64 // bytes

// checkVersion reports why v is not a valid version: non-empty, at most maxVersionLen
// bytes of [0-9A-Za-z.+~-], starting with a digit.
func checkVersion(v string) error {
	switch {
	case v == "":
		return fmt.Errorf("empty version")
	case len(v) > maxVersionLen:
		return fmt.Errorf("version %.20q... is %d bytes, over %d", v, len(v), maxVersionLen)
	case !isDigit(v[0]):
		return fmt.Errorf("bad version %q: must start with a digit", v)
	}
	for i := 0; i < len(v); i++ {
		if !isVersionByte(v[i]) {
			return fmt.Errorf("bad version %q: byte %q is not one of [0-9A-Za-z.+~-]", v, v[i])
		}
	}
	return nil
}

func isVersionByte(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || strings.IndexByte(".+~-", c) >= 0
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// CompareVersions returns -1, 0 or +1 as version a sorts before, equal to, or after b.
//
// A version is a release, then optionally "-" or "~" and a pre-release: "1.0-rc1" is
// release "1.0" with pre-release "rc1". Releases compare first; when equal, a version
// without a pre-release sorts after one with (1.0-rc1 < 1.0), and pre-releases compare
// like releases. Each part is split on "." into segments, compared left to right; a
// missing segment sorts before a present one (1.0 < 1.0.1). Within a segment, runs of
// digits compare by numeric value (1.9 < 1.10, rc2 < rc10) and runs of other bytes
// bytewise; a digit run sorts before another run at the same place, and a missing run
// before a present one (1.0 < 1.0a < 1.0b, 1.0 < 1.0+b1).
//
// Versions equal under these rules but spelled differently (1.09 and 1.9, 1.0-rc1 and
// 1.0~rc1) are ordered bytewise, so the order is total and only identical strings
// compare equal.
func CompareVersions(a, b string) int {
	if c := compareParts(a, b); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func compareParts(a, b string) int {
	aRel, aPre, aHas := splitPre(a)
	bRel, bPre, bHas := splitPre(b)
	if c := compareDotted(aRel, bRel); c != 0 {
		return c
	}
	if aHas != bHas {
		return cmp.Compare(boolInt(bHas), boolInt(aHas))
	}
	return compareDotted(aPre, bPre)
}

// PreRelease returns the release v is a pre-release of ("2.0" for "2.0-rc1"), if it is one.
func PreRelease(v string) (release string, ok bool) {
	release, _, ok = splitPre(v)
	return release, ok
}

// releaseOf returns, as a list for preferred's welcome, the release v is a pre-release of:
// none when v is a release.
func releaseOf(v string) []string {
	if rel, ok := PreRelease(v); ok {
		return []string{rel}
	}
	return nil
}

// preferred orders vs, candidates newest first, the way pkg tries them: releases before
// pre-releases, but for the pre-releases of a release in welcome (see Requirement.welcomes
// and resolver.welcome). It returns vs itself when that is the order.
func preferred(vs []Package, welcome []string) []Package {
	late := func(p Package) bool {
		rel, _, ok := splitPre(p.Version)
		return ok && !slices.Contains(welcome, rel)
	}
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

// pastExtensions reports whether v sorts after v0 and every version that extends v0 by
// "." and more: the versions "@v0" allows. Along the order of versions it is false, then
// true.
func pastExtensions(v, v0 string) bool {
	rel, pre, has := splitPre(v)
	rel0, pre0, has0 := splitPre(v0)
	if !has0 {
		return compareLeading(rel, rel0) > 0
	}
	if c := compareDotted(rel, rel0); c != 0 {
		return c > 0
	}
	return !has || compareLeading(pre, pre0) > 0
}

// compareLeading compares with b the leading segments of a, as many as b has.
func compareLeading(a, b string) int {
	k := strings.Count(b, ".")
	i := 0
	for ; i < len(a); i++ {
		if a[i] == '.' {
			if k == 0 {
				break
			}
			k--
		}
	}
	return compareDotted(a[:i], b)
}

// splitPre splits v at its first "-" or "~".
func splitPre(v string) (release, pre string, ok bool) {
	i := strings.IndexAny(v, "-~")
	if i < 0 {
		return v, "", false
	}
	return v[:i], v[i+1:], true
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

package repo

import (
	"cmp"
	"strings"
)

// compareDebian returns -1, 0 or +1 as dpkg orders Debian versions a and b
// (deb-version(7), dpkg's lib/dpkg/version.c): the epoch by number, none 0; then the
// upstream version and the revision, what follows the last "-" (none is "0"), each by
// verrevcmp. Versions dpkg holds equal (1.0 and 1.0-0, 0:1.0 and 1.0) compare 0.
func compareDebian(a, b string) int {
	aEpoch, aUp, aRev := splitDebian(a)
	bEpoch, bUp, bRev := splitDebian(b)
	return cmp.Or(compareNumbers(aEpoch, bEpoch), verrevcmp(aUp, bUp), verrevcmp(aRev, bRev))
}

// splitDebian splits a Debian version into its epoch, upstream version and revision.
func splitDebian(v string) (epoch, up, rev string) {
	epoch, up = splitEpoch(v)
	if i := strings.LastIndexByte(up, '-'); i >= 0 {
		return epoch, up[:i], up[i+1:]
	}
	return epoch, up, ""
}

// verrevcmp compares an upstream version or revision as dpkg does: alternately a run of
// non-digits, byte by byte in debOrder, and a run of digits, by value.
func verrevcmp(a, b string) int {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		for i < len(a) && !isDigit(a[i]) || j < len(b) && !isDigit(b[j]) {
			if c := cmp.Compare(debOrder(a, i), debOrder(b, j)); c != 0 {
				return c
			}
			i, j = i+1, j+1
		}
		aNum, bNum := digitsAt(a, i), digitsAt(b, j)
		i, j = i+len(aNum), j+len(bNum)
		if c := compareNumbers(aNum, bNum); c != 0 {
			return c
		}
	}
	return 0
}

// digitsAt returns the run of digits of s at i.
func digitsAt(s string, i int) string {
	k := i
	for k < len(s) && isDigit(s[k]) {
		k++
	}
	return s[i:k]
}

// debOrder is the weight of s[i] in a run of non-digits: "~" before the run's end (and a
// digit), then letters, then every other byte.
func debOrder(s string, i int) int {
	if i >= len(s) || isDigit(s[i]) {
		return 0
	}
	switch c := s[i]; {
	case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		return int(c)
	case c == '~':
		return -1
	default:
		return int(c) + 256
	}
}

// versionOrder is how a constraint compares a version of a package of kind with its own:
// as dpkg for KindDeb, spellings dpkg holds equal equal; else CompareVersions.
func versionOrder(kind string) func(a, b string) int {
	if kind == KindDeb {
		return compareDebian
	}
	return CompareVersions
}

package tarutil

import (
	"unicode"
	"unicode/utf8"
)

// foldKey returns a key under which two names that differ only in case or in Unicode
// normalization (a composed character against its decomposition, NFC against NFD) are
// equal. On a case-insensitive or normalizing filesystem (macOS, ext4 and f2fs casefold
// directories, ZFS normalization=formD) such names are one file, so a symlink under one
// would be written through under the other: the policy refuses the pair.
//
// Without normalization tables (golang.org/x/text is not a dependency of the module) the key
// over-approximates: ASCII letters are lowercased; a non-ASCII rune that case-folds to ASCII
// (KELVIN SIGN, LONG S), or whose canonical or full case-folded form is ASCII, becomes that
// ASCII; every other non-ASCII rune becomes one placeholder, which also absorbs the
// combining marks and conjoining Hangul vowels and finals that follow it. So a composed
// character and its decomposition share a key, as two cases of a letter do; two different
// accented letters at the same place do too, and such a pair is refused as well.
func foldKey(name string) string {
	if lowerASCII(name) {
		return name
	}
	key := make([]rune, 0, len(name))
	for _, r := range name {
		switch {
		case extendsCluster(r):
			if n := len(key); n > 0 && key[n-1] != '/' {
				key[n-1] = foldPlaceholder
			} else {
				key = append(key, foldPlaceholder)
			}
		case r < utf8.RuneSelf:
			key = append(key, unicode.ToLower(r))
		default:
			key = appendFolded(key, r)
		}
	}
	return string(key)
}

// foldPlaceholder stands for any non-ASCII character in a key.
const foldPlaceholder = '\uFFFD'

// lowerASCII reports whether name is ASCII without capital letters: its own key.
func lowerASCII(name string) bool {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

// extendsCluster reports whether r continues the character before it: a combining mark,
// or a Hangul vowel or final jamo, which compose with the jamo before them into a syllable.
func extendsCluster(r rune) bool {
	return unicode.Is(unicode.M, r) || 0x1160 <= r && r <= 0x11ff || 0xd7b0 <= r && r <= 0xd7ff
}

// toASCII maps the non-ASCII runes whose canonical decomposition (Unicode singletons) or
// full case folding (CaseFolding.txt, status F) is ASCII.
var toASCII = map[rune]string{
	0x037e: ";",  // GREEK QUESTION MARK ≡ SEMICOLON
	0x1fef: "`",  // GREEK VARIA ≡ GRAVE ACCENT
	0x212a: "k",  // KELVIN SIGN ≡ LATIN CAPITAL LETTER K
	0x00df: "ss", // ß
	0x1e9e: "ss", // ẞ
	0xfb00: "ff",
	0xfb01: "fi",
	0xfb02: "fl",
	0xfb03: "ffi",
	0xfb04: "ffl",
	0xfb05: "st",
	0xfb06: "st",
}

// appendFolded appends the key of the non-ASCII rune r.
func appendFolded(key []rune, r rune) []rune {
	if s, ok := toASCII[r]; ok {
		for _, c := range s {
			key = append(key, c)
		}
		return key
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < utf8.RuneSelf {
			return append(key, unicode.ToLower(f))
		}
	}
	return append(key, foldPlaceholder)
}

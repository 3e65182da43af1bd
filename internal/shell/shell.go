// Package shell writes words for a POSIX shell and reads a PATH: what pkg prints for users
// to paste into their shell or profile. It runs no shell.
package shell

import (
	"os"
	"path/filepath"
	"strings"
)

// Quote quotes s for a POSIX shell where it needs it.
func Quote(s string) string {
	if !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Escape escapes s for the inside of a POSIX shell's double quotes, where only these four
// bytes are special.
func Escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`").Replace(s)
}

// CanBeOnPath reports whether dir can be one of the directories of a PATH value: not
// where it holds ':', which separates them, and which no quoting or escape hides.
func CanBeOnPath(dir string) bool { return !strings.ContainsRune(dir, filepath.ListSeparator) }

// OnPath reports whether dir is one of the directories of path, a PATH value: the same
// directory, by another name too, but not by a relative one.
func OnPath(dir, path string) bool {
	want, err := os.Stat(dir)
	if err != nil {
		return false
	}
	for _, d := range filepath.SplitList(path) {
		if info, err := os.Stat(d); err == nil && filepath.IsAbs(d) && os.SameFile(info, want) {
			return true
		}
	}
	return false
}

package repo

import (
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// staleAge is how old a temporary file of a repository directory that could not be
// locked must be before it is removed: younger ones may be another add's work in
// progress. The cache's is the same (fetch's staleAge).
const staleAge = 24 * time.Hour

// removeLeftovers removes the temporary files that a writer of the repository directory
// dir killed before its rename left there (leftover): all of them when the caller holds
// dir's lock (locked), which every writer takes; else the stale ones.
func removeLeftovers(dir *os.File, locked bool) {
	ents, _ := dir.ReadDir(-1)
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if info, err := e.Info(); err == nil && leftover(e.Name(), time.Since(info.ModTime()), locked) {
			unix.Unlinkat(int(dir.Fd()), e.Name(), 0) // through the locked directory, not its path
		}
	}
}

// leftover reports whether name, of a file in a repository directory age old, is a
// temporary file of its writers (writeFile's ".NAME.tmp-DIGITS", NAME the index, its
// signature or an archive, FileName(PACKAGE)-VERSION...) that no live writer holds: none
// when the directory is locked (locked), none stale otherwise.
func leftover(name string, age time.Duration, locked bool) bool {
	i := strings.LastIndex(name, ".tmp-")
	if i < 1 || name[0] != '.' || !allDigits(name[i+len(".tmp-"):]) {
		return false
	}
	base := name[1:i]
	return (locked || age > staleAge) && (base == indexName || base == SignatureName || archiveName(base))
}

// archiveName reports whether base is named as Add names an archive: a package's name as
// FileName writes it, a "-", more, and the ending of an archive pkg reads
// (ArchiveEndings), which no other file a tool of pkg's writes there (a lockfile, a key)
// has.
func archiveName(base string) bool {
	if !slices.ContainsFunc(ArchiveEndings, func(e string) bool { return strings.HasSuffix(base, e) }) {
		return false
	}
	for i := range len(base) {
		if base[i] == '-' && i+1 < len(base) && validName(NameOfFile(base[:i])) {
			return true
		}
	}
	return false
}

func allDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

package install

import (
	"archive/tar"
	"errors"
	"fmt"
	"slices"
	"strings"

	"pkg/db"
	"pkg/repo"
	"pkg/tarutil"
)

// The merged prefix: every member of every installed package is also in the root itself,
// at its prefix path, a directory as a real directory that the packages listing it share,
// anything else as a hard link to its inode in pkgs/NAME (design.md, Layout of a root).

// prefixPath returns where the member name of a package whose record has into is in the
// prefix (db.Record.InRoot).
func prefixPath(name, into string) string { return (&db.Record{Into: into}).InRoot(name) }

// prefixEntry is one path of the prefix that a package lists.
type prefixEntry struct {
	path   string // in the prefix
	member string // in the package's tree; "" for a directory only above its members (Into's)
	dir    bool
}

// prefixEntries returns the prefix paths of a package's members, n of them or about,
// each given by its path and whether it is a directory, placed by into, with every
// directory above them, sorted by path, each once.
func prefixEntries(into string, n int, members func(yield func(name string, dir bool) bool)) []prefixEntry {
	above := strings.Count(into, "/") + 1 // the directories into adds above the members
	es := make([]prefixEntry, 0, n+above)
	seen := make(map[string]int, n+above) // index in es
	for name, dir := range members {
		p := prefixPath(name, into)
		if i, ok := seen[p]; ok {
			if dir && es[i].member == "" { // a directory listed after its files
				es[i].member = name
			}
			continue
		}
		seen[p] = len(es)
		es = append(es, prefixEntry{path: p, member: name, dir: dir})
		for d := tarutil.Parent(p); d != "."; d = tarutil.Parent(d) {
			if _, ok := seen[d]; ok {
				break
			}
			seen[d] = len(es)
			es = append(es, prefixEntry{path: d, dir: true})
		}
	}
	slices.SortFunc(es, func(a, b prefixEntry) int { return strings.Compare(a.path, b.path) })
	return es
}

// memberEntries is prefixEntries of a staged package's members, yielded by name (order,
// byName): prefixPath keeps their order, one top-level directory taking into's place, so
// the entries come nearly sorted and their sort costs about a comparison each.
func memberEntries(into string, members []tarutil.Member, order []int32) []prefixEntry {
	return prefixEntries(into, len(members), func(yield func(string, bool) bool) {
		for _, i := range order {
			if !yield(members[i].Name, members[i].Type == tar.TypeDir) {
				return
			}
		}
	})
}

// fileEntries is prefixEntries of a recorded file list.
func fileEntries(into string, files []db.File) []prefixEntry {
	return prefixEntries(into, len(files), func(yield func(string, bool) bool) {
		for i := range files {
			if !yield(files[i].Path, files[i].Type == tar.TypeDir) {
				return
			}
		}
	})
}

// pathEntries is prefixEntries of an old tree's members as a pending roll-forward records
// them (oldPaths: a directory's path ends in a slash).
func pathEntries(into string, files []string) []prefixEntry {
	return prefixEntries(into, len(files), func(yield func(string, bool) bool) {
		for _, f := range files {
			name, dir := strings.CutSuffix(f, "/")
			if !yield(name, dir) {
				return
			}
		}
	})
}

// oldPaths returns the paths of files for a pending roll-forward's OldTree: a directory's
// ends in a slash.
func oldPaths(files []db.File) []string {
	ps := make([]string, len(files))
	for i := range files {
		ps[i] = files[i].Path
		if files[i].Type == tar.TypeDir {
			ps[i] += "/"
		}
	}
	return ps
}

// errInto is what a member of a package placed by Into (its one top-level directory) fails
// with beside another top-level entry.
var errInto = fmt.Errorf("install: member outside the package's one top-level directory")

// ErrReserved is what a member placed at a top-level name of pkg's own fails with.
var ErrReserved = errors.New("install: member in a place of pkg's own")

// CheckReserved refuses a package with a member whose prefix path is in .pkg or pkgs,
// which are pkg's, or that is bin itself and not a directory (pkg's command links live
// in bin/); and, placed by Into, one with more than one top-level entry. Stage checks it;
// a publisher checks it so as not to publish what no install would place.
func CheckReserved(p repo.Package, members []tarutil.Member) error {
	into := intoOf(&p)
	var top0 string
	if len(members) > 0 {
		top0, _, _ = strings.Cut(members[0].Name, "/")
	}
	for i := range members {
		m := &members[i]
		if first, _, _ := strings.Cut(m.Name, "/"); into != "" && first != top0 {
			return memberError(m, &reasonError{fmt.Sprintf("the package is placed at %s, which takes one top-level directory, and this is beside another", into), errInto, nil})
		}
		top, nested := prefixTop(m.Name, into)
		if top == ".pkg" || top == "pkgs" || top == "bin" && m.Type != tar.TypeDir && !nested {
			return memberError(m, &reasonError{fmt.Sprintf("%s is pkg's own place in a root", top), ErrReserved, nil})
		}
	}
	return nil
}

// prefixTop returns the first component of prefixPath(name, into) and whether that path
// has more, without making the path: CheckReserved asks it of every member.
func prefixTop(name, into string) (top string, nested bool) {
	if into == "" {
		top, _, nested = strings.Cut(name, "/")
		return top, nested
	}
	top, _, nested = strings.Cut(into, "/")
	return top, nested || strings.Contains(name, "/")
}

// A ConflictError refuses a change that would put two packages' files at one path of the
// prefix (or a directory of one where the other has a file or symlink), where neither
// replaces the other (Replaces).
type ConflictError struct {
	Path                     string // in the prefix, relative to the root
	Package, Version         string // the package installed
	Other, OtherVersion      string // the package that has the path too
	Incoming                 bool   // Other is installed by the same change
	Command                  bool   // the path is a command link of one of them, in bin/
	dirInPackage, dirInOther bool
}

func (e *ConflictError) Error() string {
	other := e.Other + " " + e.OtherVersion
	if e.Incoming {
		other += ", installed with it"
	}
	what := "is also in " + other
	switch {
	case e.Command:
		what = "is a command link of one and a file of the other, " + other
	case e.dirInPackage != e.dirInOther:
		what = "is a directory in one and not in the other, " + other
	}
	return fmt.Sprintf("install %s %s: %s %s", e.Package, e.Version, e.Path, what)
}

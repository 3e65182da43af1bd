package report

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"pkg/db"
	"pkg/install"
	"pkg/internal/units"
	"pkg/repo"
)

// VerifyOf is the Verify of checking the packages keys (db.Record.Key) among recs (all of
// them without keys), which found ps.
func VerifyOf(recs []db.Record, keys []string, ps []install.FileError) Verify {
	pkgs, files := 0, 0
	for _, p := range recs {
		if len(keys) == 0 || slices.Contains(keys, p.Key()) {
			pkgs, files = pkgs+1, files+p.Files
		}
	}
	v := newVerify(pkgs, files, ps)
	for i, p := range ps {
		v.Problems[i].InRoot = inRoot(recs, p)
	}
	return v
}

// inRoot returns where the root has the file of p, whose path is relative to its package
// directory, from p's package among recs (db.Record.InRoot: npm's package/lib/x.js is at
// lib/node_modules/.pnpm/NAME@VERSION/node_modules/NAME/lib/x.js, where the package
// directory holds none); "" where p is of no such file: a command link, a path of the
// prefix, the package directory or a placeholder in it, a dependency.
func inRoot(recs []db.Record, p install.FileError) string {
	if p.Path == "" || filepath.IsAbs(p.Path) || errors.Is(p.Err, install.ErrPlaceholder) || errors.Is(p.Err, install.ErrPackageDir) {
		return ""
	}
	i := slices.IndexFunc(recs, func(r db.Record) bool {
		return r.Name == p.Package && r.Version == p.Version && r.Kind == p.Kind
	})
	if i < 0 {
		return ""
	}
	return recs[i].InRoot(p.Path)
}

// VerifyRefused is the Verify of a repair refused for err: nothing checked.
func VerifyRefused(err error) Verify {
	r := &Refusal{Error: err.Error()}
	if ge := (*install.GoneError)(nil); errors.As(err, &ge) {
		for _, g := range ge.Gone {
			r.Gone = append(r.Gone, GoneTree{Package: g.Package, Version: g.Version, Tree: g.Tree, By: g.By})
		}
	}
	if ue := (*install.UnmatchedError)(nil); errors.As(err, &ue) {
		r.Unmatched = ue.Trees
	}
	return Verify{Schema: VerifySchema, Problems: []Problem{}, Refused: r}
}

// kinds word the kinds of install.FileError: the first that matches.
var kinds = []struct {
	err  error
	word string
}{
	{install.ErrModified, "modified"},
	{install.ErrCacheDamaged, "damaged"},
	{install.ErrMissing, "missing"},
	{install.ErrExtra, "extra"},
	{install.ErrUnreadable, "unreadable"},
	{install.ErrIncomplete, "incomplete"},
}

// whats word what more a finding says, in the order they are listed: each that matches.
var whats = []struct {
	err  error
	word string
}{
	{install.ErrType, "type"},
	{install.ErrLinkTarget, "symlink target"},
	{install.ErrMode, "mode"},
	{install.ErrSize, "size"},
	{install.ErrContent, "content"},
	{install.ErrPackageDir, "package directory"},
	{install.ErrPlaceholder, "placeholder of a folded directory"},
	{install.ErrPrefix, "in the root's prefix"},
	{install.ErrDependency, "dependency"},
	{fs.ErrPermission, "permission denied"},
}

// kindWord is a problem's kind: "modified", "missing", "extra" or "unreadable".
func kindWord(err error) string {
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return k.word
		}
	}
	return err.Error()
}

// whatWords says what more is known of a problem: what differs ("mode, size"), or that it
// is a command's link, or "" for nothing.
func whatWords(err error) string {
	switch {
	case errors.Is(err, install.ErrIncomplete):
		return "recorded by a repair without its dependencies, commands and libraries"
	case errors.Is(err, install.ErrForeign):
		return "command link, a file not pkg's in its place"
	case errors.Is(err, install.ErrCommandLink):
		return "command link"
	case errors.Is(err, install.ErrExtra) && errors.Is(err, install.ErrPlaceholder):
		return "in the placeholder of a folded directory, whose files are at its prefix path"
	}
	var words []string
	for _, w := range whats {
		if errors.Is(err, w.err) {
			words = append(words, w.word)
		}
	}
	return strings.Join(words, ", ")
}

// String is p as pkg verify prints it, a package's file where the root has it: "app 1.0:
// modified bin/app (content)", "app 1.0: missing lib>=1 (dependency)", "app 1.0:
// incomplete (...)", "app 1.0: damaged bin/app (content: cloned from the damaged cache
// entry SHA256, not changed in the root)".
func (p Problem) String() string {
	if p.Path == "" && p.Requirement == "" {
		return fmt.Sprintf("%s %s: %s (%s)", p.Package, p.Version, p.Kind, p.What)
	}
	s := fmt.Sprintf("%s %s: %s %s", p.Package, p.Version, p.Kind, cmp.Or(p.InRoot, p.Path, p.Requirement))
	what := p.What
	if p.Entry != "" {
		what += ": cloned from the damaged cache entry " + p.Entry + ", not changed in the root"
	}
	if what != "" {
		s += " (" + what + ")"
	}
	return s
}

// WriteText prints a line per problem.
func (v Verify) WriteText(w io.Writer) error {
	for _, p := range v.Problems {
		if _, err := fmt.Fprintln(w, p); err != nil {
			return err
		}
	}
	return nil
}

// Text sums up v: what it checked, or how many problems it found.
func (v Verify) Text() string {
	if len(v.Problems) > 0 {
		return units.Count(len(v.Problems), "problem") + " found"
	}
	return "verified " + units.Count(v.Packages, "package") + ", " + units.Count(v.Files, "file")
}

// Repair returns what putting back the packages of the problems ps takes: the packages to
// install again, each once (by key: NAME@VERSION for one of an npm name's versions), the
// files not pkg's that must first move out of the way (install.ErrForeign), and those of
// the packages with a dependency nothing installed meets (install.ErrDependency), whose
// reinstall installs it, and those recorded without their entry (install.ErrIncomplete),
// which only an index or a lockfile that describes them records again, and those whose
// files were cloned from a damaged cache entry (install.ErrCacheDamaged), whose reinstall
// fetches the archive again.
func Repair(ps []install.FileError) (pkgs, foreign, lacking, incomplete, damaged []string) {
	for _, p := range ps {
		key := repo.InstanceKey(p.Kind, p.Package, p.Version)
		if !slices.Contains(pkgs, key) {
			pkgs = append(pkgs, key)
		}
		switch {
		case errors.Is(p.Err, install.ErrDependency):
			if !slices.Contains(lacking, key) {
				lacking = append(lacking, key)
			}
		case errors.Is(p.Err, install.ErrForeign):
			foreign = append(foreign, p.Path)
		case errors.Is(p.Err, install.ErrIncomplete):
			incomplete = append(incomplete, key)
		case errors.Is(p.Err, install.ErrCacheDamaged):
			if !slices.Contains(damaged, key) {
				damaged = append(damaged, key)
			}
		}
	}
	return pkgs, foreign, lacking, incomplete, damaged
}

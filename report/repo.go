package report

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"pkg/config"
	"pkg/internal/termtext"
	"pkg/internal/units"
	"pkg/publish"
	"pkg/repo"
)

// ReposOf is rs, the repositories in effect, as Repos and ReposText report them: URLs
// without their user information (docs/config.md#credentials).
func ReposOf(rs []config.Repo) []Repository {
	out := make([]Repository, len(rs))
	for i, r := range rs {
		urls := make([]string, len(r.URLs))
		for j, s := range r.URLs {
			urls[j] = termtext.WithoutCredentials(s)
		}
		from := make([]string, len(r.Keys))
		for j := range r.Keys {
			from[j] = r.KeyFile(j)
		}
		out[i] = Repository{Name: r.Name, URLs: urls, Keys: r.Keys, KeysFrom: from, Priority: r.Priority, From: r.File}
	}
	return out
}

// AddedText says what publish.Add did in the repository directory dir: that it made a
// new repository ("" if not), the entry added (or there already, the same), and notes on
// what may surprise: a pre-release, entries replaced, dependencies the repository does
// not offer.
func AddedText(dir string, res *publish.Added) (created, added string, notes []string) {
	p := res.Package
	if res.Created {
		created = dir + " had no index.json: this is a new repository"
	}
	added = fmt.Sprintf("added %s %s to %s", p.Name, p.Version, dir)
	if res.Again {
		added = fmt.Sprintf("%s %s is in %s already, the same archive and entry", p.Name, p.Version, dir)
	}
	added += fmt.Sprintf(": %s, %s, %s, sha256 %s", p.Archive, units.Size(p.Size), units.Count(p.Files, "file"), p.SHA256)
	if rel, ok := repo.PreRelease(p.Version); ok && p.Kind == "" { // npm's ranges say which pre-releases they take; apt takes the newest
		notes = append(notes, fmt.Sprintf("%s is a pre-release of %s: it sorts before %s, and installs take a release while there is one (a packaging revision of %s is written %s-1 or %s+1)",
			p.Version, rel, rel, rel, rel, rel))
	}
	for _, q := range res.Replaced {
		note := fmt.Sprintf("this replaced the entry of %s %s (archive %s, depends %q, bin %q)", q.Name, q.Version, q.Archive, q.Depends, q.Bin)
		if slices.Contains(res.Deleted, q.Archive) {
			note += fmt.Sprintf(", and deleted %s, which no entry names now", q.Archive)
		}
		notes = append(notes, note)
	}
	for _, d := range res.Missing {
		notes = append(notes, fmt.Sprintf("%s %s depends on %s, which %s does not offer (yet)", p.Name, p.Version, d, dir))
	}
	if note := ScriptsNote(p, res.Scripts); note != "" {
		notes = append(notes, note)
	}
	return created, added, notes
}

// UnchangedText says that an add left the repository directory dir as it was, its
// index having every entry already; signed says it is signed, m being its Meta, which
// the add did not sign again.
func UnchangedText(dir string, m repo.Meta, signed bool) string {
	text := dir + " unchanged: its index.json has every entry already"
	if signed {
		text += fmt.Sprintf(", signed as it was (repository %s, version %d, expires %s)", m.Name, m.Version, m.Expires.Format(time.RFC3339))
	}
	return text
}

// ScriptsNote says that the npm package p declares the lifecycle scripts scripts
// (publish.Added.Scripts), which pkg never runs; "" for none.
func ScriptsNote(p repo.Package, scripts []string) string {
	var named []string
	gyp := false
	for _, s := range scripts {
		if s == "binding.gyp" {
			gyp = true
		} else {
			named = append(named, s)
		}
	}
	var says []string
	if len(named) > 0 {
		says = append(says, "declares the "+strings.Join(named, ", ")+" script"+plural(len(named)))
	}
	if gyp {
		says = append(says, "has a binding.gyp, which npm builds with node-gyp at install")
	}
	if len(says) == 0 {
		return ""
	}
	return fmt.Sprintf("%s %s %s: pkg never runs install scripts, so what they would build or download is missing (a native addon works only prebuilt in the tarball)",
		p.Name, p.Version, strings.Join(says, " and "))
}

// AbsentWarnings warns, a line each, of the commands the package.json of the npm package
// p names whose files its tarball lacks (publish.Added.Absent), which its entry leaves out;
// their paths, never checked as the entry's commands are, quoted.
func AbsentWarnings(p repo.Package, absent []repo.Command) []string {
	var warnings []string
	for _, c := range absent {
		warnings = append(warnings, fmt.Sprintf("%s %s: its package.json's bin %s names %s, which its tarball lacks: the package has no such command (npm and pnpm skip it too)",
			p.Name, p.Version, termtext.Quote(c.Name), termtext.Quote(c.Path)))
	}
	return warnings
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// ImportedText says what publish.ImportNPMLock did in the repository directory dir from
// the package-lock.json from, and that it wrote the lockfile out: a line for each package
// added, one for the import and one for the lockfile; and notes on a new repository, the
// bundled packages, the packages of the lock that the lockfile leaves out, the
// lifecycle scripts of those added (ScriptsNote) and the archives of entries replaced
// that it deleted.
func ImportedText(dir, from, out string, res *publish.Imported) (lines, notes []string) {
	if res.Created {
		notes = append(notes, dir+" had no index.json: this is a new repository")
	}
	for _, key := range res.Bundled {
		notes = append(notes, fmt.Sprintf("%s is bundled: it comes inside the tarball of the package it is under", key))
	}
	for _, p := range res.Unused {
		notes = append(notes, fmt.Sprintf("%s %s is in %s, but no requirement of the project resolves to it: added to %s, not in %s", p.Name, p.Version, from, dir, out))
	}
	for _, p := range res.New {
		lines = append(lines, fmt.Sprintf("added %s %s: %s, %s, %s", p.Name, p.Version, p.Archive, units.Size(p.Size), units.Count(p.Files, "file")))
		if note := ScriptsNote(p, res.Scripts[p.Key()]); note != "" {
			notes = append(notes, note)
		}
	}
	for _, a := range res.Deleted {
		notes = append(notes, fmt.Sprintf("deleted %s, the archive of an entry replaced, which no entry names now", filepath.Join(dir, filepath.FromSlash(a))))
	}
	lines = append(lines, fmt.Sprintf("imported %s into %s: %s, %d new, %d downloaded",
		from, dir, units.Count(len(res.Packages), "package"), len(res.New), res.Downloaded))
	lines = append(lines, fmt.Sprintf("wrote %s: %s, requires %s", out, units.Count(len(res.Lock.Packages), "package"), repo.JoinRequirements(res.Lock.Requires)))
	return lines, notes
}

// RemovedText says what repo.Remove did in the repository directory dir, a line for each
// entry removed and each archive deleted, and warns of each dependency it left unmet.
func RemovedText(dir string, res *repo.Removed) (lines, warnings []string) {
	for _, p := range res.Packages {
		lines = append(lines, fmt.Sprintf("removed %s %s from %s", p.Name, p.Version, dir))
	}
	for _, a := range res.Deleted {
		lines = append(lines, "deleted "+filepath.Join(dir, filepath.FromSlash(a)))
	}
	for _, n := range res.Broken {
		warnings = append(warnings, fmt.Sprintf("%s %s depends on %s, which %s no longer satisfies", n.Name, n.Version, n.Depends, dir))
	}
	return lines, append(warnings, LeftWarnings(dir, res.Dropped)...)
}

// LeftWarnings warns, a line each, of the archives no entry names now that a change of
// the repository directory dir made without deleting them (repo.Dropped.Left): the index
// is written, so each is the user's to delete.
func LeftWarnings(dir string, d repo.Dropped) []string {
	var warnings []string
	for _, l := range d.Left {
		file := filepath.Join(dir, filepath.FromSlash(l.Archive))
		if errors.Is(l.Err, repo.ErrOutside) {
			warnings = append(warnings, fmt.Sprintf("did not delete %s, which no entry names now: it is outside %s (a symlink leads there), and pkg deletes nothing outside a repository; delete it by hand if nothing else uses it", file, dir))
			continue
		}
		cause := l.Err
		if pe := (*fs.PathError)(nil); errors.As(cause, &pe) && pe.Path == file {
			cause = pe.Err
		}
		warnings = append(warnings, fmt.Sprintf("could not delete %s, which no entry names now: %v; the index no longer names it, so delete it by hand", file, cause))
	}
	return warnings
}

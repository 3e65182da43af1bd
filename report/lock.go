package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"pkg/internal/termtext"
	"pkg/repo"
)

// LockText says, a line each, how the lockfile l written at path differs from old (nil:
// none before; lockChanges), then that it was written, or that it was up to date.
func LockText(old, l *repo.Lock, path string) []string {
	lines := lockChanges(old, l)
	if old != nil && len(lines) == 0 && repo.Inputs(old.Requires) == repo.Inputs(l.Requires) {
		return []string{path + " is up to date: " + LockCount(l)}
	}
	return append(lines, "wrote "+path+": "+LockCount(l))
}

// lockChanges describes, a line each, how the lockfile l differs from old (nil: none
// before): its repository, the index it records, and its packages by name and platform.
func lockChanges(old, l *repo.Lock) []string {
	var lines []string
	if old != nil && old.Repo != l.Repo {
		lines = append(lines, fmt.Sprintf("repository %s (was %s)", l.Repo, old.Repo))
	}
	if old != nil && repoNames(old) != repoNames(l) && len(l.Repos) > 0 {
		lines = append(lines, fmt.Sprintf("repositories %s (was %s)", repoNames(l), cmp.Or(repoNames(old), old.Repo)))
	}
	switch {
	case old == nil || l.Index == nil:
	case old.Index == nil:
		lines = append(lines, fmt.Sprintf("recorded index %s version %d, verified by key %s", l.Index.Name, l.Index.Version, strings.Join(l.Index.Keys, ", ")))
	case old.Index.Version != l.Index.Version || !slices.Equal(old.Index.Keys, l.Index.Keys):
		lines = append(lines, fmt.Sprintf("index %s version %d, verified by key %s (was version %d)", l.Index.Name, l.Index.Version, strings.Join(l.Index.Keys, ", "), old.Index.Version))
	}
	was := map[string]repo.Package{}
	if old != nil {
		for _, p := range old.Packages {
			was[p.Name+" "+p.Platform] = p
		}
	}
	for _, p := range l.Packages {
		key := p.Name + " " + p.Platform
		q, ok := was[key]
		switch {
		case !ok:
			lines = append(lines, fmt.Sprintf("locked %s %s%s", p.Name, p.Version, forPlatform(p)))
		case q.Version != p.Version:
			lines = append(lines, fmt.Sprintf("locked %s %s%s (was %s)", p.Name, p.Version, forPlatform(p), q.Version))
		case q.SHA256 != p.SHA256:
			lines = append(lines, fmt.Sprintf("locked %s %s%s (new archive)", p.Name, p.Version, forPlatform(p)))
		case q.Archive != p.Archive: // the repository moved, or the entry names another copy
			lines = append(lines, fmt.Sprintf("locked %s %s%s (same archive, now at %s)", p.Name, p.Version, forPlatform(p), termtext.WithoutCredentials(p.Archive)))
		}
		delete(was, key)
	}
	if old != nil {
		for _, p := range old.Packages {
			if _, ok := was[p.Name+" "+p.Platform]; ok {
				lines = append(lines, fmt.Sprintf("unlocked %s %s%s", p.Name, p.Version, forPlatform(p)))
			}
		}
	}
	return lines
}

// forPlatform is " for PLATFORM" for a lockfile's line of one platform, else "".
func forPlatform(p repo.Package) string {
	if p.Platform == "" {
		return ""
	}
	return " for " + p.Platform
}

// repoNames lists the repositories of a lock of several, "team, stable", or is "".
func repoNames(l *repo.Lock) string {
	var s []string
	for _, r := range l.Repos {
		s = append(s, r.Name)
	}
	return strings.Join(s, ", ")
}

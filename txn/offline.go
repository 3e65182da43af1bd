package txn

import (
	"fmt"
	"slices"
	"strings"

	"pkg/fetch"
	"pkg/repo"
)

// NotCachedError is the refusal of an offline change that needs archives the cache lacks:
// it names those packages, and for each what the cache holds in its place.
type NotCachedError struct {
	Missing []Missing
}

// Missing is a package the cache lacks.
type Missing struct {
	Package  repo.Package
	Archives []string // sha256s of the other archives of its name and version in the cache
	Versions []string // other versions of its name in the cache, newest first
	ByLock   bool     // its sha256 comes from a lockfile, not the index
}

func (e *NotCachedError) Error() string {
	s := make([]string, len(e.Missing))
	for i, m := range e.Missing {
		s[i] = m.text()
	}
	return "offline: not in the cache: " + strings.Join(s, ", ")
}

// text is "NAME VERSION", with what the cache holds in its place: other archives of it,
// and, for a package from the index, which may be asked for at another version, other
// versions.
func (m Missing) text() string {
	p := m.Package
	s := p.Name + " " + p.Version
	if len(m.Archives) > 0 {
		by, what := "the saved index", "another archive of it"
		if m.ByLock {
			by = "the lockfile"
		}
		if len(m.Archives) > 1 {
			what = "other archives of it"
		}
		short := make([]string, len(m.Archives))
		for i, sha := range m.Archives {
			short[i] = shortSHA(sha)
		}
		s += fmt.Sprintf(" (sha256 %s by %s; the cache holds %s %s with sha256 %s, %s)",
			shortSHA(p.SHA256), by, p.Name, p.Version, strings.Join(short, ", "), what)
	}
	if len(m.Versions) > 0 && !m.ByLock {
		s += fmt.Sprintf(" (the cache holds %s %s: ask for %s=%s)", p.Name, strings.Join(m.Versions, ", "), p.Name, m.Versions[0])
	}
	return s
}

// shortSHA shortens a sha256 to the digits a cache listing shows.
func shortSHA(sha string) string { return sha[:min(16, len(sha))] + "…" }

// checkCached returns a *NotCachedError unless cache holds every package of pkgs but those
// of local archive files (Origin), which are read, not fetched; byLock
// says their sha256s come from a lockfile.
func checkCached(cache *fetch.Cache, pkgs []repo.Package, byLock bool) error {
	var (
		missing []Missing
		entries []fetch.Entry
		listed  bool
	)
	for _, p := range pkgs {
		if cache.Has(p.SHA256) || p.Origin != "" { // a local archive file is read, not fetched
			continue
		}
		if !listed {
			entries, _ = cache.List() // only to explain: without it the message is shorter
			listed = true
		}
		missing = append(missing, missingFrom(p, entries, byLock))
	}
	if len(missing) > 0 {
		return &NotCachedError{Missing: missing}
	}
	return nil
}

func missingFrom(p repo.Package, entries []fetch.Entry, byLock bool) Missing {
	m := Missing{Package: p, ByLock: byLock}
	for _, e := range entries {
		switch {
		case e.Name != p.Name:
		case e.Version == p.Version && e.SHA256 != p.SHA256:
			m.Archives = append(m.Archives, e.SHA256)
		case e.Version != p.Version && !slices.Contains(m.Versions, e.Version):
			m.Versions = append(m.Versions, e.Version)
		}
	}
	slices.SortFunc(m.Versions, func(a, b string) int { return repo.CompareVersions(b, a) })
	return m
}

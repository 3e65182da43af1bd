package config

import (
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"pkg/internal/oci"
	"pkg/internal/termtext"
	"pkg/repo"
	"pkg/trust"
)

// Use returns the repositories a command uses, given these for it (each with its
// location as URLs[0] and where it was given as File), in the order names resolve from
// them: the given ones, then the configured ones not among them. A given location that is
// a configured repository's first URL (SameLocation) is that repository, with its name,
// mirrors and keys, and the given location's user information, if any, in its first URL;
// so is a given name that is a configured one's, if byName (a lockfile's record).
// Otherwise a given name takes the place of the configured repository of that name. A
// given repository without a name is named after its location, and a name taken already
// gets a suffix: "-2", "-3"... A name the user gave to a configured repository's location
// that is not that repository's name is a *ConflictError.
func (c *Config) Use(given []Repo, byName bool) ([]Repo, error) {
	var out []Repo
	taken := func(name string) bool {
		return slices.ContainsFunc(out, func(r Repo) bool { return r.Name == name })
	}
	for _, g := range given {
		i := slices.IndexFunc(c.Repos, func(r Repo) bool { return byName && r.Name == g.Name })
		if i < 0 {
			i = slices.IndexFunc(c.Repos, func(r Repo) bool { return SameLocation(r.URLs[0], g.URLs[0]) })
		}
		if i >= 0 {
			if !byName && g.Name != "" && g.Name != c.Repos[i].Name {
				return nil, &ConflictError{Given: g, Configured: c.Repos[i]}
			}
			g = c.Repos[i].withUser(g.URLs[0])
		}
		if g.Name == "" {
			g.Name, g.Naming = LocationName(g.URLs[0]), ByLocation
		}
		for n, base := 2, g.Name; taken(g.Name); n++ {
			g.Name = fmt.Sprintf("%s-%d", base, n)
		}
		out = append(out, g)
	}
	for _, r := range c.Repos {
		if !taken(r.Name) && !slices.ContainsFunc(out, func(o Repo) bool { return SameLocation(o.URLs[0], r.URLs[0]) }) {
			out = append(out, r)
		}
	}
	return out, nil
}

// ConflictError refuses a name given to the location of a configured repository of
// another name: a location is one repository, known by one name.
type ConflictError struct {
	Given      Repo // as given: its name, its location (URLs[0]) and where (File)
	Configured Repo // the configured repository at that location
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("repository %s (%s, from %s): that location is repository %s, configured in %s",
		e.Given.Name, termtext.WithoutCredentials(e.Given.URLs[0]), e.Given.File, e.Configured.Name, e.Configured.File)
}

// SameLocation reports whether the repository locations a and b are one: a file URL is
// its path, a URL's user information (the credential its requests send) does not count,
// nor does a trailing slash or index.json, and an oci reference is its registry,
// repository and tag, the default one written or not.
func SameLocation(a, b string) bool { return locationKey(a) == locationKey(b) }

func locationKey(loc string) string {
	u, err := url.Parse(loc)
	switch {
	case err == nil && u.Scheme == "file":
		loc = u.Path
	case err == nil && strings.HasPrefix(u.Scheme, oci.Scheme):
		if r, err := oci.ParseRef(u); err == nil {
			return r.String()
		}
		loc = termtext.WithoutUser(u)
	case err == nil && u.Host != "":
		loc = termtext.WithoutUser(u)
	}
	if filepath.IsAbs(loc) {
		loc = filepath.Clean(loc)
	}
	return strings.TrimRight(strings.TrimSuffix(loc, "/index.json"), "/")
}

// withUser returns r at its location with the user information of loc, the same location
// given with a credential, in place of its own; r itself where loc has none, or r's
// location no host to send it to (a directory: "/srv/r" would become "//user:pw@/srv/r").
func (r Repo) withUser(loc string) Repo {
	g, err := url.Parse(loc)
	if err != nil || g.User == nil {
		return r
	}
	u, err := url.Parse(r.URLs[0])
	if err != nil || u.Host == "" {
		return r
	}
	u.User = g.User
	r.URLs = slices.Concat([]string{u.String()}, r.URLs[1:])
	return r
}

// SplitRepo splits a repository given as [NAME=]LOCATION; a NAME that is not a valid
// repository name is part of the location.
func SplitRepo(s string) (name, location string) {
	name, location, ok := strings.Cut(s, "=")
	if !ok || !repo.ValidRepoName(name) {
		return "", s
	}
	return name, location
}

// LockRepos returns the repositories the lockfile l at path records, by name and URL; a
// lock of one names its repository only where the user named it (repo.Lock.Name).
func LockRepos(l *repo.Lock, path string) []Repo {
	var rs []Repo
	for _, r := range l.Repos {
		rs = append(rs, Repo{Name: r.Name, URLs: []string{r.URL}, File: "lockfile " + path, Lock: path, Naming: ByLock})
	}
	if len(rs) == 0 {
		rs = []Repo{{Name: l.Name, URLs: []string{l.Repo}, File: "lockfile " + path, Lock: path}}
		if l.Name != "" {
			rs[0].Naming = ByLock
		}
	}
	return rs
}

// LockUses returns the repository of rs (those in effect) each repository of the lockfile
// l is, by the name its packages give it (repo.Package.Repo; "" for a lock of one): the
// one of the same name, else the lockfile's record of it; for a lock of one, the first.
func LockUses(l *repo.Lock, rs []Repo) map[string]Repo {
	used := make(map[string]Repo)
	for _, lr := range l.Repos {
		r := Repo{Name: lr.Name, URLs: []string{lr.URL}}
		if i := slices.IndexFunc(rs, func(x Repo) bool { return x.Name == lr.Name }); i >= 0 {
			r = rs[i]
		}
		used[lr.Name] = r
	}
	if len(l.Repos) == 0 {
		used[""] = Repo{URLs: []string{l.Repo}}
		if len(rs) > 0 {
			used[""] = rs[0]
		}
	}
	return used
}

// Trust returns p trusting also the keys of r, which makes r's index need a signature.
func (r Repo) Trust(p trust.Policy) (trust.Policy, error) {
	for _, s := range r.Keys {
		k, err := trust.ParsePublicKey(s)
		if err != nil {
			return p, fmt.Errorf("repository %s (%s): key: %w", r.Name, r.File, err)
		}
		p = p.With(k)
	}
	return p, nil
}

// LocationName makes a repository name of a location: its last path element (an oci
// reference's without its tag), else its host, else "repo".
func LocationName(loc string) string {
	p := loc
	if u, err := url.Parse(loc); err == nil && u.Scheme != "" {
		p = strings.TrimSuffix(u.Path, "index.json")
		if strings.HasPrefix(u.Scheme, "oci") {
			p, _, _ = strings.Cut(strings.TrimSuffix(p, "/"), ":")
		}
		if strings.Trim(p, "/") == "" {
			p = u.Hostname()
		}
	}
	name := strings.ToLower(path.Base(strings.TrimSuffix(strings.TrimSuffix(p, "index.json"), "/")))
	if !repo.ValidRepoName(name) {
		return "repo"
	}
	return name
}

package repo

import (
	"fmt"
	"slices"

	"pkg/internal/units"
)

// Merge returns the indexes of several repositories, named names and highest priority
// first, as one index: each package name's entries are those of the first index that has
// the name (for any platform), or of the repository pins names for it (name → repository),
// and each entry's Repo is its repository's name. A pin to a repository not among names,
// or to one without the name, is a *pinError.
func Merge(names []string, ixs []*Index, pins map[string]string) (*Index, error) {
	out := &Index{Format: indexFormat}
	from := make(map[string]string) // package name → the repository serving it
	for name, r := range pins {
		i := slices.Index(names, r)
		if i < 0 {
			return nil, &pinError{Repo: r, Name: name, Repos: names}
		}
		if !slices.ContainsFunc(ixs[i].Packages, func(p Package) bool { return p.Name == name }) {
			return nil, &pinError{Repo: r, Name: name}
		}
		from[name] = r
	}
	for i, ix := range ixs {
		for _, p := range ix.Packages {
			if r, ok := from[p.Name]; !ok {
				from[p.Name] = names[i]
			} else if r != names[i] {
				continue
			}
			p.Repo = names[i]
			out.Packages = append(out.Packages, p)
		}
	}
	return out, nil
}

// pinError is a requirement pinned to a repository that is not in use (Repos lists those
// that are) or has no package of its name (Repos is nil).
type pinError struct {
	Repo, Name string
	Repos      []string
}

func (e *pinError) Error() string {
	if e.Repos != nil {
		return fmt.Sprintf("requirement %s/%s: no repository %s in use (%s)%s", e.Repo, e.Name, e.Repo,
			units.List(e.Repos, 0), DidYouMean(e.Repo, e.Repos))
	}
	return fmt.Sprintf("requirement %s/%s: repository %s has no package %s", e.Repo, e.Name, e.Repo, e.Name)
}

// PinGoneError is an installed package asked for from a repository (REPO/NAME) that is not
// in use, or that no longer offers its name (InUse), where Op needs that repository (a
// reinstall of the package, or an upgrade naming it).
type PinGoneError struct {
	Op, Name, Version string
	Repo              string // the repository it was asked from
	InUse             bool   // Repo is in use but has no package of the name
}

func (e *PinGoneError) Error() string {
	return fmt.Sprintf("%s %s: %s %s was asked for from repository %s, which %s", e.Op, e.Name, e.Name, e.Version, e.Repo, e.why())
}

// why says what became of the repository, after "which".
func (e *PinGoneError) why() string {
	if e.InUse {
		return "no longer offers it"
	}
	return "is not in use"
}

// A NotOfferedError refuses a reinstall of an installed package whose version the
// repositories in effect do not offer (any more).
type NotOfferedError struct {
	Name, Version, Kind string
	Repos               string // the repositories in effect, as "repository URL" or "repositories URL, ..."
	Cached              bool   // the cache holds the archive installed, as the caller found
	Err                 error  // the index's answer (*MissingError: no version of the name)
}

func (e *NotOfferedError) Error() string {
	s := fmt.Sprintf("reinstall %s %s: %s does not offer it: %v", e.Name, e.Version, e.Repos, e.Err)
	if e.Cached {
		s += "; the cache still holds the archive installed"
	}
	return s
}

func (e *NotOfferedError) Unwrap() error { return e.Err }

// Pins returns the repository each of reqs pins its name to, or nil for none. Two pins of
// one name to different repositories are an error.
func Pins(reqs []Requirement) (map[string]string, error) {
	var pins map[string]string
	for _, r := range reqs {
		if r.Repo == "" {
			continue
		}
		if pins == nil {
			pins = make(map[string]string)
		}
		if was, ok := pins[r.Name]; ok && was != r.Repo {
			return nil, &twoPinsError{r.Name, was, r.Repo}
		}
		pins[r.Name] = r.Repo
	}
	return pins, nil
}

// twoPinsError is ErrTwoPins for name, pinned to the repositories first and second.
type twoPinsError struct{ name, first, second string }

func (e *twoPinsError) Error() string {
	return fmt.Sprintf("%s is pinned to two repositories, %s and %s", e.name, e.first, e.second)
}

func (e *twoPinsError) Is(target error) bool { return target == ErrTwoPins }

package txn

import (
	"fmt"
	"strings"

	"pkg/fetch"
	"pkg/repo"
	"pkg/trust"
)

// Merge returns the indexes of several repositories, each read by ReadIndex and named,
// highest priority first, as one: its repo.Index is their merge (repo.Merge), each
// package knowing its repository, and its Source, Trust, Pin and NotKept are the first's.
// Of one, it returns that one.
func Merge(ixs []*Catalog) (*Catalog, error) {
	if len(ixs) == 1 {
		return ixs[0], nil
	}
	names, each := make([]string, len(ixs)), make([]*repo.Index, len(ixs))
	for i, ix := range ixs {
		names[i], each[i] = ix.Name, ix.Index
	}
	merged, err := repo.Merge(names, each, nil)
	if err != nil {
		return nil, err
	}
	first := *ixs[0]
	first.Index, first.repos, first.origin = merged, ixs, ""
	return &first, nil
}

// Repos returns the indexes ix is made of, highest priority first: ix alone, unless
// Merge made it of several.
func (ix *Catalog) Repos() []*Catalog {
	if ix.repos == nil {
		return []*Catalog{ix}
	}
	return ix.repos
}

// Sources returns the source of each repository of ix, by name: what a Fetcher fetches
// each package from (Package.Repo).
func (ix *Catalog) Sources() map[string]*fetch.Source {
	m := make(map[string]*fetch.Source)
	for _, r := range ix.Repos() {
		m[r.Name] = r.Source
	}
	if ix.repos == nil {
		m[""] = ix.Source // one repository's packages name none
	}
	return m
}

// indexFor returns the index to resolve reqs in: ix's, with the names reqs pin to a
// repository ("team/jq") taken from that repository (repo.Merge).
func (ix *Catalog) indexFor(reqs []repo.Requirement) (*repo.Index, error) {
	pins, err := repo.Pins(reqs)
	if err != nil || pins == nil {
		return ix.Index, err
	}
	var names []string
	var each []*repo.Index
	for _, r := range ix.Repos() {
		names, each = append(names, r.Name), append(each, r.Index)
	}
	merged, err := repo.Merge(names, each, pins)
	if err != nil {
		return nil, err
	}
	merged.Platform = ix.Index.Platform
	if ix.repos == nil { // one repository's packages name none
		for i := range merged.Packages {
			merged.Packages[i].Repo = ""
		}
	}
	return merged, nil
}

// Resolve is repo.Index.Resolve in ix.indexFor(reqs), its error naming the repositories
// of ix.
func (ix *Catalog) Resolve(reqs []repo.Requirement) ([]repo.Package, error) {
	in, err := ix.indexFor(reqs)
	if err == nil {
		var pkgs []repo.Package
		if pkgs, err = in.Resolve(reqs); err == nil {
			return pkgs, nil
		}
	}
	return nil, ix.about(err)
}

// ResolveInstalled is repo.Index.ResolveInstalled in ix.indexFor(reqs).
func (ix *Catalog) ResolveInstalled(installed []repo.Package, reqs []repo.Requirement, holds ...repo.Hold) ([]repo.Package, error) {
	in, err := ix.indexFor(reqs)
	if err != nil {
		return nil, err
	}
	return in.ResolveInstalled(installed, reqs, holds...)
}

// urls names the repositories of ix, for messages, or says there is none, and apart
// from them the local archive files whose indexes WithLocal added: their directories are
// no repository.
func (ix *Catalog) urls() string {
	var files, urls []string
	for _, r := range ix.Repos() {
		switch {
		case r.origin != "":
			files = append(files, r.origin)
		case r.Source != nil: // none: the installed packages as recorded (an offline reinstall)
			urls = append(urls, r.Source.URL())
		}
	}
	repos := "no repository in use"
	if len(urls) > 0 {
		repos = named("repository", "repositories", urls)
	}
	if len(files) == 0 {
		return repos
	}
	return named("local archive file", "local archive files", files) + "; " + repos
}

// named is list after one (a single item) or many.
func named(one, many string, list []string) string {
	if len(list) == 1 {
		return one + " " + list[0]
	}
	return many + " " + strings.Join(list, ", ")
}

// about names the repositories in err, an error resolving requirements against ix.
func (ix *Catalog) about(err error) error {
	return fmt.Errorf("%w (%s)", err, ix.urls())
}

// results returns how the index of each repository of ix passed the trust policy.
func (ix *Catalog) results() []trust.Result {
	var rs []trust.Result
	for _, r := range ix.Repos() {
		rs = append(rs, r.Trust)
	}
	return rs
}

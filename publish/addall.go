package publish

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"pkg/install"
	"pkg/repo"
)

// A NotAddedError is an add of several archives refused, by the archive Err names or by
// the repository directory Dir: none of them was added, Dir being as it was.
type NotAddedError struct {
	Dir string
	N   int // the archives given
	Err error
}

func (e *NotAddedError) Error() string {
	if errors.As(e.Err, new(inDir)) { // repo.AddAll's, which names Dir
		return fmt.Sprintf("%v: none of the %d archives was added", e.Err, e.N)
	}
	return fmt.Sprintf("%v: none of the %d archives was added to %s", e.Err, e.N, e.Dir)
}

// inDir is an error of repo.AddAll, whose message names the directory already.
type inDir struct{ error }

func (e inDir) Unwrap() error { return e.error }

func (e *NotAddedError) Unwrap() error { return e.Err }

// A NamelessError is an archive added among others that does not say its name and
// version: neither a .deb nor an npm tarball whose package.json has them. Only an archive
// added alone is given its entry otherwise.
type NamelessError struct{ Location string }

func (e *NamelessError) Error() string {
	return fmt.Sprintf("archive %s: no package name and version: it is neither a .deb nor an npm tarball whose package.json gives them", e.Location)
}

// AddAll adds the archives at locations, paths or http(s) URLs, to the repository
// directory dir, each as the entry it says of itself (Archive.Entry), all in one write of
// the index, signed with s unless s is nil (repo.AddAll). Every archive is read and
// checked as Add checks one before the directory changes; on any error none is added
// (*NotAddedError). Unless replace, a version the repository has with another archive or
// other metadata is refused (*repo.RepublishError). It returns what it did for each
// archive, in the order given, the dependencies missing from the index as it is after all
// were added.
func AddAll(ctx context.Context, dir string, locations []string, replace bool, s *repo.Signer) ([]*Added, error) {
	res, err := addAll(ctx, dir, locations, replace, s)
	if err != nil {
		return nil, &NotAddedError{Dir: dir, N: len(locations), Err: err}
	}
	return res, nil
}

func addAll(ctx context.Context, dir string, locations []string, replace bool, s *repo.Signer) ([]*Added, error) {
	as := make([]*Archive, 0, len(locations))
	defer func() {
		for _, a := range as {
			a.Close()
		}
	}()
	paths, pkgs := make([]string, len(locations)), make([]repo.Package, len(locations))
	for i, location := range locations {
		a, err := Open(ctx, location)
		if err != nil {
			return nil, err
		}
		as = append(as, a)
		if pkgs[i], err = a.entryAlone(); err != nil {
			return nil, err
		}
		paths[i] = a.Path
	}
	if testHookBeforeAdd != nil {
		testHookBeforeAdd()
	}
	added, err := repo.AddAll(ctx, dir, paths, pkgs, replace, s)
	if err != nil {
		return nil, inDir{err}
	}
	res := make([]*Added, len(as))
	for i, a := range as {
		res[i] = a.added(added.Packages[i], added.Replaced[i], added.Index)
		res[i].Meta, res[i].Created, res[i].Written, res[i].Dropped = added.Meta, added.Created, added.Written, added.Dropped
	}
	return res, nil
}

// entryAlone returns the entry a is added as among others: the one it says of itself
// (Entry), checked as Add checks it, of the URL a was downloaded from where it was; its
// errors name a.
func (a *Archive) entryAlone() (repo.Package, error) {
	p, err := a.Entry(repo.Package{}, false)
	if me := (*ManifestError)(nil); err != nil && !errors.As(err, &me) {
		err = wrapLocation(a.Location, err)
	}
	if err != nil {
		return p, err
	}
	if p.Name == "" || p.Version == "" {
		return p, &NamelessError{Location: a.Location}
	}
	if p, err = a.checkEntry(p); err != nil {
		return p, wrapLocation(a.Location, err)
	}
	p.InstalledSize, p.Files = a.Bytes, a.Stats.Files
	if a.Remote {
		p.Archive = a.Location
	}
	return p, nil
}

// added returns what adding a as the entry p did, p having replaced the entries replaced,
// the index's entries being index after the add.
func (a *Archive) added(p repo.Package, replaced, index []repo.Package) *Added {
	res := &Added{Scripts: a.scripts, Absent: a.absent, Package: p}
	for _, q := range replaced {
		if q.SHA256 != p.SHA256 || q.Summary != p.Summary || !q.SameEntry(p) { // the same, added again, replaces nothing
			res.Replaced = append(res.Replaced, q)
		} else {
			res.Again = true
		}
	}
	for _, d := range slices.Concat(p.Depends, p.Peers) {
		if !offered(index, d) {
			res.Missing = append(res.Missing, d)
		}
	}
	if len(p.Lib) == 0 {
		res.LibDirs = install.LibDirs(a.Members)
	}
	return res
}

// Package publish adds archives to a repository directory: it checks an archive against
// the entry it is added as, adds it (copied, or recorded at the URL it is published at),
// and says what the new entry may lack.
package publish

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"path"
	"slices"

	"pkg/fetch"
	"pkg/install"
	"pkg/internal/termtext"
	"pkg/repo"
)

// An Archive is one to add, read from a path or downloaded from an http(s) URL.
type Archive struct {
	Location string // as given, a URL without its user information, which its download alone used
	Path     string // where it is read from: Location, or a temporary download of it
	Remote   bool   // Location is a URL
	fetch.Contents
	cleanup func()
	scripts []string       // of an npm tarball, once Entry has read it: its lifecycle scripts
	absent  []repo.Command // of an npm tarball, once Entry has read it: the commands of its package.json whose files it lacks
}

// A DownloadError is an archive given by its URL that could not be downloaded (or kept
// while it was: a temporary file that could not be written): the URL is the publisher's
// to check, not a repository's or a lockfile's. Its message is Err's, which names the URL
// or the file.
type DownloadError struct {
	URL string // as given, without its user information
	Err error
}

func (e *DownloadError) Error() string { return e.Err.Error() }
func (e *DownloadError) Unwrap() error { return e.Err }

// Open reads the archive at location, a path or an http(s) URL (fetch.Local), until ctx is
// done, refusing anything an install would refuse (fetch.Inspect). A URL that cannot be downloaded is a
// *DownloadError. Close removes a download.
func Open(ctx context.Context, location string) (*Archive, error) {
	local, remote, cleanup, err := fetch.Local(ctx, location)
	if err != nil {
		if repo.IsURL(location) {
			err = &DownloadError{URL: termtext.WithoutCredentials(location), Err: err}
		}
		return nil, err
	}
	st, err := fetch.Inspect(ctx, local)
	if err != nil {
		cleanup()
		return nil, err
	}
	if u, err := url.Parse(location); err == nil && remote && u.User != nil {
		location = termtext.WithoutUser(u) // as an index records it and messages print it (docs/config.md#credentials)
	}
	return &Archive{Location: location, Path: local, Remote: remote, Contents: st, cleanup: cleanup}, nil
}

// Close removes the temporary download of a, if any.
func (a *Archive) Close() { a.cleanup() }

// Added is what Add did, or AddAll for one archive, and what the new entry may lack.
type Added struct {
	Scripts      []string           // of an npm package: the lifecycle scripts it declares, which pkg never runs (Archive.Entry)
	Absent       []repo.Command     // of an npm package: the commands its package.json names whose files it lacks, left out (Archive.Absent)
	Package      repo.Package       // the entry as added
	Meta         repo.Meta          // the index's, as signed (with a signer; as it was, where not Written)
	Created      bool               // the directory had no index.json
	Written      bool               // the index was written, and signed with a signer: not where the add left it as it was (repo.Added)
	Replaced     []repo.Package     // the entry of the same name, version and platform it replaced, where that one differed
	Again        bool               // the repository had this entry already, the same archive and metadata
	repo.Dropped                    // the archive of the entry replaced, where no entry names it now (repo.Added)
	Missing      []repo.Requirement // the entry's dependencies no alternative of which a package of the repository is named by or provides
	LibDirs      []string           // directories of shared libraries in the archive, if the entry names none
}

// Add adds a to the repository directory dir as the entry p, whose size, file count and
// commands' and library directories' spelling it sets, and signs the index with s unless
// s is nil. It refuses commands that cannot run and library directories not in a, and,
// unless replace, a name and version the repository has already with another archive or
// other metadata (*repo.RepublishError, checked under the directory's lock: repo.Add).
func Add(ctx context.Context, dir string, a *Archive, p repo.Package, replace bool, s *repo.Signer) (*Added, error) {
	p, err := a.checkEntry(p)
	if err != nil {
		return nil, fmt.Errorf("repo add %s %s: %w", p.Name, p.Version, err)
	}
	p.InstalledSize, p.Files = a.Bytes, a.Stats.Files
	if testHookBeforeAdd != nil {
		testHookBeforeAdd()
	}
	var added *repo.Added
	if a.Remote {
		added, err = repo.AddURL(ctx, dir, a.Location, a.Path, p, replace, s)
	} else {
		added, err = repo.Add(ctx, dir, a.Location, p, replace, s)
	}
	if err != nil {
		return nil, err
	}
	res := a.added(added.Package, added.Replaced, added.Index)
	res.Meta, res.Created, res.Written, res.Dropped = added.Meta, added.Created, added.Written, added.Dropped
	return res, nil
}

// testHookBeforeAdd, if set, runs in Add and ImportNPMLock once the archives are read,
// before the repository directory is locked.
var testHookBeforeAdd func()

// offered reports whether one of pkgs is named as one of d's alternatives, or provides
// that name.
func offered(pkgs []repo.Package, d repo.Requirement) bool {
	for alt := range d.Alternatives() {
		for _, q := range pkgs {
			if q.Name == alt.Name || slices.ContainsFunc(q.Provides, func(v repo.Requirement) bool { return v.Name == alt.Name }) {
				return true
			}
		}
	}
	return false
}

// checkEntry returns p with its commands' and library directories' spelling set
// (repo.Command.Clean, path.Clean), or an error if a member is where a root keeps pkg's
// own, a command cannot run or a library directory is not in a (install.CheckReserved,
// install.CheckRunnable, install.CheckLib).
func (a *Archive) checkEntry(p repo.Package) (repo.Package, error) {
	if err := install.CheckReserved(p, a.Members); err != nil {
		return p, err
	}
	p.Bin, p.Lib = slices.Clone(p.Bin), slices.Clone(p.Lib)
	for i := range p.Bin {
		p.Bin[i] = p.Bin[i].Clean()
	}
	for i := range p.Lib {
		p.Lib[i] = path.Clean(p.Lib[i])
	}
	if err := install.CheckRunnable(p.Bin, a.Members, len(p.Depends) > 0); err != nil {
		return p, err
	}
	return p, install.CheckLib(p.Lib, a.Members)
}

// npmNamedEntry returns p completed by npmEntry, and true, where a's top directory top
// holds a package.json with a name and a version; p and false where it holds none or one
// without them.
func (a *Archive) npmNamedEntry(p repo.Package, top string, keepSummary bool) (repo.Package, bool, error) {
	data, err := readManifest(a.Path, top+"/"+manifestName)
	if err != nil {
		return p, false, &ManifestError{Archive: a.Location, Member: top + "/" + manifestName, Err: err}
	}
	if data == nil || !npmNamed(data) {
		return p, false, nil
	}
	p, a.scripts, err = a.npmEntry(p, top, data, keepSummary)
	return p, true, err
}

// debRelations sets each relation of p that is nil from a's control file: Depends and
// Pre-Depends as its depends (where depends is true), Provides as its provides, Conflicts
// and Breaks as its conflicts, Replaces as its replaces (fetch.Control.Requirements).
func (a *Archive) debRelations(p *repo.Package, depends bool) error {
	for _, f := range []struct {
		list   *[]repo.Requirement
		fields []string
	}{
		{&p.Depends, []string{"Depends", "Pre-Depends"}},
		{&p.Provides, []string{"Provides"}},
		{&p.Conflicts, []string{"Conflicts", "Breaks"}},
		{&p.Replaces, []string{"Replaces"}},
	} {
		if *f.list != nil || f.list == &p.Depends && !depends {
			continue
		}
		var err error
		if *f.list, err = a.Control.Requirements(f.fields...); err != nil {
			return err
		}
	}
	return nil
}

// Entry returns p, the entry a is published as, completed from what a says of itself,
// each part where p has none (a nil list: its flag was not given). A .deb is of kind deb
// and gives, from its control file, its Package and Version, its Architecture's platform
// (debPlatform), its Description's first line as the summary
// (unless keepSummary), Depends and Pre-Depends as its depends, Provides as its provides,
// Conflicts and Breaks as its conflicts, Replaces as its replaces
// (fetch.Control.Requirements); from its tree,
// its commands (debCommands) and library directories (install.LibDirs).
//
// An npm tarball (every member in one top directory, package/ as npm packs it,
// TOP/package.json among them) whose package.json has a name and a version is an entry of
// kind npm (npmEntry); its lifecycle scripts are then in Scripts. Another of npm's layout
// (a package.json without them, or an archive neither gzip'd nor plain) gives Into
// (npmInto).
func (a *Archive) Entry(p repo.Package, keepSummary bool) (repo.Package, error) {
	if top, ok := npmTop(a.Members); ok {
		if p, ok, err := a.npmNamedEntry(p, top, keepSummary); ok || err != nil {
			return p, err
		}
	}
	p, err := a.named(p, keepSummary)
	if err != nil || a.Control == nil {
		return npmInto(p, a.Members), err
	}
	if err := a.debRelations(&p, true); err != nil {
		return p, err
	}
	if p.Bin == nil {
		p.Bin = debCommands(a.Members, len(p.Depends) > 0)
	}
	if p.Lib == nil {
		p.Lib = install.LibDirs(a.Members)
	}
	return p, nil
}

// named returns p completed from the control file of a, if a is a .deb: of kind deb,
// its Package and Version where p has no name or version (refused if pkg cannot hold them:
// fetch.Control.Check), its Architecture's platform where p has none (debPlatform), and,
// unless keepSummary, its Description's first line as the summary.
func (a *Archive) named(p repo.Package, keepSummary bool) (repo.Package, error) {
	if a.Control == nil {
		return p, nil
	}
	ctl := *a.Control
	ctl.Package, ctl.Version = cmp.Or(p.Name, ctl.Package), cmp.Or(p.Version, ctl.Version)
	if p.Name == "" || p.Version == "" {
		if err := ctl.Check(); err != nil {
			return p, err
		}
	}
	p.Name, p.Version, p.Kind = ctl.Package, ctl.Version, repo.KindDeb
	if p.Platform == "" {
		var err error
		if p.Platform, err = debPlatform(p.Name, p.Version, ctl.Architecture); err != nil {
			return p, err
		}
	}
	if !keepSummary {
		p.Summary = ctl.Description
	}
	return p, nil
}

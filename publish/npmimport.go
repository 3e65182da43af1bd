package publish

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"slices"

	"pkg/fetch"
	"pkg/repo"
)

// NPMImport says where ImportNPMLock takes a lock's tarballs from, and who signs.
type NPMImport struct {
	Cache    string       // npm's cache directory (NPMCache), "" for none
	Registry string       // where a package without a resolved URL is downloaded from (NPMRegistry)
	Offline  bool         // take every tarball from Cache, downloading none
	Replace  bool         // replace an entry of the same name and version that differs (else refused: *repo.RepublishError)
	Jobs     int          // downloads at once
	Signer   *repo.Signer // signs the index written, if not nil
}

// Imported is what ImportNPMLock did.
type Imported struct {
	Packages     []repo.Package            // the lock's packages, as the index holds them, by name and version
	New          []repo.Package            // those of them the index did not have
	Scripts      map[string][]string       // the lifecycle scripts each of New declares, by its Key (Added.Scripts)
	Absent       map[string][]repo.Command // the commands each of New leaves out, its package.json naming files its tarball lacks, by its Key (Added.Absent)
	Downloaded   int                       // how many were downloaded, not read from npm's cache or the repository
	Bundled      []string                  // the lock's bundled packages (keys), which come inside another's tarball
	Unused       []repo.Package            // the lock's packages the resolution of its project does not take
	Lock         *repo.Lock                // the lock of the project's requests, resolved among Packages
	Meta         repo.Meta                 // the index's, as signed (with a signer; as it was, where not Written)
	Created      bool                      // the directory had no index.json
	Written      bool                      // the index was written, and signed with a signer: not where the import left it as it was (repo.AddedAll)
	repo.Dropped                           // the archives of the entries replaced, where no entry names them now
}

// Reasons ImportNPMLock refuses a tarball a lock names.
var (
	errNamed  = errors.New("publish: its package.json names another package or version")
	errNotNPM = errors.New("publish: not an npm tarball (package.json with a name and a version)")
)

// ImportNPMLock adds to the repository directory dir every package the package-lock.json
// at lockPath names (lockfileVersion 2 or 3), each tarball read from npm's cache or from
// dir's own archive of it, else downloaded from its resolved URL (o.Registry's for one
// without), and refused unless its sha512 is the lock's integrity; each entry what its
// package.json says (Archive.Entry). It returns the pkg lock of the project's requests
// (its dependencies, devDependencies and optionalDependencies at the versions the lock
// has) resolved among them. The index is written once, at the end; on any error the
// directory is as it was (repo.AddAll). A second run adds and downloads nothing.
func ImportNPMLock(ctx context.Context, dir, lockPath string, o NPMImport) (*Imported, error) {
	l, err := readNPMLock(lockPath, o.Registry)
	if err != nil {
		return nil, err
	}
	before := repo.ReadDir(dir)
	got, err := npmFetcher{Cache: o.Cache, Have: archives(dir, before), Offline: o.Offline, Jobs: o.Jobs}.getAll(ctx, l.Tarballs)
	if le := (*NPMLockError)(nil); errors.As(err, &le) {
		le.Path = lockPath
	}
	if err != nil {
		return nil, err
	}
	defer removeGot(got)
	res := &Imported{Bundled: l.Bundled, Scripts: make(map[string][]string), Absent: make(map[string][]repo.Command)}
	pkgs, paths := make([]repo.Package, len(got)), make([]string, len(got))
	read := make(map[string]npmFound) // by name@version, an npm package's Key
	for i, g := range got {
		var f npmFound
		if pkgs[i], f, err = npmEntry(ctx, g, l.Tarballs[i]); err != nil {
			return nil, &NPMLockError{Path: lockPath, Key: l.Tarballs[i].Key, Err: err}
		}
		read[l.Tarballs[i].Name+"@"+l.Tarballs[i].Version] = f
		paths[i] = g.Path
		if g.From != "" {
			res.Downloaded++
		}
	}
	taken, err := resolveNPM(pkgs, l.Requires)
	if err != nil {
		return nil, &NPMLockError{Path: lockPath, Err: err}
	}
	if testHookBeforeAdd != nil {
		testHookBeforeAdd()
	}
	added, err := repo.AddAll(ctx, dir, paths, pkgs, o.Replace, o.Signer)
	if re := (*repo.RepublishError)(nil); errors.As(err, &re) {
		le := &NPMLockError{Path: lockPath, Err: err}
		if i := slices.IndexFunc(pkgs, re.Had.SameKey); i >= 0 {
			le.Key = l.Tarballs[i].Key
		}
		return nil, le
	}
	if err != nil {
		return nil, err
	}
	res.Packages, res.New, res.Meta, res.Created, res.Written, res.Dropped = added.Packages, added.New, added.Meta, added.Created, added.Written, added.Dropped
	for _, p := range res.New {
		res.Scripts[p.Key()], res.Absent[p.Key()] = read[p.Key()].scripts, read[p.Key()].absent
	}
	res.Lock, res.Unused, err = npmRepoLock(dir, res.Packages, taken, l.Requires)
	return res, err
}

// archives returns the local archive files of the npm packages of ix, the index of the
// repository dir, by name@version.
func archives(dir string, ix *repo.Index) map[string]string {
	have := make(map[string]string)
	for _, p := range ix.Packages {
		if p.Kind == repo.KindNPM && filepath.IsLocal(p.Archive) {
			have[p.Name+"@"+p.Version] = filepath.Join(dir, p.Archive)
		}
	}
	return have
}

// npmFound is what reading an npm tarball found beside its entry, which an import reports
// once the index is written: not the whole *Archive, whose member list is large.
type npmFound struct {
	scripts []string       // its lifecycle scripts
	absent  []repo.Command // the commands of its package.json whose files it lacks
}

// npmEntry returns the entry of the tarball g of t, what its package.json says, which must
// be t's name and version, and its scripts and absent commands.
func npmEntry(ctx context.Context, g gotTarball, t lockTarball) (repo.Package, npmFound, error) {
	st, err := fetch.Inspect(ctx, g.Path)
	if err != nil {
		return repo.Package{}, npmFound{}, err
	}
	a := &Archive{Location: cmp.Or(g.From, g.Path), Path: g.Path, Contents: st, cleanup: func() {}}
	p, err := a.Entry(repo.Package{}, false)
	switch {
	case err != nil:
		return p, npmFound{}, err
	case p.Kind != repo.KindNPM:
		return p, npmFound{}, fmt.Errorf("%w: %s %s from %s", errNotNPM, t.Name, t.Version, a.Location)
	case p.Name != t.Name || p.Version != t.Version:
		return p, npmFound{}, fmt.Errorf("%w: %s %s from %s is %s %s", errNamed, t.Name, t.Version, a.Location, p.Name, p.Version)
	}
	if p, err = a.checkEntry(p); err != nil {
		return p, npmFound{}, err
	}
	p.InstalledSize, p.Files = a.Bytes, a.Stats.Files
	u, _ := url.Parse(t.Resolved) // tarball checked it
	p.Archive = path.Base(u.Path) // npm's name for it, whose ending repo.AddAll keeps
	return p, npmFound{a.scripts, a.absent}, nil
}

// resolveNPM returns the packages of pkgs reqs resolve to among them, by name and version.
func resolveNPM(pkgs []repo.Package, reqs []repo.Requirement) ([]repo.Package, error) {
	return (&repo.Index{Format: 1, Packages: pkgs}).Resolve(reqs)
}

// npmRepoLock returns the lock of reqs resolved to taken among pkgs, the entries of the
// repository dir, and the packages of pkgs not taken. Where one taken is for one platform
// (an optional dependency npm picks by os and cpu), the lock is for this machine's alone,
// so that a sync elsewhere is refused, not short of that package's counterpart.
func npmRepoLock(dir string, pkgs, taken []repo.Package, reqs []repo.Requirement) (*repo.Lock, []repo.Package, error) {
	src, err := fetch.NewSource(dir, fetch.Options{})
	if err != nil {
		return nil, nil, err
	}
	var locked, unused []repo.Package
	for _, p := range pkgs {
		if !slices.ContainsFunc(taken, func(q repo.Package) bool { return q.Name == p.Name && q.Version == p.Version }) {
			unused = append(unused, p)
			continue
		}
		p.Archive = src.ArchiveURL(p)
		locked = append(locked, p)
	}
	if slices.ContainsFunc(locked, func(p repo.Package) bool { return p.Platform != "" }) {
		return repo.NewLockFor(src.URL(), reqs, map[string][]repo.Package{repo.Host: locked}), unused, nil
	}
	return repo.NewLock(src.URL(), reqs, locked), unused, nil
}

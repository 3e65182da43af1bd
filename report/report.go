// Package report defines what pkg prints as JSON: one documented type per command, each
// with a schema name and version, built from the records and results of the other
// packages, so that scripts do not depend on how the database stores them; and how each,
// and a txn.Plan, reads as text. It computes nothing of its own and writes only to the
// writer it is given.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"pkg/db"
	"pkg/install"
	"pkg/repo"
)

// The schemas, a name and a version: a change that can break a reader of a schema makes a
// new version of it; new fields do not.
const (
	ListSchema     = "pkg.list/1"
	InfoSchema     = "pkg.info/1"
	SearchSchema   = "pkg.search/1"
	FilesSchema    = "pkg.files/1"
	OutdatedSchema = "pkg.outdated/2"
	WhySchema      = "pkg.why/1"
	VerifySchema   = "pkg.verify/1"
	ReposSchema    = "pkg.repos/1"
)

// List is what is installed in a root (docs/json/list.md).
type List struct {
	Schema   string      `json:"schema"`
	Packages []Installed `json:"packages"`
}

// Installed is one installed package of a List.
type Installed struct {
	Name        string    `json:"name"`
	Version     string    `json:"version"`
	Kind        string    `json:"kind,omitempty"` // "npm" for an npm package, of which several versions may be installed, each listed
	Requested   bool      `json:"requested"`      // asked for, not only installed as a dependency
	Files       int       `json:"files"`
	Size        int64     `json:"size"`
	InstalledAt time.Time `json:"installed_at"`
	Origin      string    `json:"origin,omitempty"`     // the local archive file it was installed from
	Incomplete  bool      `json:"incomplete,omitempty"` // recorded by a repair without its dependencies, commands and libraries
}

// NewList is the List of recs, the installed packages, of which requested maps those the
// user asked for to their requirements (db.DB.Requested).
func NewList(recs []db.Record, requested map[string]repo.Requirement) List {
	l := List{Schema: ListSchema, Packages: make([]Installed, 0, len(recs))}
	for _, p := range recs {
		_, asked := requested[p.Key()]
		l.Packages = append(l.Packages, Installed{Name: p.Name, Version: p.Version, Kind: p.Kind, Requested: asked,
			Files: p.Files, Size: p.Size, InstalledAt: p.Installed.UTC(), Origin: p.Origin, Incomplete: p.Bare})
	}
	return l
}

// Info describes a package, installed or as the repository offers it (docs/json/info.md).
type Info struct {
	Schema      string     `json:"schema"`
	Name        string     `json:"name"`
	Version     string     `json:"version"`
	Kind        string     `json:"kind,omitempty"` // "npm" for an npm package, as in List
	Summary     string     `json:"summary,omitempty"`
	Depends     []string   `json:"depends,omitempty"`
	Provides    []string   `json:"provides,omitempty"`
	Conflicts   []string   `json:"conflicts,omitempty"`
	Replaces    []string   `json:"replaces,omitempty"`
	Into        string     `json:"into,omitempty"`
	Env         []string   `json:"env,omitempty"`
	Bin         []string   `json:"bin,omitempty"`
	Lib         []string   `json:"lib,omitempty"`
	Installed   bool       `json:"installed"`
	Requested   string     `json:"requested,omitempty"` // the requirement it was asked for by, if it was
	Held        bool       `json:"held,omitempty"`      // Requested has a version constraint, which upgrades keep it within
	InstalledAt *time.Time `json:"installed_at,omitempty"`
	Directory   string     `json:"directory,omitempty"` // where its files are (into, for a package with one)
	Files       int        `json:"files"`               // 0 for one not installed whose index entry does not say
	Size        int64      `json:"size"`                // bytes of its regular files, likewise
	ArchiveSize int64      `json:"archive_size,omitempty"`
	SHA256      string     `json:"sha256"` // of the archive
	Versions    []string   `json:"versions,omitempty"`
	Origin      string     `json:"origin,omitempty"` // the local archive file it was installed from
	// Incomplete says a repair recorded it without its dependencies, commands and
	// libraries: their fields are unknown, not empty.
	Incomplete bool `json:"incomplete,omitempty"`
}

// InstalledInfo is the Info of p, installed in dir, and requested by req ("" if it was
// installed only as a dependency), which holds it (txn.Holds) or not.
func InstalledInfo(p *db.Record, dir, req string, held bool) Info {
	at := p.Installed.UTC()
	return Info{Schema: InfoSchema, Name: p.Name, Version: p.Version, Kind: p.Kind, Summary: p.Summary,
		Depends: texts(p.Depends), Provides: texts(p.Provides), Conflicts: texts(p.Conflicts), Replaces: texts(p.Replaces), Into: p.Into, Env: p.Env,
		Bin: texts(p.Bin), Lib: p.Lib, Installed: true, Requested: req, Held: held, InstalledAt: &at,
		Directory: dir, Files: p.Files, Size: p.Size, SHA256: p.SHA256, Origin: p.Origin, Incomplete: p.Bare}
}

// OfferedInfo is the Info of p, an index entry of a package that is not installed, whose
// index offers versions, newest first.
func OfferedInfo(p repo.Package, versions []string) Info {
	return Info{Schema: InfoSchema, Name: p.Name, Version: p.Version, Kind: p.Kind, Summary: p.Summary,
		Depends: texts(p.Depends), Provides: texts(p.Provides), Conflicts: texts(p.Conflicts), Replaces: texts(p.Replaces), Into: p.Into, Env: p.Env,
		Bin: texts(p.Bin), Lib: p.Lib, Files: p.Files, Size: p.InstalledSize, ArchiveSize: p.Size, SHA256: p.SHA256, Versions: versions}
}

// texts returns each of xs as it is written (an index's depends and bin entries), nil for none.
func texts[T fmt.Stringer](xs []T) []string {
	if len(xs) == 0 {
		return nil
	}
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = x.String()
	}
	return s
}

// Search is what a repository offers that matches a word (docs/json/search.md).
type Search struct {
	Schema   string  `json:"schema"`
	Query    string  `json:"query"`
	Packages []Found `json:"packages"`
}

// Found is one package of a Search, at the version a new install takes.
type Found struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Summary   string `json:"summary,omitempty"`
	Installed string `json:"installed,omitempty"` // the version installed, if any
}

// NewSearch is the Search of found, the packages matching query (repo.Index.Search), with
// the versions of recs, the installed packages.
func NewSearch(query string, found []repo.Package, recs []db.Record) Search {
	s := Search{Schema: SearchSchema, Query: query, Packages: make([]Found, 0, len(found))}
	for _, p := range found {
		f := Found{Name: p.Name, Version: p.Version, Summary: p.Summary}
		if i := slices.IndexFunc(recs, func(r db.Record) bool { return r.Name == p.Name }); i >= 0 {
			f.Installed = recs[i].Version
		}
		s.Packages = append(s.Packages, f)
	}
	return s
}

// Files lists the files of an installed package (docs/json/files.md).
type Files struct {
	Schema  string `json:"schema"`
	Name    string `json:"name"`
	Version string `json:"version"`
	Files   []File `json:"files"`
}

// File is one path of Files: Path relative to the package's directory, InRoot where the
// root presents it (db.Record.InRoot).
type File struct {
	Path   string `json:"path"`
	InRoot string `json:"in_root"`
	Type   string `json:"type"` // "file", "dir", "symlink" or "hardlink"
	Mode   string `json:"mode"` // permission bits in octal, as "0755"
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"` // of a file's data, a hardlink target's, or a symlink's target
}

// fileTypes names the tar type flags db.File records.
var fileTypes = map[byte]string{'0': "file", '5': "dir", '2': "symlink", '1': "hardlink"}

// NewFiles is the Files of p, whose files are files.
func NewFiles(p *db.Record, files []db.File) Files {
	out := Files{Schema: FilesSchema, Name: p.Name, Version: p.Version, Files: make([]File, 0, len(files))}
	for _, f := range files {
		e := File{Path: f.Path, InRoot: p.InRoot(f.Path), Type: fileTypes[f.Type], Mode: fmt.Sprintf("%04o", f.Mode.Perm()), Size: f.Size}
		if f.SHA256 != ([32]byte{}) {
			e.SHA256 = fmt.Sprintf("%x", f.SHA256)
		}
		out.Files = append(out.Files, e)
	}
	return out
}

// Outdated lists the installed packages a repository has newer versions of, or the
// installed version from another archive or for a package recorded without its entry
// (docs/json/outdated.md).
type Outdated struct {
	Schema   string          `json:"schema"`
	Packages []OutdatedEntry `json:"packages"`
	// Omitted counts the npm instances with a Beside left out of Packages: not asked for,
	// kept by their dependents' ranges, a newer version of their name installed beside them.
	Omitted int `json:"omitted"`
}

// OutdatedEntry is one package of Outdated (repo.Outdated).
type OutdatedEntry struct {
	Name      string `json:"name"`
	Kind      string `json:"kind,omitempty"` // "npm" for an npm package, of which several versions may be installed, each listed
	Installed string `json:"installed"`
	Allowed   string `json:"allowed"`
	Newest    string `json:"newest"`
	Held      string `json:"held_by,omitempty"`        // the requirement it was asked for by that keeps it below newest
	Origin    string `json:"origin,omitempty"`         // the local archive file it was installed from, which keeps it
	HeldTo    string `json:"held_to,omitempty"`        // the repository it was asked from (REPO/NAME), where another has newer or it is unused
	Unused    bool   `json:"held_to_unused,omitempty"` // HeldTo is not in use or no longer offers it: upgrade keeps it
	// Republished: the repository's archive or entry of the installed version is another, which
	// an upgrade installs in its place
	Republished bool `json:"republished,omitempty"`
	// Bare: the package was recorded without its entry (a repair's), which an upgrade
	// records from the repository's
	Bare bool `json:"incomplete,omitempty"`
	// Beside: the newer version of its npm name installed beside it, where the ranges of
	// the packages depending on it keep it and it was not asked for
	Beside string `json:"beside,omitempty"`
}

// NewOutdated is the Outdated of found (repo.Index.Outdated): with all, every package of
// it; else those without a Beside, the others counted in Omitted.
func NewOutdated(found []repo.Outdated, all bool) Outdated {
	out := Outdated{Schema: OutdatedSchema, Packages: make([]OutdatedEntry, 0, len(found))}
	for _, o := range found {
		if o.Beside != "" && !all {
			out.Omitted++
			continue
		}
		out.Packages = append(out.Packages, OutdatedEntry(o))
	}
	return out
}

// Why says why a package is installed (docs/json/why.md).
type Why struct {
	Schema    string     `json:"schema"`
	Name      string     `json:"name"`
	Version   string     `json:"version"`
	Requested string     `json:"requested,omitempty"` // the requirement it was asked for by, if it was
	NeededBy  []string   `json:"needed_by"`           // installed packages that depend on it directly
	Chains    [][]string `json:"chains"`              // from each requested package that needs it, to it
}

// NewWhy is the Why of p, requested by req ("" if not), from repo.Why's result.
func NewWhy(p *db.Record, req string, neededBy []string, chains [][]string) Why {
	w := Why{Schema: WhySchema, Name: p.Name, Version: p.Version, Requested: req, NeededBy: neededBy, Chains: chains}
	if w.NeededBy == nil {
		w.NeededBy = []string{}
	}
	if w.Chains == nil {
		w.Chains = [][]string{}
	}
	return w
}

// WhyOf is the Why of key (db.Record.Key), one of recs, the root's installed packages, of
// which requested maps those the user asked for to their requirements (db.DB.Requested):
// the packages are named by their keys, an npm instance's NAME@VERSION.
func WhyOf(recs []db.Record, requested map[string]repo.Requirement, key string) Why {
	p, _ := db.Find(recs, key)
	neededBy, chains := repo.Why(db.Packages(recs), slices.Collect(maps.Keys(requested)), key)
	var req string
	if r, ok := requested[key]; ok {
		req = r.String()
	}
	return NewWhy(&p, req, neededBy, chains)
}

// Verify is the result of checking installed packages against their records
// (docs/json/verify.md).
type Verify struct {
	Schema   string    `json:"schema"`
	Packages int       `json:"packages"` // checked
	Files    int       `json:"files"`    // checked
	Problems []Problem `json:"problems"`
	// Refused is the repair verify --repair was refused (nothing was changed, nothing
	// checked); absent otherwise.
	Refused *Refusal `json:"repair_refused,omitempty"`
}

// Refusal is why a repair changed nothing: its error, and what it could not record again.
type Refusal struct {
	Error string `json:"error"`
	// Gone is the packages a sound database records whose trees are gone
	// (install.GoneError).
	Gone []GoneTree `json:"gone,omitempty"`
	// Unmatched is the trees of pkgs/ no package in the cache matches
	// (install.UnmatchedError).
	Unmatched []string `json:"unmatched,omitempty"`
}

// GoneTree is a recorded package whose tree is gone.
type GoneTree struct {
	Package string   `json:"package"`
	Version string   `json:"version"`
	Tree    string   `json:"tree"`
	By      []string `json:"by,omitempty"` // "NAME VERSION" of each package that depends on it
}

// Problem is one difference found (install.FileError), worded.
type Problem struct {
	Package     string `json:"package"`
	Version     string `json:"version"`
	Path        string `json:"path"`                  // "" for a dependency, which Requirement names
	InRoot      string `json:"in_root,omitempty"`     // a package's file: where the root has it (db.Record.InRoot)
	Requirement string `json:"requirement,omitempty"` // a dependency nothing installed meets
	Kind        string `json:"kind"`
	What        string `json:"what,omitempty"`
	Entry       string `json:"entry,omitempty"` // for a file cloned from a damaged cache entry (kind "damaged"), the sha256 of its archive
}

// newVerify is the Verify of checking pkgs packages with files files, which found ps.
func newVerify(pkgs, files int, ps []install.FileError) Verify {
	v := Verify{Schema: VerifySchema, Packages: pkgs, Files: files, Problems: make([]Problem, 0, len(ps))}
	for _, p := range ps {
		v.Problems = append(v.Problems, Problem{Package: p.Package, Version: p.Version, Path: p.Path, Requirement: p.Requirement,
			Kind: kindWord(p.Err), What: whatWords(p.Err), Entry: p.Entry})
	}
	return v
}

// Write writes v, one of this package's types, to w as indented JSON, with "<", ">" and
// "&" as they are ("lib>=1.0", not "lib\u003e=1.0").
func Write(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Repos is pkg repo list --json: the repositories a command uses, in the order names
// resolve from them.
type Repos struct {
	Schema string       `json:"schema"`
	Repos  []Repository `json:"repos"`
}

// Repository is one repository in effect and where it was given.
type Repository struct {
	Name     string   `json:"name"`
	URLs     []string `json:"urls"`      // the repository, then its mirrors
	Keys     []string `json:"keys"`      // trusted for it alone, as given
	KeysFrom []string `json:"keys_from"` // where each of Keys was given: From, or an earlier configuration file at its location
	Priority int      `json:"priority"`  // the configuration's; 0 for one given otherwise
	From     string   `json:"from"`      // "--repo", "PKG_REPO", a configuration file, or a lockfile
}

// NewRepos returns the report of repos, in their order.
func NewRepos(repos []Repository) Repos {
	r := Repos{Schema: ReposSchema, Repos: make([]Repository, 0, len(repos))}
	for _, x := range repos {
		x.URLs = nonNil(x.URLs)
		x.Keys = nonNil(x.Keys)
		x.KeysFrom = nonNil(x.KeysFrom)
		for len(x.KeysFrom) < len(x.Keys) {
			x.KeysFrom = append(x.KeysFrom, x.From)
		}
		r.Repos = append(r.Repos, x)
	}
	return r
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

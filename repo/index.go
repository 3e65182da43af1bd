// Package repo owns the repository index (format 1): its JSON encoding, package names,
// versions and requirements, and the resolution of requirements to packages.
//
// It does no network I/O: another package fetches an index's bytes and calls Parse.
// Add and Remove maintain an index in a local directory, and sign it given a Signer: the
// index's Meta (name, version, expiry) set inside the signed bytes and a detached
// signature, made by the caller's function, next to it in index.json.sig. This package
// neither makes nor checks signatures.
package repo

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"
	"unicode"

	"pkg/internal/termtext"
)

// MaxIndexSize bounds an index.json read from anywhere.
const MaxIndexSize = 64 << 20 // 64 MiB

// Limits on the numbers of an index entry or a lockfile line, which fetch and install
// count, add and allocate with. An archive's files hold at most 256 GiB in 2^20 members
// (package tarutil's limits); the archive itself gets room for a plain tar's headers.
const (
	maxSize          = 512 << 30 // 512 GiB: an archive, compressed or not
	maxInstalledSize = 256 << 30 // 256 GiB: the data of an archive's files
	maxFiles         = 1 << 20   // files of an archive
	maxIndexVersion  = 1<<53 - 1 // a signed index's version: the integers JSON keeps exact (RFC 7493)
)

// maxCommandLen bounds the name of a command, a file name in <root>/bin: a commit makes
// bin/.NAME.new first, and a file name is at most NAME_MAX, 255 bytes, on Linux
// (pathconf(3)). Package names (128 bytes) and versions (64) leave room in every name pkg
// makes of them, .pkg/saved/NAME-VERSION.N the longest.
const maxCommandLen = nameMax - len(".") - len(".new") // 250 bytes

const nameMax = 255 // bytes: NAME_MAX of Linux's filesystems

var _ = uint(nameMax - (maxNameLen + len("-") + maxVersionLen + len(".") + 20)) // .pkg/saved/NAME-VERSION.N, N a uint64

// A CommandTooLongError refuses a bin entry whose command's name is longer than
// maxCommandLen.
type CommandTooLongError struct {
	Package string // name@version
	Command string
}

func (e *CommandTooLongError) Error() string {
	return fmt.Sprintf("package %s: command %.40q... is %d bytes, over the limit of %d bytes (bin/.COMMAND.new must fit a file name's %d)",
		e.Package, e.Command, len(e.Command), maxCommandLen, nameMax)
}

// indexFormat is the one index format this package reads and writes.
const indexFormat = 1

// Index is a repository's index.json.
type Index struct {
	Format int `json:"format"` // always 1, the one format this package reads and writes
	Meta
	Packages []Package `json:"packages"`

	// Platform is the platform Resolve and the others resolve for, GOOS-GOARCH: they take
	// the entries for it and those for any. Empty means Host. It is not part of the JSON.
	Platform string `json:"-"`
}

// Meta is what an index says about itself. A signed index has all of it, inside the
// signed bytes; an unsigned one may have none.
type Meta struct {
	Name    string    `json:"name,omitempty"`    // the repository's name, a valid package name
	Version uint64    `json:"version,omitempty"` // grows by one with every signing
	Expires time.Time `json:"expires,omitzero"`  // after this the index is stale
}

// Package is one entry of an index: a version of a named package and its archive.
type Package struct {
	Name          string        `json:"name"`
	Version       string        `json:"version"`
	Kind          string        `json:"kind,omitempty"` // "" or KindNPM
	Archive       string        `json:"archive"`
	Size          int64         `json:"size"`
	SHA256        string        `json:"sha256"`
	Depends       []Requirement `json:"depends,omitempty"`  // each naming no repository
	Optional      []Requirement `json:"optional,omitempty"` // of KindNPM: its optionalDependencies, NAME@npm:RANGE
	Peers         []Requirement `json:"peers,omitempty"`    // of KindNPM: its peerDependencies not marked optional, NAME@npm:RANGE
	Bin           []Command     `json:"bin,omitempty"`
	Lib           []string      `json:"lib,omitempty"` // directories of shared libraries its and its dependents' commands run with
	Summary       string        `json:"summary,omitempty"`
	InstalledSize int64         `json:"installed_size,omitempty"`
	Files         int           `json:"files,omitempty"`
	Platform      string        `json:"platform,omitempty"`  // GOOS-GOARCH it runs on; empty: any
	Provides      []Requirement `json:"provides,omitempty"`  // virtual names it also meets, each bare or "NAME=V"
	Conflicts     []Requirement `json:"conflicts,omitempty"` // packages it cannot be installed with (Debian's Conflicts and Breaks)
	Replaces      []Requirement `json:"replaces,omitempty"`  // packages whose files it may take over (Debian's Replaces)
	Into          string        `json:"into,omitempty"`      // the directory of the root its one top-level directory is placed at; "": its paths as they are
	Env           []string      `json:"env,omitempty"`       // NAME=VALUE its commands run with ({root}: the root's path), as CheckEnv allows

	// Repo names the repository the entry comes from in an index of several (Merge); ""
	// in one repository's. It is not part of the index's JSON.
	Repo string `json:"-"`
	// Origin is the local archive file, an absolute path, of an entry that stands for one
	// (pkg install ./FILE); "" for a repository's. It is not part of the index's JSON.
	Origin string `json:"-"`
	// Bare is an entry that stands for a record a repair made without the package's
	// entry (db.Record.Bare): its relations, commands and libraries are unknown, and a
	// record made from it says so again. It is not part of the index's JSON.
	Bare bool `json:"-"`
}

// KindNPM is the Kind of an npm package, a tarball whose package/package.json Add read:
// its versions are semver (CompareNPMVersions), its relations npm ranges over npm
// packages ("debug@npm:^4.3.1"), several of its versions may be installed in one root,
// each an instance (Key), and install places it in a node_modules layout, not by Into.
const KindNPM = "npm"

// KindDeb is the Kind of a Debian package, a .deb whose control file Add read: its
// versions and their constraints are ordered as dpkg orders them (compareDebian), and the
// newest version is taken whatever it holds, as apt takes it: "~" and "-" begin no
// pre-release.
const KindDeb = "deb"

// Key returns what names p installed among a root's packages, its instance: its name, or
// NAME@VERSION for KindNPM, of which a root may hold several versions.
func (p Package) Key() string { return InstanceKey(p.Kind, p.Name, p.Version) }

// InstanceKey is Package.Key of a package of kind named name at version.
func InstanceKey(kind, name, version string) string {
	if kind == KindNPM {
		return name + "@" + version
	}
	return name
}

// CompareVersion orders p's version and q's, both of p's kind: CompareNPMVersions for
// KindNPM, dpkg's order for KindDeb (ties of spelling bytewise), else CompareVersions.
func (p Package) CompareVersion(q Package) int { return compareFor(p.Kind, p.Version, q.Version) }

func compareFor(kind, a, b string) int {
	switch kind {
	case KindNPM:
		return CompareNPMVersions(a, b)
	case KindDeb:
		return cmp.Or(compareDebian(a, b), strings.Compare(a, b))
	}
	return CompareVersions(a, b)
}

// Parse decodes and validates an index (format must be 1; unknown fields ignored).
// It refuses data larger than MaxIndexSize and names the first invalid entry.
func Parse(data []byte) (*Index, error) {
	ix, err := parse(data)
	if err != nil {
		return nil, indexError(err)
	}
	return ix, nil
}

// NewIndex returns the index of pkgs, each checked as Parse checks an entry.
func NewIndex(pkgs ...Package) (*Index, error) {
	ix := &Index{Format: indexFormat, Packages: slices.Clone(pkgs)}
	if err := ix.check(); err != nil {
		return nil, err
	}
	return ix, nil
}

// ParseMeta decodes only the format and the Meta of an index: what a verifier checks
// before it trusts the rest. It refuses what Parse refuses in them.
func ParseMeta(data []byte) (Meta, error) {
	m, err := parseMeta(data)
	if err != nil {
		return Meta{}, indexError(err)
	}
	return m, nil
}

func parseMeta(data []byte) (Meta, error) {
	if err := checkSize(data); err != nil {
		return Meta{}, err
	}
	var head struct {
		Format int `json:"format"`
		Meta
	}
	if err := json.Unmarshal(data, &head); err != nil {
		if ferr := checkFormat(data); ferr != nil {
			return Meta{}, ferr
		}
		return Meta{}, fmt.Errorf("index: %v", jsonError(data, err))
	}
	if err := formatIs(head.Format); err != nil {
		return Meta{}, err
	}
	return head.Meta, head.Meta.check()
}

// parse decodes data in one pass; where it does not decode, the format, read alone
// (checkFormat), says first whether it is an index of another format.
func parse(data []byte) (*Index, error) {
	if err := checkSize(data); err != nil {
		return nil, err
	}
	var ix Index
	if err := json.Unmarshal(data, &ix); err != nil {
		if ferr := checkFormat(data); ferr != nil {
			return nil, ferr
		}
		if err := relationsError(data); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("index: %v", jsonError(data, err))
	}
	if err := formatIs(ix.Format); err != nil {
		return nil, err
	}
	if err := ix.Meta.check(); err != nil {
		return nil, err
	}
	if err := ix.check(); err != nil {
		return nil, err
	}
	return &ix, nil
}

// indexError is err of Parse or ParseMeta: an ErrIndex that says what is wrong.
func indexError(err error) error {
	return &reasonError{msg: err.Error(), reason: ErrIndex, cause: err}
}

// checkSize refuses an index over MaxIndexSize, before anything decodes it.
func checkSize(data []byte) error {
	if len(data) > MaxIndexSize {
		return &reasonError{msg: fmt.Sprintf("index is %d bytes, over the %d-byte limit", len(data), MaxIndexSize), reason: ErrLimit}
	}
	return nil
}

// checkFormat checks the format of an index that did not decode, reading it alone: a newer
// index whose fields changed shape is reported as such and not as a decoding error.
func checkFormat(data []byte) error {
	var head struct{ Format int }
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("index: %v", jsonError(data, err))
	}
	return formatIs(head.Format)
}

// formatIs refuses an index format other than the one this package reads.
func formatIs(format int) error {
	if format != indexFormat {
		return fmt.Errorf("index %w", &FormatError{Format: format, Newest: indexFormat})
	}
	return nil
}

func (m *Meta) check() error {
	switch {
	case m.Name != "" && !validRepoName(m.Name):
		return badRepoName(m.Name)
	case m.Version > maxIndexVersion:
		return &reasonError{msg: fmt.Sprintf("index version %d is over the limit of %d", m.Version, uint64(maxIndexVersion)), reason: ErrLimit}
	}
	return nil
}

func badRepoName(s string) error {
	return fmt.Errorf("bad repository name %.40q (want [a-z0-9][a-z0-9._+-]*, at most %d bytes)", s, maxNameLen)
}

// check validates every entry and normalizes empty lists to nil.
func (ix *Index) check() error {
	seen := make(map[string]bool, len(ix.Packages))
	for i := range ix.Packages {
		p := &ix.Packages[i]
		if !validName(p.Name) {
			return fmt.Errorf("index packages[%d]: %v", i, badName(p.Name))
		}
		normalize(p)
		if err := checkPackage(p); err != nil {
			return err
		}
		key := p.id() + " " + p.Platform
		if seen[key] {
			return &reasonError{msg: fmt.Sprintf("package %s: listed twice", p.what()), reason: ErrDuplicate}
		}
		seen[key] = true
	}
	return nil
}

// relationsError returns the error of the first entry of an index that failed to decode
// whose depends, provides, conflicts or replaces does not parse, worded with the entry,
// or nil.
func relationsError(data []byte) error {
	var ix struct {
		Packages []struct {
			Name, Version                                           string
			Depends, Optional, Peers, Provides, Conflicts, Replaces []string
		}
	}
	if json.Unmarshal(data, &ix) != nil {
		return nil
	}
	for _, p := range ix.Packages {
		for _, l := range []struct {
			field string
			reqs  []string
		}{{"depends", p.Depends}, {"optional", p.Optional}, {"peers", p.Peers}, {"provides", p.Provides}, {"conflicts", p.Conflicts}, {"replaces", p.Replaces}} {
			for _, d := range l.reqs {
				if _, err := parseRequirement(d); err != nil {
					return fmt.Errorf("package %s@%s: %s: %v", p.Name, p.Version, l.field, err)
				}
			}
		}
	}
	return nil
}

// normalize makes empty lists nil, as they are after a JSON round trip.
func normalize(p *Package) {
	for _, l := range []*[]Requirement{&p.Depends, &p.Optional, &p.Peers, &p.Provides, &p.Conflicts, &p.Replaces} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	if len(p.Bin) == 0 {
		p.Bin = nil
	}
	if len(p.Lib) == 0 {
		p.Lib = nil
	}
	if len(p.Env) == 0 {
		p.Env = nil
	}
	if p.Kind == "" && debArchive(p.Archive) {
		p.Kind = KindDeb
	}
}

// debArchive reports whether archive, an entry's archive (a path or URL), is a .deb: an
// entry of one is KindDeb whatever its kind says, so that an index or lockfile written by
// an older pkg, or for one, orders its versions as dpkg does. Indexes and lockfiles never
// write KindDeb (writtenKind), which an older pkg refuses as a kind it does not know.
func debArchive(archive string) bool {
	if u, err := url.Parse(archive); err == nil && u.Scheme != "" {
		archive = u.Path
	}
	return strings.HasSuffix(archive, ".deb")
}

// writtenKind is the kind an index or lockfile writes for kind: none for KindDeb, which
// the archive's name says (debArchive).
func writtenKind(kind string) string {
	if kind == KindDeb {
		return ""
	}
	return kind
}

// SameRelations reports whether p and q have the same kind, depends, optional, peers,
// provides, conflicts, replaces, into and env, spelled the same. KindDeb is none's
// equal, as indexes do not write it (writtenKind): a record of a .deb installed before
// pkg knew the kind says none, and its archive is the index's all the same.
func (p Package) SameRelations(q Package) bool {
	eq := func(a, b []Requirement) bool { return slices.EqualFunc(a, b, Requirement.Equal) }
	return writtenKind(p.Kind) == writtenKind(q.Kind) && eq(p.Depends, q.Depends) && eq(p.Optional, q.Optional) && eq(p.Peers, q.Peers) &&
		eq(p.Provides, q.Provides) && eq(p.Conflicts, q.Conflicts) &&
		eq(p.Replaces, q.Replaces) && p.Into == q.Into && slices.Equal(p.Env, q.Env)
}

// SameEntry reports whether p and q say the same of their archive's install: the same
// relations (SameRelations), commands and library directories.
func (p Package) SameEntry(q Package) bool {
	return p.SameRelations(q) && slices.Equal(p.Bin, q.Bin) && slices.Equal(p.Lib, q.Lib)
}

// id is name@version, for messages; the name must be valid.
func (p *Package) id() string { return p.Name + "@" + p.Version }

// what is id and, for an entry of one platform, the platform: "jq@1.7 for linux-arm64".
func (p *Package) what() string {
	if p.Platform == "" {
		return p.id()
	}
	return p.id() + " for " + p.Platform
}

// checkPackage validates an entry whose name is valid.
func checkPackage(p *Package) error {
	if err := checkMeta(p); err != nil {
		return err
	}
	if !validSHA256(p.SHA256) {
		return fmt.Errorf("package %s: sha256 %q is not 64 lowercase hex digits", p.id(), p.SHA256)
	}
	return nil
}

// checkMeta validates what Add knows before it reads the archive: everything but the
// sha256 (Add's size is 0 until then).
func checkMeta(p *Package) error {
	if err := checkKindVersion(p); err != nil {
		return err
	}
	switch {
	case p.Archive == "":
		return fmt.Errorf("package %s: no archive", p.id())
	case !validArchive(p.Archive):
		return &archiveError{p.Archive, fmt.Sprintf("package %s: archive %q is neither a clean relative path nor an http(s) URL", p.id(), p.Archive)}
	case p.Platform != "" && CheckPlatform(p.Platform) != nil:
		return fmt.Errorf("package %s: %w", p.id(), CheckPlatform(p.Platform))
	case strings.ContainsFunc(p.Summary, unicode.IsControl):
		// pkg prints it: an escape sequence could rewrite the user's terminal.
		return fmt.Errorf("package %s: summary %s has control characters", p.id(), termtext.Quote(p.Summary))
	}
	if err := checkNumbers(p); err != nil {
		return err
	}
	return checkLists(p)
}

// checkNumbers refuses a size, installed_size or files that is negative or past its limit.
// It formats nothing for a package that passes: an index checks every one.
func checkNumbers(p *Package) error {
	for _, n := range [...]struct {
		field  string
		v, max int64
		shift  int // max>>shift in unit
		unit   string
	}{
		{"size", p.Size, maxSize, 30, "GiB"},
		{"installed_size", p.InstalledSize, maxInstalledSize, 30, "GiB"},
		{"files", int64(p.Files), maxFiles, 0, "files"},
	} {
		switch {
		case n.v < 0:
			return fmt.Errorf("package %s: negative %s %d", p.id(), n.field, n.v)
		case n.v > n.max:
			return &reasonError{msg: fmt.Sprintf("package %s: %s %d is over the limit of %d %s", p.id(), n.field, n.v, n.max>>n.shift, n.unit), reason: ErrLimit}
		}
	}
	return nil
}

func checkLists(p *Package) error {
	if err := checkRelations(p); err != nil {
		return err
	}
	commands := make(map[string]Command, len(p.Bin)) // name in bin/ → its entry
	for _, b := range p.Bin {
		cmd, file := b.Name, b.Path
		switch {
		case !validLocal(file):
			return fmt.Errorf("package %s: bin %q: %q is not a clean relative path inside the package", p.id(), b, file)
		case cmd == "" || strings.ContainsFunc(cmd, unicode.IsControl) || strings.Contains(cmd, `\`):
			return fmt.Errorf("package %s: bin %q: bad command name %q", p.id(), b, cmd)
		case strings.HasPrefix(cmd, "."):
			return fmt.Errorf("package %s: bin %q: a command's name may not start with a dot (pkg names its own temporary links so)", p.id(), b)
		case len(cmd) > maxCommandLen:
			return &CommandTooLongError{Package: p.id(), Command: cmd}
		}
		if other, ok := commands[cmd]; ok {
			return fmt.Errorf("package %s: bin %q and %q would both be the command %s", p.id(), other, b, cmd)
		}
		commands[cmd] = b
	}
	for i, l := range p.Lib {
		switch {
		case !validLocal(l):
			return fmt.Errorf("package %s: lib %q is not a clean relative path inside the package", p.id(), l)
		case strings.ContainsAny(l, ":;"):
			// LD_LIBRARY_PATH separates its directories by either (ld.so(8)).
			return fmt.Errorf("package %s: lib %q: a library directory may not hold ':' or ';'", p.id(), l)
		case slices.Contains(p.Lib[:i], l):
			return fmt.Errorf("package %s: lib %q listed twice", p.id(), l)
		}
	}
	return nil
}

// checkKindVersion validates an entry's kind and its version, semver for KindNPM.
func checkKindVersion(p *Package) error {
	check := checkVersion
	switch p.Kind {
	case "", KindDeb:
	case KindNPM:
		check = CheckNPMVersion
	default:
		return fmt.Errorf("package %q: unknown kind %q (want none, %q or %q)", p.Name, p.Kind, KindNPM, KindDeb)
	}
	if p.Kind != KindNPM && capitalized(p.Name) {
		return &valueError{ErrName, p.Name, fmt.Sprintf("package %q: a name with capitals is an old npm package's, taken for kind %q alone", p.Name, KindNPM)}
	}
	if err := check(p.Version); err != nil {
		return fmt.Errorf("package %q: %v", p.Name, err)
	}
	return nil
}

// checkRelations validates an entry's depends, optional, peers, provides, conflicts and
// replaces (see checkRelation) and its into.
func checkRelations(p *Package) error {
	for _, l := range []struct {
		field string
		reqs  []Requirement
	}{{"depends", p.Depends}, {"optional", p.Optional}, {"peers", p.Peers}, {"provides", p.Provides}, {"conflicts", p.Conflicts}, {"replaces", p.Replaces}} {
		for _, r := range l.reqs {
			if err := checkRelation(l.field, r); err != nil {
				return fmt.Errorf("package %s: %s: %v", p.id(), l.field, err)
			}
			if err := checkNPMRelation(p, l.field, r); err != nil {
				return fmt.Errorf("package %s: %s: %v", p.id(), l.field, err)
			}
		}
	}
	if p.Kind == KindNPM && p.Into != "" {
		return fmt.Errorf("package %s: into %q: an npm package is placed by the node_modules layout", p.id(), p.Into)
	}
	if p.Into != "" {
		if err := CheckInto(p.Into); err != nil {
			return fmt.Errorf("package %s: %w", p.id(), err)
		}
	}
	seen := make(map[string]bool, len(p.Env))
	for _, e := range p.Env {
		if err := CheckEnv(e); err != nil {
			return fmt.Errorf("package %s: %w", p.id(), err)
		}
		name, _, _ := strings.Cut(e, "=")
		if seen[name] {
			return fmt.Errorf("package %s: %w", p.id(), &EnvError{Entry: e, Reason: "sets " + name + " twice"})
		}
		seen[name] = true
	}
	return nil
}

// maxEnvLen bounds an env entry: it is written into a script in bin/.
const maxEnvLen = 4096

// An EnvError refuses an env entry of a package.
type EnvError struct {
	Entry  string
	Reason string
}

func (e *EnvError) Error() string { return fmt.Sprintf("env %.80q: %s", e.Entry, e.Reason) }

// CheckEnv reports why entry cannot be an env entry: it must be NAME=VALUE, NAME a shell
// variable's name ([A-Za-z_][A-Za-z0-9_]*) other than LD_LIBRARY_PATH and PATH, which pkg
// sets or leaves to the user, VALUE without control characters, the whole at most 4 KiB.
// "{root}" in VALUE stands for the root's absolute path: MAGIC={root}/usr/share/misc/magic.mgc.
func CheckEnv(entry string) error {
	name, value, ok := strings.Cut(entry, "=")
	switch {
	case !ok:
		return &EnvError{entry, "not NAME=VALUE"}
	case len(entry) > maxEnvLen:
		return &EnvError{entry, fmt.Sprintf("%d bytes, over %d", len(entry), maxEnvLen)}
	case !envName(name):
		return &EnvError{entry, "the name is not a shell variable's ([A-Za-z_][A-Za-z0-9_]*)"}
	case name == "LD_LIBRARY_PATH" || name == "PATH":
		return &EnvError{entry, name + " is not a package's to set (pkg sets LD_LIBRARY_PATH from lib; PATH is the user's)"}
	case strings.ContainsFunc(value, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return &EnvError{entry, "the value holds a control character"}
	}
	return nil
}

func envName(s string) bool {
	if s == "" || isDigit(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// checkRelation validates a requirement of an entry's field: one that parses, as a
// constructed one may not, and names no repository (the user's configuration names them,
// not the publisher). Only depends has alternatives, and a provides is "NAME" or
// "NAME=V".
func checkRelation(field string, r Requirement) error {
	s := r.String()
	if q, err := parseRequirement(s); err != nil {
		return err
	} else if !q.Equal(r) {
		return fmt.Errorf("requirement %q reads otherwise once written", s)
	}
	switch {
	case r.Repo != "":
		return fmt.Errorf("requirement %q names a repository", s)
	case len(r.Or) > 0 && field != "depends":
		return fmt.Errorf("%q: alternatives are allowed only in depends", s)
	case field == "provides" && len(r.Constraints) > 0 && providedVersion(r) == "":
		return fmt.Errorf("%q: a provides is a name, or a name, \"=\" and a version", s)
	}
	return nil
}

// checkNPMRelation refuses r, of p's field, where the kinds disagree: an npm package's
// depends, optional and peers are npm requirements ("NAME@npm:RANGE"), and only an npm
// package has optional and peers.
func checkNPMRelation(p *Package, field string, r Requirement) error {
	_, npm := r.NPMRange()
	switch {
	case p.Kind != KindNPM && (field == "optional" || field == "peers"):
		return fmt.Errorf("%q: only an npm package has %s", r, field)
	case p.Kind == KindNPM && (field == "depends" || field == "optional" || field == "peers") && !npm:
		return fmt.Errorf("%q: an npm package's %s are NAME@npm:RANGE", r, field)
	case npm && field != "depends" && field != "optional" && field != "peers":
		return fmt.Errorf("%q: an npm range is not allowed in %s", r, field)
	case p.Kind != KindNPM && (capitalized(r.Name) || slices.ContainsFunc(r.Or, func(a Requirement) bool { return capitalized(a.Name) })):
		return fmt.Errorf("%q: a name with capitals is an old npm package's, named by a package of kind %q alone", r, KindNPM)
	}
	return nil
}

// An IntoError refuses the into of an entry: not a clean relative path inside the
// root, or one in pkg's own top-level directories (.pkg, pkgs).
type IntoError struct{ Into string }

func (e *IntoError) Error() string {
	return fmt.Sprintf("into %q is not a clean relative path inside the root, outside .pkg and pkgs", e.Into)
}

// CheckInto reports why into, the into of a package, cannot be: it must be a clean
// relative slash path inside the root whose first component is neither ".pkg" nor
// "pkgs", pkg's own.
func CheckInto(into string) error {
	top, _, _ := strings.Cut(into, "/")
	if !validLocal(into) || top == ".pkg" || top == "pkgs" {
		return &IntoError{Into: into}
	}
	return nil
}

func validSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !('0' <= s[i] && s[i] <= '9' || 'a' <= s[i] && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// validArchive reports whether a is an absolute http(s) URL with a host, or a local path
// that means the same as a file path and as a URL reference relative to the index: it
// holds none of the bytes that URL resolution treats specially (":?#%").
func validArchive(a string) bool {
	if IsURL(a) {
		u, err := url.Parse(a)
		return err == nil && u.Host != ""
	}
	return validLocal(a) && !strings.ContainsAny(a, ":?#%")
}

// IsURL reports whether an archive's location is an http(s) URL, not a file: an entry's,
// or one given to be added or inspected.
func IsURL(archive string) bool {
	return strings.HasPrefix(archive, "http://") || strings.HasPrefix(archive, "https://")
}

// validLocal reports whether p is a clean relative slash path that stays inside its
// directory (filepath.IsLocal semantics), other than ".", with no backslash or control byte.
func validLocal(p string) bool {
	if p == "" || p == "." || path.Clean(p) != p || path.IsAbs(p) {
		return false
	}
	if p == ".." || strings.HasPrefix(p, "../") {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] < 0x20 || p[i] == 0x7f || p[i] == '\\' {
			return false
		}
	}
	return true
}

// jsonError says where in data the JSON error err is, by line and column, when it can.
func jsonError(data []byte, err error) error {
	var off int64
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case err.Error() == "unexpected end of JSON input": // encoding/json has no value for it
		return fmt.Errorf("JSON ends early, after %d bytes (truncated?)", len(data))
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	default:
		return err
	}
	before := data[:min(max(off, 0), int64(len(data)))]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Errorf("line %d, column %d: %v", line, col, err)
}

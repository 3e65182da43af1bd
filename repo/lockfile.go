package repo

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"pkg/internal/durable"
	"pkg/internal/regfile"
	"pkg/internal/units"
)

// lockFormat is the one lockfile format this package writes and reads: a lock of one
// repository or several, for any platform or some.
const lockFormat = 1

// maxLockSize bounds a lockfile read from anywhere.
const maxLockSize = 16 << 20 // 16 MiB

// Lock is a lockfile: what a set of requirements resolved to, exactly, so that installing
// it needs neither the index nor a resolution. Each package's Archive is the absolute URL
// of its archive (http, https or file), and its Size and SHA256 are what that URL must
// serve.
//
// A lock for some platforms (Platforms) holds one resolution for each: a package's line
// with no Platform is the same for all of them, and a package whose resolution differs
// by platform, or that only some need, has a line for each platform that needs it.
//
// A Lock that ReadLock returns keeps the order of each platform that its check resolved,
// and Order returns that order: it is read, not changed.
type Lock struct {
	Repo      string        // the repository resolved against, as an absolute URL; of several, the first
	Name      string        // of a lock of one repository, the name the configuration or the command line gave it; "" where pkg named it
	Index     *LockIndex    // the signed index of Repo resolved, when a trusted key verified it
	Repos     []LockRepo    // of several repositories, each, highest priority first (Repo and Index the first's); else none
	Platforms []string      // the platforms resolved for, sorted; none: any, the index naming none
	Requires  []Requirement // what was requested, sorted and without duplicates
	Packages  []Package     // the resolution, sorted by name and platform

	orders map[string][]Package // orderFor's result for each platform decodeLock checked
	path   string               // the file ReadLock read it from, for its errors to name
}

// LockIndex names the signed index a lock was resolved from: a later lock of the same
// repository may not resolve an older one, and a sync that requires signatures knows the
// lock's packages came from the publisher.
type LockIndex struct {
	Name    string   `json:"name"`
	Version uint64   `json:"version"`
	Keys    []string `json:"keys"` // ids of the trusted keys that verified it
}

// LockRepo is one of the repositories a lock of several was resolved against. A package's
// Repo names the one it comes from.
type LockRepo struct {
	Name  string     `json:"name"` // as the configuration, or the command line, named it
	URL   string     `json:"url"`  // an absolute URL
	Index *LockIndex `json:"index,omitempty"`
}

// Of returns the repository named name among l's, and whether l has it; a lock of one
// repository has it under every name.
func (l *Lock) Of(name string) (LockRepo, bool) {
	if len(l.Repos) == 0 {
		return LockRepo{Name: l.Name, URL: l.Repo, Index: l.Index}, true
	}
	i := slices.IndexFunc(l.Repos, func(r LockRepo) bool { return r.Name == name })
	if i < 0 {
		return LockRepo{}, false
	}
	return l.Repos[i], true
}

// lockFile is a Lock as JSON: the requirements and the packages one to a line, so that a
// change to one shows as a change to one line.
type lockFile struct {
	Lockfile  int         `json:"lockfile"`
	Repo      string      `json:"repo"`
	Name      string      `json:"name,omitempty"`
	Inputs    string      `json:"inputs"`
	Locked    string      `json:"locked"` // digest of the packages
	Index     *LockIndex  `json:"index,omitempty"`
	Repos     []LockRepo  `json:"repos,omitempty"`
	Platforms []string    `json:"platforms,omitempty"`
	Requires  []string    `json:"requires"`
	Packages  []lockEntry `json:"packages"`
}

type lockEntry struct {
	Name          string   `json:"name"`
	Version       string   `json:"version"`
	Kind          string   `json:"kind,omitempty"`
	URL           string   `json:"url"`
	Size          int64    `json:"size"`
	SHA256        string   `json:"sha256"`
	Depends       []string `json:"depends,omitempty"`
	Optional      []string `json:"optional,omitempty"`
	Peers         []string `json:"peers,omitempty"`
	Bin           []string `json:"bin,omitempty"`
	Lib           []string `json:"lib,omitempty"`
	InstalledSize int64    `json:"installed_size,omitempty"`
	Files         int      `json:"files,omitempty"`
	Platform      string   `json:"platform,omitempty"` // the one platform of the lock's this line is for
	Repo          string   `json:"repo,omitempty"`     // in a lock of several repositories, the one it comes from
	Provides      []string `json:"provides,omitempty"`
	Conflicts     []string `json:"conflicts,omitempty"`
	Replaces      []string `json:"replaces,omitempty"`
	Into          string   `json:"into,omitempty"`
	Env           []string `json:"env,omitempty"`
}

// NewLock returns the lock of pkgs, the resolution of reqs against the repository at
// repoURL, whose Archive fields the caller has made absolute URLs.
func NewLock(repoURL string, reqs []Requirement, pkgs []Package) *Lock {
	l := &Lock{Repo: repoURL, Requires: canonical(reqs)}
	for _, p := range pkgs {
		l.Packages = append(l.Packages, locked(p, ""))
	}
	sortLocked(l.Packages)
	return l
}

// NewLockFor is NewLock for the resolutions of reqs for several platforms, keyed by
// platform (at least one).
func NewLockFor(repoURL string, reqs []Requirement, byPlatform map[string][]Package) *Lock {
	l := &Lock{Repo: repoURL, Requires: canonical(reqs), Platforms: slices.Sorted(maps.Keys(byPlatform))}
	lines := make(map[string][]Package) // key → its line for each platform needing it, in order
	for _, platform := range l.Platforms {
		for _, p := range byPlatform[platform] {
			lines[p.Key()] = append(lines[p.Key()], locked(p, platform))
		}
	}
	for _, ps := range lines {
		first := ps[0]
		first.Platform = ""
		same := len(ps) == len(l.Platforms) && !slices.ContainsFunc(ps, func(p Package) bool {
			p.Platform = ""
			return jsonText(entryOf(p)) != jsonText(entryOf(first))
		})
		if same {
			ps = []Package{first}
		}
		l.Packages = append(l.Packages, ps...)
	}
	sortLocked(l.Packages)
	return l
}

// locked is p as a lock's line for platform ("" for all of the lock's).
func locked(p Package, platform string) Package {
	q := Package{Name: p.Name, Version: p.Version, Kind: p.Kind, Archive: p.Archive, Size: p.Size, SHA256: p.SHA256,
		Depends: p.Depends, Optional: p.Optional, Peers: p.Peers, Bin: p.Bin, Lib: p.Lib, InstalledSize: p.InstalledSize, Files: p.Files, Platform: platform, Repo: p.Repo,
		Provides: p.Provides, Conflicts: p.Conflicts, Replaces: p.Replaces, Into: p.Into, Env: p.Env}
	normalize(&q)
	return q
}

// sortLocked sorts a lock's lines by name, the instances of an npm name by version, then
// by platform.
func sortLocked(pkgs []Package) {
	slices.SortFunc(pkgs, compareLines)
}

func compareLines(a, b Package) int {
	n := strings.Compare(a.Name, b.Name)
	if n == 0 && a.npm() && b.npm() {
		n = compareKind(a, b)
	}
	return cmp.Or(n, strings.Compare(a.Platform, b.Platform))
}

// canonical returns reqs in their String form's order, without duplicates.
func canonical(reqs []Requirement) []Requirement {
	rs := slices.Clone(reqs)
	slices.SortFunc(rs, func(a, b Requirement) int { return strings.Compare(a.String(), b.String()) })
	return slices.CompactFunc(rs, func(a, b Requirement) bool { return a.String() == b.String() })
}

// Inputs returns the digest of reqs as a lockfile records it: "sha256:" and the hex
// sha256 of their String forms, sorted, without duplicates, each ending in a newline.
func Inputs(reqs []Requirement) string {
	h := sha256.New()
	for _, r := range canonical(reqs) {
		io.WriteString(h, r.String()+"\n")
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// entryOf is p as a lockfile line.
func entryOf(p Package) lockEntry {
	return lockEntry{Name: p.Name, Version: p.Version, Kind: writtenKind(p.Kind), URL: p.Archive, Size: p.Size, SHA256: p.SHA256,
		Depends: texts(p.Depends), Optional: texts(p.Optional), Peers: texts(p.Peers), Bin: texts(p.Bin), Lib: p.Lib, InstalledSize: p.InstalledSize, Files: p.Files, Platform: p.Platform, Repo: p.Repo,
		Provides: texts(p.Provides), Conflicts: texts(p.Conflicts), Replaces: texts(p.Replaces), Into: p.Into, Env: p.Env}
}

// pkg is the package a lockfile line locks, its depends, provides, conflicts and
// replaces parsed.
func (e lockEntry) pkg() (Package, error) {
	p := Package{Name: e.Name, Version: e.Version, Kind: e.Kind, Archive: e.URL, Size: e.Size, SHA256: e.SHA256,
		Lib: e.Lib, InstalledSize: e.InstalledSize, Files: e.Files, Platform: e.Platform, Repo: e.Repo, Into: e.Into, Env: e.Env}
	if p.Kind == "" && debArchive(p.Archive) {
		p.Kind = KindDeb
	}
	for _, l := range []struct {
		field string
		text  []string
		reqs  *[]Requirement
	}{{"depends", e.Depends, &p.Depends}, {"optional", e.Optional, &p.Optional}, {"peers", e.Peers, &p.Peers}, {"provides", e.Provides, &p.Provides}, {"conflicts", e.Conflicts, &p.Conflicts}, {"replaces", e.Replaces, &p.Replaces}} {
		for _, d := range l.text {
			r, err := parseRequirement(d)
			if err != nil {
				return p, fmt.Errorf("package %s: %s: %v", p.id(), l.field, err)
			}
			*l.reqs = append(*l.reqs, r)
		}
	}
	for _, b := range e.Bin {
		p.Bin = append(p.Bin, ParseCommand(b))
	}
	return p, nil
}

// texts returns each of xs as it is written.
func texts[T fmt.Stringer](xs []T) []string {
	if xs == nil {
		return nil
	}
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = x.String()
	}
	return s
}

// digest returns what a lockfile records in "locked" for pkgs, sorted by name as a lock's
// are: "sha256:" and the hex sha256 of each package's line as Encode writes it, without its
// URL (which a user may point at a mirror), each ending in a newline.
func digest(pkgs []Package) string {
	es := make([]lockEntry, len(pkgs))
	for i, p := range pkgs {
		es[i] = entryOf(p)
	}
	return digestEntries(es)
}

// digestEntries is digest of the lines es.
func digestEntries(es []lockEntry) string {
	h := sha256.New()
	enc := json.NewEncoder(h) // each line as jsonText gives it, and its newline
	enc.SetEscapeHTML(false)
	for _, e := range es {
		e.URL = ""
		if err := enc.Encode(e); err != nil {
			panic("repo: encode lockfile: " + err.Error()) // only strings, numbers and lists
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Order is orderFor(Host): the packages to install here.
func (l *Lock) Order() ([]Package, error) { return l.orderFor(Host) }

// orderFor returns the packages locked for platform with every package after its
// dependencies, checking that they are exactly what the requirements need from them. A
// lock for some platforms but not this one is refused with a *LockPlatformError; a lock
// for any platform serves every one. The packages' Platform is empty.
func (l *Lock) orderFor(platform string) ([]Package, error) {
	if pkgs, ok := l.orders[platform]; ok {
		return slices.Clone(pkgs), nil
	}
	if len(l.Platforms) > 0 && !slices.Contains(l.Platforms, platform) {
		return nil, &LockPlatformError{Path: l.path, Platforms: l.Platforms, Platform: platform}
	}
	var mine []Package
	for _, p := range l.Packages {
		if p.runsOn(platform) {
			p.Platform = ""
			mine = append(mine, p)
		}
	}
	pkgs, err := newResolver(&Index{Format: 1, Packages: mine}).resolve(l.Requires)
	if err != nil {
		return nil, &lockfileError{fmt.Errorf("%s%w", l.forPlatform(platform), err)}
	}
	if len(pkgs) < len(mine) {
		for _, p := range mine {
			if !slices.ContainsFunc(pkgs, func(q Package) bool { return q.Key() == p.Key() }) {
				return nil, &lockfileError{fmt.Errorf("%s%s %s is locked but not required", l.forPlatform(platform), p.Name, p.Version)}
			}
		}
	}
	return pkgs, nil
}

// forPlatform is "for PLATFORM: " in a message about a lock for some platforms, else "".
func (l *Lock) forPlatform(platform string) string {
	if len(l.Platforms) == 0 {
		return ""
	}
	return "for " + platform + ": "
}

// LockPlatformError is returned for a lock that has no packages for the platform asked.
type LockPlatformError struct {
	Path      string   // the lockfile, where it was read from one
	Platforms []string // those the lock is for
	Platform  string
}

func (e *LockPlatformError) Error() string {
	where := "this machine is " + e.Platform
	if e.Platform != Host {
		where = "not for " + e.Platform
	}
	lock := "the lockfile"
	if e.Path != "" {
		lock = "lockfile " + e.Path
	}
	return fmt.Sprintf("%s locks packages for %s only; %s", lock, units.List(e.Platforms, 0), where)
}

// Resolve is ix.Resolve(reqs) for a lockfile replacing l, which may be nil: a pre-release
// l locks is in use (see resolver.use), as for Outdated.
func (l *Lock) Resolve(ix *Index, reqs []Requirement) ([]Package, error) {
	pkgs, err := l.resolve(ix, reqs)
	if err != nil {
		return nil, err
	}
	return pkgs, nil
}

func (l *Lock) resolve(ix *Index, reqs []Requirement) ([]Package, error) {
	r := newResolver(ix)
	if l != nil {
		r.use(l.Packages)
	}
	return r.resolve(reqs)
}

// Outdated re-resolves the lock's requirements against ix, for each of its platforms, and
// returns an error naming the packages whose resolution differs from what is locked, for
// the first platform where one does, or nil.
func (l *Lock) Outdated(ix *Index) error {
	for _, platform := range l.platforms() {
		err := l.outdatedFor(ix.ForPlatform(platform), platform)
		var se *staleError
		switch {
		case errors.As(err, &se):
			return err
		case err != nil:
			return fmt.Errorf("lockfile is out of date: %s%w", l.forPlatform(platform), err)
		}
	}
	return nil
}

// Unresolved returns the requirements of l that ix no longer meets, for one of l's
// platforms: each that does not resolve alone, or all where each does but not together;
// nil where ix resolves them all.
func (l *Lock) Unresolved(ix *Index) []Requirement {
	for _, platform := range l.platforms() {
		in := ix.ForPlatform(platform)
		if _, err := l.resolve(in, l.Requires); err == nil {
			continue
		}
		var alone []Requirement
		for _, r := range l.Requires {
			if _, err := l.resolve(in, []Requirement{r}); err != nil {
				alone = append(alone, r)
			}
		}
		if alone == nil {
			alone = slices.Clone(l.Requires)
		}
		return alone
	}
	return nil
}

// platforms returns the lock's platforms, or Host for a lock of any.
func (l *Lock) platforms() []string {
	if len(l.Platforms) == 0 {
		return []string{Host}
	}
	return l.Platforms
}

// A staleError is a lockfile whose requirements resolve otherwise now (Outdated):
// for Platform ("" for a lock of any), the package Locked is locked and the
// index resolves Now, one of them the zero Package where the package is in the
// other alone, both of one version where its archive changed; Also are the other
// packages that differ for Platform, each so (its Platform and Also unset). Or they no
// longer resolve, for Err.
type staleError struct {
	Platform    string
	Locked, Now Package
	Also        []staleError
	Err         error
}

// maxStaleNamed is how many of the packages after the first a staleError names where
// there are more (units.Some, which names one more whole).
const maxStaleNamed = 5

func (e *staleError) Error() string {
	whys := []string{e.why()}
	for _, a := range e.Also {
		whys = append(whys, a.why())
	}
	why := units.Some(whys, 1+maxStaleNamed)
	if e.Platform != "" {
		why = "for " + e.Platform + ": " + why
	}
	return "lockfile is out of date: " + why
}

// why says how the package of e differs, or why its requirements do not resolve.
func (e *staleError) why() string {
	switch {
	case e.Err != nil:
		return "its requirements no longer resolve: " + e.Err.Error()
	case e.Locked.Name == "":
		return fmt.Sprintf("%s %s is now required and not locked", e.Now.Name, e.Now.Version)
	case e.Now.Name == "":
		return fmt.Sprintf("%s %s is locked and no longer required", e.Locked.Name, e.Locked.Version)
	case e.Locked.Version != e.Now.Version:
		return fmt.Sprintf("%s is locked at %s, the index now resolves %s", e.Now.Name, e.Locked.Version, e.Now.Version)
	}
	return fmt.Sprintf("%s %s is locked with sha256 %s, the index now has %s", e.Now.Name, e.Now.Version, e.Locked.SHA256, e.Now.SHA256)
}

func (e *staleError) Unwrap() error { return e.Err }

func (l *Lock) outdatedFor(ix *Index, platform string) error {
	mine, err := l.orderFor(platform)
	if err != nil {
		return err
	}
	if len(l.Platforms) == 0 {
		platform = "" // a lock of any platform says none
	}
	now, err := l.resolve(ix, l.Requires)
	if err != nil {
		return &staleError{Platform: platform, Err: err}
	}
	locked := make(map[string]Package, len(mine))
	for _, p := range mine {
		locked[p.Key()] = p
	}
	slices.SortFunc(now, compareLines)
	var differ []staleError
	for _, p := range now {
		q, ok := locked[p.Key()]
		if !ok && p.npm() {
			q = movedInstance(mine, now, p)
		}
		if !ok || q.Version != p.Version || q.SHA256 != p.SHA256 {
			differ = append(differ, staleError{Locked: q, Now: p})
		}
		delete(locked, p.Key())
		delete(locked, q.Key())
	}
	for _, p := range mine {
		if _, ok := locked[p.Key()]; ok {
			differ = append(differ, staleError{Locked: p})
		}
	}
	if len(differ) == 0 {
		return nil
	}
	return &staleError{Platform: platform, Locked: differ[0].Locked, Now: differ[0].Now, Also: differ[1:]}
}

// movedInstance returns the instance of mine, the locked packages, of the npm name of p
// that now, what the index resolves, lacks: the version p takes the place of (an npm
// instance is keyed by its version); the zero Package if none.
func movedInstance(mine, now []Package, p Package) Package {
	for _, q := range mine {
		if q.npm() && q.Name == p.Name && !slices.ContainsFunc(now, func(n Package) bool { return n.Key() == q.Key() }) {
			return q
		}
	}
	return Package{}
}

// encode writes l as the lockfile's JSON.
func (l *Lock) encode(w io.Writer) error {
	lf := lockFile{Lockfile: lockFormat, Repo: l.Repo, Inputs: Inputs(l.Requires), Locked: digest(l.Packages)}
	for _, r := range l.Requires {
		lf.Requires = append(lf.Requires, r.String())
	}
	for _, p := range l.Packages {
		lf.Packages = append(lf.Packages, entryOf(p))
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\n  \"lockfile\": %d,\n  \"repo\": %s,\n", lf.Lockfile, jsonText(lf.Repo))
	if l.Name != "" {
		fmt.Fprintf(&b, "  \"name\": %s,\n", jsonText(l.Name))
	}
	fmt.Fprintf(&b, "  \"inputs\": %s,\n  \"locked\": %s,\n", jsonText(lf.Inputs), jsonText(lf.Locked))
	if l.Index != nil {
		fmt.Fprintf(&b, "  \"index\": %s,\n", jsonText(l.Index))
	}
	if len(l.Repos) > 0 {
		writeList(&b, "repos", l.Repos, ",")
	}
	if len(l.Platforms) > 0 {
		fmt.Fprintf(&b, "  \"platforms\": %s,\n", jsonText(l.Platforms))
	}
	writeList(&b, "requires", lf.Requires, ",")
	writeList(&b, "packages", lf.Packages, "")
	b.WriteString("}\n")
	_, err := w.Write(b.Bytes())
	return err
}

// writeList writes a JSON array member, one element to a line.
func writeList[T any](b *bytes.Buffer, name string, list []T, end string) {
	fmt.Fprintf(b, "  %q: [", name)
	for i, v := range list {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n    " + jsonText(v))
	}
	if len(list) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("]" + end + "\n")
}

// jsonText encodes v on one line, leaving "<" and ">" of constraints unescaped.
func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("repo: encode lockfile: " + err.Error()) // only strings, numbers and lists
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// WriteLock replaces the file at path with l, atomically and durably, keeping its
// permissions, owner and group (durable.ReplaceFile; a new one is made 0644). A file that
// holds l already is left as it is: its inode, times and owner. A path that is a symlink
// (pkg.lock -> ci/pkg.lock) has the file it leads to replaced, as an editor would, and
// stays a link.
func WriteLock(path string, l *Lock) error {
	var b bytes.Buffer
	path, err := lockTarget(path)
	if err == nil {
		err = l.encode(&b)
	}
	if err == nil && !fileHolds(path, b.Bytes()) {
		base := filepath.Base(path)
		err = durable.ReplaceFile(filepath.Dir(path), base, "."+base+".tmp-*", func(w io.Writer) error {
			_, err := w.Write(b.Bytes())
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("write lockfile: %w", err)
	}
	return nil
}

// fileHolds reports whether the regular file at path holds data, exactly.
func fileHolds(path string, data []byte) bool {
	f, err := regfile.Open(path, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	got, err := io.ReadAll(io.LimitReader(f, int64(len(data))+1))
	return err == nil && bytes.Equal(got, data)
}

// maxLinks bounds the symlinks lockTarget follows, as the kernel's limit (40,
// path_resolution(7)) bounds a lookup's.
const maxLinks = 40

// lockTarget returns the file path leads to through symlinks of its last name, which may
// not exist yet: a link whose target is missing (the first pkg lock through pkg.lock ->
// ci/pkg.lock) leads to its target, not to itself. Links among its directories, and a
// link's target's "..", lead where the kernel's lookup leads: a lexical join would take
// "dir/../" for dir's parent where dir is a link, and write another file than the one
// the path names.
func lockTarget(path string) (string, error) {
	for range maxLinks {
		dir, name := filepath.Split(path)
		dir, err := filepath.EvalSymlinks(cmp.Or(dir, "."))
		if err != nil {
			return "", err
		}
		path = filepath.Join(dir, name)
		if fi, err := os.Lstat(path); err != nil || fi.Mode().Type() != fs.ModeSymlink {
			return path, nil
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = dir + string(filepath.Separator) + target
		}
		path = target
	}
	return "", &fs.PathError{Op: "open", Path: path, Err: syscall.ELOOP}
}

// ErrLockfile is returned for a lockfile that pkg lock did not write as it is: damaged,
// truncated or edited.
var ErrLockfile = errors.New("repo: lockfile")

// lockfileError is ErrLockfile to errors.Is, said by what is wrong alone: the caller
// names the lockfile, so the sentinel's words would only add "repo: lockfile:".
type lockfileError struct{ err error }

func (e *lockfileError) Error() string        { return e.err.Error() }
func (e *lockfileError) Unwrap() error        { return e.err }
func (e *lockfileError) Is(target error) bool { return target == ErrLockfile }

// ReadLock reads and parses the lockfile at path.
func ReadLock(path string) (*Lock, error) {
	f, err := regfile.Open(path, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxLockSize+1))
	if err != nil {
		return nil, err
	}
	l, err := decodeLock(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	l.path = path
	return l, nil
}

// decodeLock decodes and validates a lockfile: its format, every entry, the digest of its
// requirements, and that its packages are exactly what its requirements resolve to among
// them. The order each platform's check found is kept for Order, which would resolve it
// again.
func decodeLock(data []byte) (*Lock, error) {
	l, err := parseLock(data)
	if err != nil {
		return nil, &lockfileError{err}
	}
	orders := make(map[string][]Package)
	for _, platform := range l.platforms() {
		pkgs, err := l.orderFor(platform)
		if err != nil {
			return nil, err
		}
		orders[platform] = pkgs
	}
	l.orders = orders
	return l, nil
}

func parseLock(data []byte) (*Lock, error) {
	if len(data) > maxLockSize {
		return nil, &reasonError{msg: fmt.Sprintf("%d bytes, over the %d-byte limit", len(data), maxLockSize), reason: ErrLimit}
	}
	var lf lockFile
	if err := json.Unmarshal(data, &lf); err != nil {
		// What is not a lockfile of this format may not fit lockFile: its format
		// number, read alone, says more.
		var head struct{ Lockfile int }
		if herr := json.Unmarshal(data, &head); herr != nil {
			return nil, jsonError(data, herr)
		}
		if head.Lockfile == lockFormat {
			return nil, jsonError(data, err)
		}
		lf = lockFile{Lockfile: head.Lockfile}
	}
	if lf.Lockfile == 0 {
		return nil, errors.New(`not a lockfile: no "lockfile" format number`)
	}
	if lf.Lockfile != lockFormat {
		return nil, &FormatError{Format: lf.Lockfile, Newest: lockFormat}
	}
	l := &Lock{Repo: lf.Repo, Name: lf.Name, Index: lf.Index, Repos: lf.Repos, Platforms: lf.Platforms}
	if !validLockURL(strings.TrimSuffix(l.Repo, "/")) {
		return nil, fmt.Errorf("repo %q is not an absolute http, https, oci or file URL", l.Repo)
	}
	if err := checkLockPlatforms(l.Platforms); err != nil {
		return nil, err
	}
	if err := checkLockIndex(lf.Index); err != nil {
		return nil, err
	}
	if err := checkLockRepos(l); err != nil {
		return nil, err
	}
	for _, s := range lf.Requires {
		r, err := parseRequirement(s)
		if err != nil {
			return nil, err
		}
		l.Requires = append(l.Requires, r)
	}
	l.Requires = canonical(l.Requires)
	if got := Inputs(l.Requires); got != lf.Inputs {
		return nil, &reasonError{msg: fmt.Sprintf("inputs %s are not the digest of its requires (%s): edited by hand?", lf.Inputs, got), reason: ErrLockEdited}
	}
	for i, e := range lf.Packages {
		p, err := lockedPackage(l, e)
		if err != nil {
			return nil, fmt.Errorf("packages[%d]: %w", i, err)
		}
		l.Packages = append(l.Packages, p)
	}
	if lf.Locked == "" {
		return nil, errors.New(`no "locked" digest of its packages`)
	}
	if got := digest(l.Packages); got != lf.Locked {
		return nil, &reasonError{msg: fmt.Sprintf("locked %s is not the digest of its packages (%s): edited by hand?", lf.Locked, got), reason: ErrLockEdited}
	}
	return l, nil
}

// lockedPackage returns the package of the entry e, the next line of the lockfile l,
// checked: valid (checkLocked), after l's lines so far (checkLine), from one of l's
// repositories, and a file archive beneath that repository's (*OutsideError).
func lockedPackage(l *Lock, e lockEntry) (Package, error) {
	p, err := e.pkg()
	if err != nil {
		return p, err
	}
	if err := checkLocked(&p); err != nil {
		return p, err
	}
	if err := checkLine(l, p); err != nil {
		return p, err
	}
	r, ok := l.Of(p.Repo)
	if !ok || len(l.Repos) == 0 && p.Repo != "" {
		return p, fmt.Errorf("%s %s: repo %q is not one of the lockfile's repos", p.Name, p.Version, p.Repo)
	}
	return p, checkBeneath(p, r.URL)
}

func checkLockIndex(x *LockIndex) error {
	if x != nil && (!validRepoName(x.Name) || x.Version == 0 || x.Version > maxIndexVersion || len(x.Keys) == 0 || slices.ContainsFunc(x.Keys, notKeyID)) {
		return fmt.Errorf("index %s: want the name, version (1 to %d) and key ids of a signed index", jsonText(x), uint64(maxIndexVersion))
	}
	return nil
}

// notKeyID reports whether s is not a key id as trust.ParseKeyID gives one, 16 hex digits:
// what a lockfile says verified its index is printed where it is refused (pin.LockSignedError).
func notKeyID(s string) bool { return len(s) != 16 || strings.Trim(s, "0123456789abcdef") != "" }

// checkLockRepos checks the repos of l: none (a lock of one repository, whose name, if
// any, is valid), or two or more, each named once, the first being l's repo and index.
func checkLockRepos(l *Lock) error {
	switch {
	case len(l.Repos) == 1:
		return errors.New("repos names one repository (a lock of one names none)")
	case len(l.Repos) == 0 && l.Name != "" && !validRepoName(l.Name):
		return fmt.Errorf("name: %v", badRepoName(l.Name))
	case len(l.Repos) == 0:
		return nil
	case l.Name != "":
		return errors.New("name is that of a lock of one repository (a lock of several names each of its repos)")
	case l.Repos[0].URL != l.Repo || jsonText(l.Repos[0].Index) != jsonText(l.Index):
		return errors.New("repo and index are not those of the first of its repos")
	}
	for i, r := range l.Repos {
		switch {
		case !validRepoName(r.Name):
			return fmt.Errorf("repos[%d]: %v", i, badRepoName(r.Name))
		case !validLockURL(strings.TrimSuffix(r.URL, "/")):
			return fmt.Errorf("repos[%d]: url %q is not an absolute http, https, oci or file URL", i, r.URL)
		case slices.ContainsFunc(l.Repos[:i], func(q LockRepo) bool { return q.Name == r.Name }):
			return fmt.Errorf("repos[%d]: %s is listed twice", i, r.Name)
		}
		if err := checkLockIndex(r.Index); err != nil {
			return fmt.Errorf("repos[%d]: %v", i, err)
		}
	}
	return nil
}

// checkLockPlatforms checks the platforms of a lockfile: valid, sorted, each named once.
func checkLockPlatforms(platforms []string) error {
	for i, s := range platforms {
		if err := CheckPlatform(s); err != nil {
			return fmt.Errorf("platforms: %v", err)
		}
		if i > 0 && platforms[i-1] >= s {
			return fmt.Errorf("platforms: %s is out of order or listed twice (want sorted)", s)
		}
	}
	return nil
}

// checkLine checks p, the next line of l, against the lines before it: sorted by name, an
// npm name's instances by version, and platform (sortLocked), and for a package (an npm
// instance: Key) either one line for all of l's platforms or one for each platform that
// needs it.
func checkLine(l *Lock, p Package) error {
	if p.Platform != "" && !slices.Contains(l.Platforms, p.Platform) {
		return fmt.Errorf("%s %s: platform %q is not one of the lockfile's platforms", p.Name, p.Version, p.Platform)
	}
	if len(l.Packages) == 0 {
		return nil
	}
	prev := l.Packages[len(l.Packages)-1]
	switch {
	case prev.Name < p.Name:
		return nil
	case compareLines(prev, p) >= 0:
		return fmt.Errorf("%s is out of order or listed twice (want sorted by name, an npm name's versions and platform)", p.Key())
	case prev.Key() != p.Key() && p.npm() && prev.npm():
		return nil // another instance
	case prev.Platform == "":
		return fmt.Errorf("%s: a line for all platforms and one for %s", p.Key(), p.Platform)
	}
	return nil
}

// checkLocked validates a locked package, whose Archive is an absolute URL.
func checkLocked(p *Package) error {
	if !validName(p.Name) {
		return badName(p.Name)
	}
	normalize(p)
	if err := checkKindVersion(p); err != nil {
		return err
	}
	switch {
	case !validLockURL(p.Archive):
		return fmt.Errorf("package %s: url %q is not an absolute http, https, oci or file URL", p.id(), p.Archive)
	case !validSHA256(p.SHA256):
		return fmt.Errorf("package %s: sha256 %q is not 64 lowercase hex digits", p.id(), p.SHA256)
	}
	if err := checkNumbers(p); err != nil {
		return err
	}
	return checkLists(p)
}

// OutsideError refuses a lockfile's package whose archive is a file URL not beneath its
// repository's: a lockfile may come from anyone (a pull request), and a sync must not
// read, and report the size and sha256 of, any local file it names.
type OutsideError struct {
	Name, Version string
	Archive, Repo string // URLs, as the lockfile records them
}

func (e *OutsideError) Error() string {
	return fmt.Sprintf("%s %s: archive %s is not beneath its repository %s", e.Name, e.Version, e.Archive, e.Repo)
}

// checkBeneath refuses, with an *OutsideError, a file URL as p's archive unless it names
// a file beneath the file URL repoURL. An index's archive is a path beneath its repository
// or an http(s) URL, which may be on another server, so an http(s) archive is not refused.
func checkBeneath(p Package, repoURL string) error {
	a, err := url.Parse(p.Archive)
	if err != nil || a.Scheme != "file" {
		return nil // validLockURL accepted it: http, https or oci
	}
	r, err := url.Parse(repoURL)
	if err != nil || r.Scheme != "file" || a.RawQuery != "" || a.Fragment != "" {
		return &OutsideError{p.Name, p.Version, p.Archive, repoURL}
	}
	rel, ok := strings.CutPrefix(a.Path, strings.TrimSuffix(r.Path, "/")+"/")
	if !ok || !localSlashPath(rel) {
		return &OutsideError{p.Name, p.Version, p.Archive, repoURL}
	}
	return nil
}

// localSlashPath reports whether rel is a relative slash-separated path whose segments
// are neither empty, "." nor "..".
func localSlashPath(rel string) bool {
	for seg := range strings.SplitSeq(rel, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return !strings.ContainsAny(rel, "\\\x00")
}

func validLockURL(s string) bool {
	u, err := url.Parse(s)
	switch {
	case err != nil || u.User != nil:
		return false
	case u.Scheme == "http" || u.Scheme == "https" || u.Scheme == "oci" || u.Scheme == "oci+http" || u.Scheme == "oci+https":
		return u.Host != ""
	}
	return u.Scheme == "file" && u.Host == "" && strings.HasPrefix(u.Path, "/") && !strings.HasSuffix(u.Path, "/")
}

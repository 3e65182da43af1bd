package publish

import (
	"cmp"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"pkg/internal/regfile"
	"pkg/internal/termtext"
	"pkg/repo"
)

// maxNPMLockSize bounds a package-lock.json: eslint's whole tree is 130 KiB.
const maxNPMLockSize = 64 << 20 // 64 MiB

// Reasons an npm lock, or one of its packages, is refused, inside an *NPMLockError.
var (
	// ErrNPMLockVersion is a lockfileVersion other than 2 and 3: version 1, npm 6's, has
	// no "packages".
	ErrNPMLockVersion = errors.New("publish: package-lock.json version")
	// ErrNPMLocal is a package that is a directory, not a published tarball: a workspace
	// or a file: or link: dependency.
	ErrNPMLocal = errors.New("publish: not a published tarball")
	// ErrNPMIntegrity is a tarball whose bytes are not those its lock's integrity names.
	ErrNPMIntegrity = errors.New("publish: tarball not the lock's integrity")
	// ErrNPMOverrides is a project with npm "overrides", in the package.json beside its
	// lock or in the lock's project entry: they take versions its packages' ranges do not
	// allow, which pkg's resolver would refuse.
	ErrNPMOverrides = errors.New("publish: npm overrides not supported")
	errKey          = errors.New("publish: not a path of node_modules")
	errNPMName      = errors.New("publish: not a package name pkg takes")
	errAlias        = errors.New("publish: an npm alias")
	errResolved     = errors.New("publish: resolved is not an http(s) URL")
	errResolvedUser = errors.New("publish: resolved holds credentials")
	errNoSHA512     = errors.New("publish: no sha512 integrity")
	errTwice        = errors.New("publish: one version with two integrities")
	errNoPath       = errors.New("publish: a dependency of the project not in node_modules")
)

// An NPMLockError is a package-lock.json, or the package at Key in it ("" for the
// file or its project), that pkg cannot import.
type NPMLockError struct {
	Path string // the package-lock.json
	Key  string // of its "packages", such as node_modules/@eslint/js
	Err  error
}

func (e *NPMLockError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("import %s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("import %s: %s: %v", e.Path, lockText(e.Key), e.Err)
}

// lockText returns s, a key or a string of a package-lock.json, as an error prints it:
// quoted (termtext.Quote) if it holds a control or bidirectional character.
func lockText(s string) string {
	if termtext.HasControl(s) {
		return termtext.Quote(s)
	}
	return s
}

func (e *NPMLockError) Unwrap() error { return e.Err }

// npmLockFile is what pkg reads of a package-lock.json.
type npmLockFile struct {
	LockfileVersion int                     `json:"lockfileVersion"`
	Packages        map[string]npmLockEntry `json:"packages"`
}

// npmLockEntry is one of a package-lock.json's "packages": the project itself (key ""),
// a package at a path of node_modules, or a workspace's directory.
type npmLockEntry struct {
	Name                 string            `json:"name"` // set where it is not the path's: an alias, the project
	Version              string            `json:"version"`
	Resolved             string            `json:"resolved"`
	Integrity            string            `json:"integrity"`
	Link                 bool              `json:"link"`
	InBundle             bool              `json:"inBundle"`
	Overrides            json.RawMessage   `json:"overrides"`
	Dependencies         map[string]string `json:"dependencies"`
	DevDependencies      map[string]string `json:"devDependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
}

// An lockTarball is a package version a package-lock.json names, once however many of
// its node_modules hold it.
type lockTarball struct {
	Key           string // the first path holding it, for messages
	Name, Version string
	Resolved      string   // the URL npm downloaded it from
	Integrity     string   // the lock's sha512 integrity, SHA512 written sha512-BASE64, space-separated
	SHA512        [][]byte // the sha512 digests the lock's integrity allows, any one of which the tarball must have
}

// npmLock is a package-lock.json read: its tarballs, sorted by name and version, the
// project's requests, at the versions the lock has, and the bundled packages, which
// come inside another's tarball.
type npmLock struct {
	Tarballs []lockTarball
	Requires []repo.Requirement
	Bundled  []string // keys
}

// readNPMLock reads and checks the package-lock.json at path.
func readNPMLock(path, registry string) (*npmLock, error) {
	data, err := regfile.ReadFile(path, maxNPMLockSize)
	if err != nil {
		return nil, err
	}
	l, err := parseNPMLock(data, registry)
	if err == nil {
		err = checkOverrides(filepath.Join(filepath.Dir(path), "package.json"))
	}
	if le := (*NPMLockError)(nil); errors.As(err, &le) {
		le.Path = path
	} else if err != nil {
		err = &NPMLockError{Path: path, Err: err}
	}
	return l, err
}

// checkOverrides refuses the project's package.json at path where it has npm overrides
// (ErrNPMOverrides); one that is missing or unreadable is not checked.
func checkOverrides(path string) error {
	data, err := regfile.ReadFile(path, maxNPMLockSize)
	if err != nil {
		return nil
	}
	var pj struct {
		Overrides json.RawMessage `json:"overrides"`
	}
	if json.Unmarshal(data, &pj) != nil || !hasOverrides(pj.Overrides) {
		return nil
	}
	return fmt.Errorf("%w: %s has overrides: remove them and run npm install again", ErrNPMOverrides, lockText(path))
}

// hasOverrides reports whether o, an "overrides" value, overrides anything.
func hasOverrides(o json.RawMessage) bool {
	var m map[string]json.RawMessage
	return len(o) > 0 && (json.Unmarshal(o, &m) != nil || len(m) > 0)
}

// parseNPMLock parses a package-lock.json of lockfileVersion 2 or 3. A package without a
// resolved URL (npm's omit-lockfile-registry-resolved) is at the registry's URL for it
// (registryURL). It refuses a workspace, a link or a local directory, an alias, a package
// whose resolved URL is not http(s) or whose integrity has no sha512, and one version of
// a name with two integrities; it skips bundled packages, unchecked.
func parseNPMLock(data []byte, registry string) (*npmLock, error) {
	var f npmLockFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not a package-lock.json: %w", err)
	}
	switch {
	case f.LockfileVersion == 1:
		return nil, fmt.Errorf("%w: lockfileVersion 1, npm 6's, lists no packages by path", ErrNPMLockVersion)
	case f.LockfileVersion != 2 && f.LockfileVersion != 3:
		return nil, fmt.Errorf("%w: lockfileVersion %d is not 2 or 3", ErrNPMLockVersion, f.LockfileVersion)
	}
	if o := f.Packages[""].Overrides; hasOverrides(o) {
		return nil, fmt.Errorf("%w: the project's entry has overrides: remove them from its package.json and run npm install again", ErrNPMOverrides)
	}
	l := &npmLock{}
	byID := make(map[string]int) // name@version → its index in l.Tarballs
	versions := make(map[string]string)
	for _, key := range slices.Sorted(maps.Keys(f.Packages)) {
		if key == "" {
			continue
		}
		e := f.Packages[key]
		if e.InBundle && !strings.ContainsFunc(key, unicode.IsControl) { // npm alone reads it, from another's tarball; a note names it
			l.Bundled = append(l.Bundled, key)
			continue
		}
		t, err := e.tarball(key, registry)
		if err != nil {
			return nil, &NPMLockError{Key: key, Err: err}
		}
		if strings.Count(key, "node_modules/") == 1 {
			versions[t.Name] = t.Version
		}
		if i, ok := byID[t.Name+"@"+t.Version]; ok {
			if l.Tarballs[i].Integrity != t.Integrity { // another URL for the same bytes is as good
				return nil, &NPMLockError{Key: key, Err: fmt.Errorf("%w: %s %s has integrity %s here and %s at %s", errTwice, t.Name, t.Version, t.Integrity, l.Tarballs[i].Integrity, l.Tarballs[i].Key)}
			}
			continue
		}
		byID[t.Name+"@"+t.Version] = len(l.Tarballs)
		l.Tarballs = append(l.Tarballs, t)
	}
	slices.SortFunc(l.Tarballs, func(a, b lockTarball) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), repo.CompareNPMVersions(a.Version, b.Version))
	})
	reqs, err := f.Packages[""].requires(versions)
	l.Requires = reqs
	return l, err
}

// requires returns the requests of the project e: its dependencies, devDependencies and
// optionalDependencies, each at the version at node_modules/NAME (versions), which an
// optional one may lack (npm lists it, but leaves it out on another platform).
func (e npmLockEntry) requires(versions map[string]string) ([]repo.Requirement, error) {
	var reqs []repo.Requirement
	for _, deps := range []map[string]string{e.Dependencies, e.DevDependencies, e.OptionalDependencies} {
		for _, name := range slices.Sorted(maps.Keys(deps)) {
			v, ok := versions[name]
			_, optional := e.OptionalDependencies[name]
			switch {
			case !ok && optional:
				continue
			case !ok:
				return nil, &NPMLockError{Key: "node_modules/" + name, Err: fmt.Errorf("%w: the project depends on %s %s", errNoPath, lockText(name), lockText(deps[name]))}
			}
			r, err := repo.ParseRequirement(name + "@npm:" + v)
			if err != nil {
				return nil, &NPMLockError{Key: "node_modules/" + name, Err: err}
			}
			reqs = append(reqs, r)
		}
	}
	return reqs, nil
}

// tarball returns the package the entry at key names, checked, at its resolved URL or,
// without one, the registry's.
func (e npmLockEntry) tarball(key, registry string) (lockTarball, error) {
	name, err := npmKeyName(key)
	switch {
	case e.Link:
		return lockTarball{}, fmt.Errorf("%w: a link to %s", ErrNPMLocal, lockText(e.Resolved))
	case err != nil && !strings.HasPrefix(key, "node_modules/") && !strings.Contains(key, "/node_modules/"):
		return lockTarball{}, fmt.Errorf("%w: a workspace or a local directory", ErrNPMLocal)
	case err != nil:
		return lockTarball{}, err
	case e.Name != "" && e.Name != name:
		return lockTarball{}, fmt.Errorf("%w: %s is %s", errAlias, name, lockText(e.Name))
	}
	if err := repo.CheckNPMVersion(e.Version); err != nil {
		return lockTarball{}, err
	}
	t := lockTarball{Key: key, Name: name, Version: e.Version, Resolved: e.Resolved}
	if t.Resolved == "" {
		t.Resolved = registryURL(registry, name, e.Version)
	}
	u, err := url.Parse(t.Resolved)
	switch {
	case err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return t, fmt.Errorf("%w: %q", errResolved, termtext.WithoutCredentials(t.Resolved))
	case u.User != nil:
		return t, fmt.Errorf("%w: %q", errResolvedUser, termtext.WithoutUser(u))
	}
	if t.SHA512 = sha512s(e.Integrity); len(t.SHA512) == 0 {
		return t, fmt.Errorf("%w: %q", errNoSHA512, e.Integrity)
	}
	t.Integrity = integrityText(t.SHA512) // what messages print, the lock's other text left out
	return t, nil
}

// registryURL is where the npm registry at registry serves the tarball of name at version:
// REGISTRY/NAME/-/BASENAME-VERSION.tgz, BASENAME the name without its scope, as the
// registry's resolved URLs are.
func registryURL(registry, name, version string) string {
	_, base, _ := strings.Cut(name, "/")
	return strings.TrimSuffix(registry, "/") + "/" + name + "/-/" + cmp.Or(base, name) + "-" + version + ".tgz"
}

// npmKeyName returns the name of the package at key, a path of node_modules
// ("node_modules/a/node_modules/@s/b" holds @s/b): errKey where key is no such path, the
// error of checkNPMName where a package's directory is not a name pkg takes.
func npmKeyName(key string) (string, error) {
	segs := strings.Split(key, "/")
	var name string
	for len(segs) > 0 {
		if len(segs) < 2 || segs[0] != "node_modules" {
			return "", errKey
		}
		name, segs = segs[1], segs[2:]
		if strings.HasPrefix(name, "@") && len(segs) > 0 {
			name, segs = name+"/"+segs[0], segs[1:]
		}
		if !packageDir(name) {
			return "", errKey
		}
		if err := checkNPMName(name); err != nil {
			return "", err
		}
	}
	return name, nil
}

// packageDir reports whether name, a directory below node_modules or a scope's, is a
// package's place: a scope has a package below it, and no part is "", "." or "..".
func packageDir(name string) bool {
	parts := strings.Split(strings.TrimPrefix(name, "@"), "/")
	if strings.HasPrefix(name, "@") != (len(parts) == 2) {
		return false
	}
	return !slices.ContainsFunc(parts, func(p string) bool { return p == "" || p == "." || p == ".." })
}

// integrityText writes the sha512 digests sums as an integrity string.
func integrityText(sums [][]byte) string {
	texts := make([]string, len(sums))
	for i, sum := range sums {
		texts[i] = "sha512-" + base64.StdEncoding.EncodeToString(sum)
	}
	return strings.Join(texts, " ")
}

// sha512s returns the sha512 digests of an integrity string (Subresource Integrity:
// "sha512-BASE64", several separated by spaces, each maybe with "?OPTIONS"), those of
// other algorithms left out.
func sha512s(integrity string) [][]byte {
	var sums [][]byte
	for _, tok := range strings.Fields(integrity) {
		b64, ok := strings.CutPrefix(tok, "sha512-")
		b64, _, _ = strings.Cut(b64, "?")
		sum, err := base64.StdEncoding.DecodeString(b64)
		if ok && err == nil && len(sum) == sha512.Size {
			sums = append(sums, sum)
		}
	}
	return sums
}

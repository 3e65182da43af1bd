package publish

import (
	"archive/tar"
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"reflect"
	"slices"
	"strings"
	"unicode"

	"pkg/install"
	"pkg/internal/regfile"
	"pkg/internal/termtext"
	"pkg/repo"
	"pkg/tarutil"
)

// manifestName is the file of an npm tarball's top directory that describes it.
const manifestName = "package.json"

// maxManifest bounds package/package.json (npm's own are a few KiB; some carry a long
// description or many scripts).
const maxManifest = 4 << 20 // 4 MiB

// lifecycleScripts are the scripts npm runs at install, which pkg never runs.
var lifecycleScripts = []string{"preinstall", "install", "postinstall"}

// A ManifestError refuses an npm tarball's package.json, naming the archive, the member
// and the field (or none, for JSON that does not parse).
type ManifestError struct {
	Archive string // as given to repo add
	Member  string // package/package.json, or TOP/package.json
	Field   string // "" for the whole member
	Err     error
}

func (e *ManifestError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %s: %v", e.Archive, e.Member, e.Err)
	}
	return fmt.Sprintf("%s: %s: %s: %v", e.Archive, e.Member, e.Field, e.Err)
}

func (e *ManifestError) Unwrap() error { return e.Err }

// manifest is what pkg reads of package.json (https://docs.npmjs.com/cli/configuring-npm/package-json).
// Its tags are package.json's names, which a *json.UnmarshalTypeError's Field gives.
type manifest struct {
	Name        string          `json:"name"`
	Version     string          `json:"version"`
	Description json.RawMessage `json:"description"` // a string; anything else is no summary
	Bin         json.RawMessage `json:"bin"`         // a string (one command named after the package) or a map
	Directories struct {
		Bin string `json:"bin"` // without bin: every file in this directory is a command
	} `json:"directories"`
	Dependencies         map[string]string `json:"dependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	PeerDependencies     map[string]string `json:"peerDependencies"`
	PeerDependenciesMeta map[string]struct {
		Optional bool `json:"optional"`
	} `json:"peerDependenciesMeta"`
	BundleDependencies  json.RawMessage            `json:"bundleDependencies"`  // true, or names
	BundledDependencies json.RawMessage            `json:"bundledDependencies"` // npm's other spelling
	OS                  json.RawMessage            `json:"os"`                  // a string or a list, entries "!"-negated or not
	CPU                 json.RawMessage            `json:"cpu"`
	Scripts             map[string]json.RawMessage `json:"scripts"`
}

// npmTop returns the one top directory of members, if they have the shape of an npm
// tarball: every member in it, TOP/package.json a file. npm packs into package/; the
// registry holds older tarballs and @types' with another name (estree/), which npm takes
// alike.
func npmTop(members []tarutil.Member) (string, bool) {
	if len(members) == 0 {
		return "", false
	}
	top, _, _ := strings.Cut(members[0].Name, "/")
	if slices.ContainsFunc(members, func(m tarutil.Member) bool { return m.Name != top && !strings.HasPrefix(m.Name, top+"/") }) {
		return "", false
	}
	return top, slices.ContainsFunc(members, func(m tarutil.Member) bool { return m.Name == top+"/"+manifestName && m.Type == tar.TypeReg })
}

// readManifest returns the bytes of the member from the tarball at file, gzip compressed
// (as npm packs and the registry serves them) or not. It returns nil, nil for another
// compression, which pkg reads but this does not.
func readManifest(file, member string) ([]byte, error) {
	f, err := regfile.Open(file, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	switch head, _ := br.Peek(262); {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	case len(head) < 262 || string(head[257:262]) != "ustar":
		return nil, nil
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err != nil {
			return nil, err // fetch.Inspect found the member: io.EOF is not expected
		}
		if path.Clean(strings.TrimPrefix(h.Name, "./")) != member {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(tr, maxManifest+1))
		if err == nil && len(data) > maxManifest {
			err = fmt.Errorf("over %d bytes", maxManifest)
		}
		return data, err
	}
}

// npmNamed reports whether data, a package.json, has a name and a version: what npm
// packs, and pkg publishes as kind npm. A manifest that does not parse is npm's too, so
// that npmEntry refuses it.
func npmNamed(data []byte) bool {
	var m struct{ Name, Version any }
	if json.Unmarshal(bytes.TrimPrefix(data, []byte("\uFEFF")), &m) != nil {
		return true
	}
	return m.Name != nil && m.Version != nil
}

// Scripts returns the lifecycle scripts of the npm tarball a, as Entry found them:
// preinstall, install, postinstall, and "binding.gyp" where npm would build one.
func (a *Archive) Scripts() []string { return a.scripts }

// Absent returns the commands the package.json of the npm tarball a names, as Entry read
// it, whose files a lacks: its entry leaves them out, as npm and pnpm install such a
// package without them. Commands given to Entry are never left out.
func (a *Archive) Absent() []repo.Command { return a.absent }

// npmEntry returns p completed from the manifest data of the npm tarball a, each part
// where p has none: kind npm, name and version, the description's first line as the summary
// (unless keepSummary), bin (without the commands whose files a lacks: Absent), dependencies (as depends, without the optional and bundled
// ones), optionalDependencies, peerDependencies not marked optional, os and cpu as the
// platform (npmPlatform). It returns too the lifecycle scripts the manifest declares.
func (a *Archive) npmEntry(p repo.Package, top string, data []byte, keepSummary bool) (repo.Package, []string, error) {
	var m manifest
	bad := func(field string, err error) error {
		return &ManifestError{Archive: a.Location, Member: top + "/" + manifestName, Field: field, Err: err}
	}
	if err := json.Unmarshal(bytes.TrimPrefix(data, []byte("\uFEFF")), &m); err != nil {
		if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) {
			return p, nil, bad(te.Field, fmt.Errorf("a JSON %s, not %s", te.Value, jsonKind(te.Type)))
		}
		return p, nil, bad("", err)
	}
	p.Kind = repo.KindNPM
	p.Name, p.Version = cmp.Or(p.Name, m.Name), cmp.Or(p.Version, m.Version)
	if err := checkNPMName(p.Name); err != nil {
		return p, nil, bad("name", err)
	}
	if err := repo.CheckNPMVersion(p.Version); err != nil {
		return p, nil, bad("version", err)
	}
	if !keepSummary {
		p.Summary = summary(m.Description)
	}
	var err error
	if p.Bin == nil {
		if p.Bin, err = npmBin(p.Name, top, m.Bin); err != nil {
			return p, nil, bad("bin", err)
		}
		a.absent = install.Absent(p.Bin, a.Members)
		p.Bin = slices.DeleteFunc(p.Bin, func(c repo.Command) bool { return slices.Contains(a.absent, c) })
		if m.Bin == nil {
			p.Bin = binDir(top, m.Directories.Bin, a.Members)
		}
	}
	if p.Platform == "" {
		if p.Platform, err = npmPlatform(m.OS, m.CPU); err != nil {
			return p, nil, bad("os, cpu", err)
		}
	}
	if err := m.relations(&p, bad); err != nil {
		return p, nil, err
	}
	return p, m.scripts(top, a.Members), nil
}

// jsonKind is what a manifest field of the Go type t is in JSON.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	}
	return "an object"
}

// summary is the first line of a description, control characters as spaces.
func summary(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s))
}

// relations sets p's depends, optional and peers where it has none (nil: no flag given),
// refusing a dependency that is not an npm range over a package name.
func (m *manifest) relations(p *repo.Package, bad func(string, error) error) error {
	bundled, err := m.bundled()
	if err != nil {
		return bad("bundleDependencies", err)
	}
	deps := maps.Clone(m.Dependencies)
	for name := range m.OptionalDependencies {
		delete(deps, name) // optionalDependencies override dependencies (npm)
	}
	peers := maps.Clone(m.PeerDependencies)
	for name := range peers {
		if m.PeerDependenciesMeta[name].Optional || deps[name] != "" || m.OptionalDependencies[name] != "" {
			delete(peers, name)
		}
	}
	for _, l := range []struct {
		field string
		deps  map[string]string
		list  *[]repo.Requirement
	}{
		{"dependencies", deps, &p.Depends},
		{"optionalDependencies", m.OptionalDependencies, &p.Optional},
		{"peerDependencies", peers, &p.Peers},
	} {
		if *l.list != nil {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(l.deps)) {
			if bundled == nil || bundled[name] {
				continue
			}
			r, err := npmRequirement(name, l.deps[name])
			if err != nil {
				return bad(l.field, err)
			}
			*l.list = append(*l.list, r)
		}
	}
	return nil
}

// bundled returns the names of the dependencies the tarball carries in its own
// node_modules (bundleDependencies), which are not required from outside; nil for all of
// them (true).
func (m *manifest) bundled() (map[string]bool, error) {
	raw := m.BundleDependencies
	if raw == nil {
		raw = m.BundledDependencies
	}
	names := map[string]bool{}
	if raw == nil || string(raw) == "false" || string(raw) == "null" {
		return names, nil
	}
	if string(raw) == "true" {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, errors.New("neither true nor a list of names")
	}
	for _, n := range list {
		names[n] = true
	}
	return names, nil
}

// checkNPMName refuses name, an npm package's, unless pkg takes it (repo.ValidName): npm's
// rule for new packages, or an old package's name with capitals (JSONStream), which npm
// still serves and installs.
func checkNPMName(name string) error {
	if !repo.ValidName(name) {
		return fmt.Errorf("%w: %s (npm's lower-case names, @SCOPE/NAME, or an old package's [A-Za-z0-9][A-Za-z0-9._-]*)", errNPMName, termtext.Quote(name))
	}
	return nil
}

// npmRequirement is the dependency name at spec, a range, as "NAME@npm:RANGE"; a tag
// (latest), URL, path, git or alias (npm:other@1) spec is refused, naming it.
func npmRequirement(name, spec string) (repo.Requirement, error) {
	if err := checkNPMName(name); err != nil {
		return repo.Requirement{}, err
	}
	r, err := repo.ParseRequirement(name + "@npm:" + spec)
	if err != nil {
		return repo.Requirement{}, fmt.Errorf("%s %q: only semver ranges are published (not tags, URLs, paths, git or npm: aliases): %w", name, spec, err)
	}
	return r, nil
}

// npmBin returns the commands of the bin field raw of the package named name: a string is
// one command named after the package (its name without the scope), a map names each;
// each path is in the top directory top, a command named by the base of its key (as npm
// does).
func npmBin(name, top string, raw json.RawMessage) ([]repo.Command, error) {
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		_, base, _ := strings.Cut(name, "/")
		return []repo.Command{npmCommand(cmp.Or(base, name), top, one)}, nil
	}
	var named map[string]string
	if err := json.Unmarshal(raw, &named); err != nil {
		return nil, errors.New("neither a path nor a map of command names to paths")
	}
	var bin []repo.Command
	for _, cmd := range slices.Sorted(maps.Keys(named)) {
		bin = append(bin, npmCommand(path.Base(cmd), top, named[cmd]))
	}
	return bin, nil
}

// binDir returns the commands of a package whose bin is its directories.bin, dir: each
// file in it or below whose name does not start with a dot, named by its base name, as
// npm's read-package-json does.
func binDir(top, dir string, members []tarutil.Member) []repo.Command {
	if dir == "" {
		return nil
	}
	in := path.Join(top, path.Join("/", dir)[1:]) + "/"
	var bin []repo.Command
	for _, m := range members {
		if rel, ok := strings.CutPrefix(m.Name, in); ok && m.Type != tar.TypeDir && !strings.HasPrefix(rel, ".") {
			bin = append(bin, repo.Command{Name: path.Base(rel), Path: m.Name})
		}
	}
	return bin
}

// npmCommand is the command name running file, a path relative to the package's
// directory top; repo refuses a path out of the archive, CheckRunnable one to no file.
func npmCommand(name, top, file string) repo.Command {
	return repo.Command{Name: name, Path: path.Join(top, file)}
}

// scripts returns the lifecycle scripts m declares, and "binding.gyp" for a package with
// one at its top and no install or preinstall script, which npm builds with node-gyp
// rebuild at install.
func (m *manifest) scripts(top string, members []tarutil.Member) []string {
	var declared []string
	for _, s := range lifecycleScripts {
		if _, ok := m.Scripts[s]; ok {
			declared = append(declared, s)
		}
	}
	_, install := m.Scripts["install"]
	_, preinstall := m.Scripts["preinstall"]
	if !install && !preinstall && slices.ContainsFunc(members, func(mb tarutil.Member) bool { return mb.Name == top+"/binding.gyp" }) {
		declared = append(declared, "binding.gyp")
	}
	return declared
}

// Node's process.platform and process.arch values, as Go spells them where it has them.
var (
	nodeOS   = map[string]string{"aix": "aix", "android": "android", "darwin": "darwin", "freebsd": "freebsd", "linux": "linux", "netbsd": "netbsd", "openbsd": "openbsd", "sunos": "solaris", "win32": "windows"}
	nodeArch = map[string]string{"arm": "arm", "arm64": "arm64", "ia32": "386", "loong64": "loong64", "mips": "mips", "mipsel": "mipsle", "mips64el": "mips64le", "ppc64": "ppc64", "riscv64": "riscv64", "s390x": "s390x", "x64": "amd64"}
)

// npmPlatform returns the platform of an entry whose package.json has os and cpu, lists
// whose entries are names or "!"-negated names (npm-install-checks): "" where Linux and
// every architecture are allowed (a list of negations only allows the rest);
// linux-ARCH where Linux is and cpu names one architecture; for a package that does not
// run on Linux, the first OS and architecture it names (amd64 where it names none), which
// a Linux resolution never takes. A cpu naming several architectures for Linux is refused:
// the entry holds one platform.
func npmPlatform(osRaw, cpuRaw json.RawMessage) (string, error) {
	oses, err := stringList(osRaw)
	if err != nil {
		return "", err
	}
	cpus, err := stringList(cpuRaw)
	if err != nil {
		return "", fmt.Errorf("cpu: %v", err)
	}
	goOS := "linux"
	if !allows(oses, "linux") {
		goOS = firstMapped(oses, nodeOS, "darwin")
	}
	named := slices.DeleteFunc(slices.Clone(cpus), func(c string) bool { return strings.HasPrefix(c, "!") || !allows(cpus, c) })
	switch {
	case goOS == "linux" && len(named) == 0:
		return "", nil
	case goOS == "linux" && len(named) > 1:
		return "", fmt.Errorf("cpu %q names several architectures; an entry has one platform (give it)", cpus)
	case goOS == "linux" && nodeArch[named[0]] == "":
		return "", fmt.Errorf("cpu %q: Go has no architecture %q", cpus, named[0])
	}
	arch := firstMapped(named, nodeArch, "amd64")
	if goOS == "linux" && arch == "ppc64" {
		arch = "ppc64le" // Node's ppc64 on Linux is little-endian
	}
	p := goOS + "-" + arch
	return p, repo.CheckPlatform(p)
}

// allows is npm-install-checks' checkList: value is in list, or list is only negations
// none of which is value (or empty, or "any").
func allows(list []string, value string) bool {
	if len(list) == 0 || len(list) == 1 && list[0] == "any" {
		return true
	}
	negated, match := 0, false
	for _, e := range list {
		if name, ok := strings.CutPrefix(e, "!"); ok {
			negated++
			if name == value {
				return false
			}
		} else if e == value {
			match = true
		}
	}
	return match || negated == len(list)
}

// firstMapped is the Go spelling of the first name of list that has one, else def.
func firstMapped(list []string, spell map[string]string, def string) string {
	for _, n := range list {
		if s, ok := spell[n]; ok {
			return s
		}
	}
	return def
}

// stringList decodes raw, a string or a list of strings, or nothing.
func stringList(raw json.RawMessage) ([]string, error) {
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, errors.New("neither a string nor a list of strings")
	}
	return list, nil
}

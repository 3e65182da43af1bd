package publish

import (
	"archive/tar"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"pkg/install"
	"pkg/repo"
	"pkg/tarutil"
)

// HasArchiveEnding reports whether name ends as an archive's name does: ".tar.gz", ".deb"...
func HasArchiveEnding(name string) bool {
	_, ok := cutEnding(name)
	return ok
}

func cutEnding(name string) (stem string, ok bool) {
	for _, e := range repo.ArchiveEndings {
		if s, ok := strings.CutSuffix(name, e); ok && s != "" {
			return s, true
		}
	}
	return name, false
}

// splitFileName returns the package name and version an archive's file name gives,
// NAME-VERSION and an archive's ending ("tool-1.0.tar.gz", "my-tool-2.1.0-rc1.tgz"): split
// at the first "-" after which a version starts. ok is false when it gives none. The name
// is lower case: one with capitals is an old npm package's, which its manifest names.
func splitFileName(file string) (name, version string, ok bool) {
	stem, ok := cutEnding(path.Base(file))
	if !ok {
		return "", "", false
	}
	for i := range len(stem) {
		if stem[i] != '-' {
			continue
		}
		if repo.ValidName(stem[:i]) && stem[:i] == strings.ToLower(stem[:i]) && repo.CheckVersion(stem[i+1:]) == nil {
			return stem[:i], stem[i+1:], true
		}
	}
	return "", "", false
}

// UnnamedError is a local archive file whose package name or version neither a .deb's
// control file, nor the file's name, nor the entry given says.
type UnnamedError struct{ Path string }

func (e *UnnamedError) Error() string {
	return fmt.Sprintf("archive %s: no package name and version: its file name is not NAME-VERSION and an archive's ending (such as tool-1.0.tar.gz)", e.Path)
}

// Local returns the entry of a, a local archive file installed as it is (pkg install
// ./FILE): npm pack's tarball whose package.json has a name and a version as Entry makes
// it (localNamed); else p completed from a .deb's control file's name, version, summary,
// provides, conflicts and replaces (not its depends: Debian's packages, which the
// repositories in use may not hold), else from
// the file's name (splitFileName), where p lacks a name or version; another npm tarball's
// Into (npmInto); as commands, where p names none, the
// files anyone may run directly in the archive's bin/, usr/bin/ or usr/local/bin/; the
// file's size and sha256, its name as the archive, and its absolute path as the Origin.
// The entry is checked as an index's would be (repo.NewIndex), its commands and library
// directories against the members of a.
func (a *Archive) Local(p repo.Package) (repo.Package, error) {
	if a.Remote {
		return p, fmt.Errorf("archive %s: not a local file", a.Location)
	}
	p, err := a.localNamed(p)
	if err != nil {
		return p, err
	}
	if p.Name == "" || p.Version == "" {
		name, version, ok := splitFileName(a.Path)
		if !ok {
			return p, &UnnamedError{Path: a.Location}
		}
		if p.Name == "" {
			p.Name = name
		}
		if p.Version == "" {
			p.Version = version
		}
	}
	if p.Bin == nil {
		p.Bin = commands(a.Members)
	}
	if p.Kind != repo.KindNPM {
		p = npmInto(p, a.Members)
	}
	p, err = a.checkEntry(p)
	if err != nil {
		return p, fmt.Errorf("archive %s: %w", a.Location, err)
	}
	abs, err := filepath.Abs(a.Path)
	if err != nil {
		return p, err
	}
	if p.Size, p.SHA256, err = repo.HashFile(abs); err != nil {
		return p, err
	}
	p.Archive, p.Origin, p.InstalledSize, p.Files = filepath.Base(abs), abs, a.Bytes, a.Stats.Files
	if _, err := repo.NewIndex(p); err != nil {
		return p, fmt.Errorf("archive %s: %w", a.Location, err)
	}
	return p, nil
}

// localNamed returns p completed as Entry completes a tarball as npm pack writes it (one
// top directory package/) whose package.json has a name and a version (npmEntry: kind npm,
// its dependencies and commands), as npm installs such a file; else from a .deb's control
// file (named). Unlike Entry, which takes the registry's tarballs of another top directory
// too (@types' estree/), it leaves another tarball of one top directory holding a
// package.json, such as a release's app-1.0.0/ with its node_modules, a plain tree. Its
// errors name the archive.
func (a *Archive) localNamed(p repo.Package) (repo.Package, error) {
	if top, ok := npmTop(a.Members); ok && top == "package" {
		if p, ok, err := a.npmNamedEntry(p, top, false); ok || err != nil {
			return p, err
		}
	}
	p, err := a.named(p, false)
	if err != nil || a.Control == nil {
		return p, wrapLocation(a.Location, err)
	}
	// Conflicts and Replaces hold whether the repositories offer the names or not, as
	// dpkg -i honours them: they are taken, unlike Depends (the flag's or none).
	return p, wrapLocation(a.Location, a.debRelations(&p, false))
}

// wrapLocation returns err, if not nil, as about the archive at location.
func wrapLocation(location string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("archive %s: %w", location, err)
}

// commandDirs are the directories whose runnable files commands takes as commands.
var commandDirs = []string{"bin", "usr/bin", "usr/local/bin"}

// commands returns the bin entries of the files anyone may run (or symlinks) directly in
// a bin/, usr/bin/ or usr/local/bin/ of members, in member order, one per command name,
// each of which leads to a file of the package or out of it (install.CheckRunnable).
func commands(members []tarutil.Member) []repo.Command {
	var bin []repo.Command
	var names []string
	for _, m := range members {
		dir, base := path.Split(m.Name)
		runnable := m.Type == tar.TypeSymlink || (m.Type == tar.TypeReg || m.Type == tar.TypeLink) && m.Mode&0o111 != 0
		if runnable && slices.Contains(commandDirs, strings.TrimSuffix(dir, "/")) && !slices.Contains(names, base) && !strings.HasPrefix(base, ".") {
			bin, names = append(bin, repo.ParseCommand(m.Name)), append(names, base)
		}
	}
	if install.CheckRunnable(bin, members, false) == nil { // each checked alone only when one fails
		return bin
	}
	return slices.DeleteFunc(bin, func(b repo.Command) bool { return install.CheckRunnable([]repo.Command{b}, members, false) != nil })
}

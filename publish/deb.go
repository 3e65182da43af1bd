package publish

import (
	"archive/tar"
	"fmt"
	"path"
	"slices"
	"strings"

	"pkg/fetch"
	"pkg/repo"
	"pkg/tarutil"
)

// A ControlError is a .deb's control field pkg cannot represent, naming the package, the
// field and the relation: the entry's own part, given, replaces it.
type ControlError = fetch.ControlError

// debPlatform returns the platform of a .deb of Debian's architecture arch, as an entry
// records it: linux-GOARCH, so that a machine of another architecture never takes it, as
// apt does not; "" (any) for all or none. An architecture Go has none for (x32, hurd-i386)
// is an *ArchError: as any platform, every machine would take it.
func debPlatform(name, version, arch string) (string, error) {
	if goarch := repo.GoArch(arch); goarch != "" {
		return "linux-" + goarch, nil
	}
	if arch == "" || arch == "all" {
		return "", nil
	}
	return "", &ArchError{Name: name, Version: version, Arch: arch}
}

// ArchError refuses a .deb of a Debian architecture that no platform pkg knows stands for.
type ArchError struct{ Name, Version, Arch string }

func (e *ArchError) Error() string {
	return fmt.Sprintf("%s %s is a .deb for Debian's architecture %q, which no platform of pkg's (Go's) stands for: "+
		"as a package for any platform every machine would install it", e.Name, e.Version, e.Arch)
}

// debCommandDirs are the directories a .deb's commands are taken from.
var debCommandDirs = []string{"usr/bin", "bin", "usr/sbin", "sbin"}

// maxHops bounds the links followed from a command to its file, as Linux's 40 (path_resolution(7)).
const maxHops = 40

// debCommands returns, in member order and one per name, the commands of a .deb's tree: the
// members directly in usr/bin, bin, usr/sbin or sbin, named by their file name, that are
// regular files with an execute bit, or links to one inside the package; for a package
// that depends on others (depends), also symlinks to a path it does not hold, which a
// dependency holds beside it in the root (install.CheckRunnable): python3-minimal's
// usr/bin/python3 -> python3.11, golang-go's usr/bin/go -> ../lib/go-1.19/bin/go.
func debCommands(members []tarutil.Member, depends bool) []repo.Command {
	byName := make(map[string]int, len(members))
	for i, m := range members {
		byName[m.Name] = i
	}
	var bin []repo.Command
	var names []string
	for i, m := range members {
		dir, base := path.Split(m.Name)
		if slices.Contains(debCommandDirs, strings.TrimSuffix(dir, "/")) && !strings.HasPrefix(base, ".") &&
			!slices.Contains(names, base) && executable(members, byName, i, depends) {
			bin, names = append(bin, repo.ParseCommand(m.Name)), append(names, base)
		}
	}
	return bin
}

// executable reports whether members[i] is, or leads through the package's links to, a
// regular member with an execute bit, or, with outside, a symlink's target the package
// does not hold.
func executable(members []tarutil.Member, byName map[string]int, i int, outside bool) bool {
	for range maxHops {
		m := members[i]
		var next string
		switch m.Type {
		case tar.TypeReg:
			return m.Mode&0o111 != 0
		case tar.TypeLink:
			next = m.Linkname
		case tar.TypeSymlink:
			next = path.Join(path.Dir(m.Name), m.Linkname) // the policy keeps it inside the package
		default:
			return false
		}
		j, ok := byName[next]
		if !ok {
			return outside && m.Type == tar.TypeSymlink
		}
		i = j
	}
	return false
}

// npmInto returns p with Into set, where it has none, to npm's global place for a package
// named p.Name, lib/node_modules/NAME, if members are an npm tarball's: all under
// package/, with package/package.json a file.
func npmInto(p repo.Package, members []tarutil.Member) repo.Package {
	if p.Into != "" || p.Name == "" || !slices.ContainsFunc(members, func(m tarutil.Member) bool {
		return m.Name == "package/package.json" && m.Type == tar.TypeReg
	}) {
		return p
	}
	for _, m := range members {
		if m.Name != "package" && !strings.HasPrefix(m.Name, "package/") {
			return p
		}
	}
	p.Into = "lib/node_modules/" + p.Name
	return p
}

package main

import (
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/internal/regfile"
	"pkg/publish"
	"pkg/repo"
	"pkg/report"
)

// localFlags are install's flags for the local archive files it is given.
func localFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "name", Usage: "a local archive's package name (default: a .deb's Package, an npm tarball's package.json name, else the file's NAME-VERSION.EXT)"},
		&cli.StringFlag{Name: "version", Usage: "a local archive's version (default: a .deb's Version, an npm tarball's package.json version, else the file's NAME-VERSION.EXT)"},
		&cli.StringSliceFlag{Name: "depends", Usage: "a local archive's dependency, from the repositories: name, name=V, name>=V, name<V (repeatable; default: an npm tarball's package.json dependencies)"},
		&cli.StringSliceFlag{Name: "bin", Usage: "a local archive's command, PATH or NAME=PATH (repeatable; default: an npm tarball's package.json bin, else the files anyone may run in its bin/, usr/bin/, usr/local/bin/)"},
		&cli.StringSliceFlag{Name: "lib", Usage: "a local archive's directory of shared libraries (repeatable)"},
	}
}

// isLocalArchive reports whether install's argument a names a local archive file rather
// than a package: a path that begins "/", "./" or "../", or an existing regular file whose
// name holds a "/" (which "repo/name" does too) or ends as an archive's does.
func isLocalArchive(a string) bool {
	switch {
	case strings.Contains(a, "://"):
		return false
	case strings.HasPrefix(a, "/") || strings.HasPrefix(a, "./") || strings.HasPrefix(a, "../"):
		return true
	case !strings.Contains(a, "/") && !publish.HasArchiveEnding(a):
		return false
	}
	info, err := os.Stat(a)
	return err == nil && info.Mode().IsRegular()
}

// localArchives gives the session the arguments of install that are local archive files
// (isLocalArchive), each as its entry (publish.Archive.Local) described by the flags, and
// returns the arguments with each file replaced by its package's name; an npm package's
// by NAME@VERSION, as the installed instances of its name, kept beside it, would answer
// the name alone.
func localArchives(c *cli.Context, args []string) ([]string, error) {
	var files []int // the indexes in args of the local archive files
	for i, a := range args {
		if isLocalArchive(a) {
			files = append(files, i)
		}
	}
	flags := []string{"name", "version", "depends", "bin", "lib"}
	switch {
	case len(files) == 0 && slices.ContainsFunc(flags, c.IsSet):
		return nil, usagef("install: --name, --version, --depends, --bin and --lib describe a local archive file, and none is given")
	case len(files) > 1 && (c.IsSet("name") || c.IsSet("version")):
		return nil, usagef("install: --name and --version describe one local archive file, and %d are given", len(files))
	case len(files) > 0 && c.Bool("reinstall"):
		return nil, usagef("install --reinstall: give names of installed packages, not files")
	}
	out := slices.Clone(args)
	for _, i := range files {
		p, err := localArchive(c, args[i])
		if err != nil {
			return nil, err
		}
		sess(c).Local = append(sess(c).Local, p)
		out[i] = p.Name
		if p.Kind == repo.KindNPM {
			out[i] += "@" + p.Version
		}
	}
	return out, nil
}

// localArchive reads the local archive file at path and returns its entry. A FIFO, a
// device or a directory is refused before it is opened: opening a FIFO waits for a writer.
func localArchive(c *cli.Context, path string) (repo.Package, error) {
	info, err := os.Stat(path)
	if err != nil {
		return repo.Package{}, fmt.Errorf("install: %w", err)
	}
	if !info.Mode().IsRegular() {
		return repo.Package{}, fmt.Errorf("install: %w", &fs.PathError{Op: "open", Path: path, Err: &regfile.NotRegularError{Type: info.Mode().Type()}})
	}
	a, err := publish.Open(c.Context, path)
	if err != nil {
		return repo.Package{}, fmt.Errorf("install: %w", err) // err names the file
	}
	defer a.Close()
	var bin []repo.Command
	if c.IsSet("bin") {
		bin = commandFlags(c)
	}
	var deps []repo.Requirement // none given: an npm tarball's own
	if c.IsSet("depends") {
		if deps, err = repo.ParseRequirements(c.StringSlice("depends")); err != nil {
			return repo.Package{}, fmt.Errorf("install: --depends: %w", err)
		}
	}
	p, err := a.Local(repo.Package{Name: c.String("name"), Version: c.String("version"),
		Depends: deps, Bin: bin, Lib: c.StringSlice("lib")})
	if err != nil {
		return p, fmt.Errorf("install: %w", err)
	}
	tellAll(c, warn, report.AbsentWarnings(p, a.Absent()))
	if s := report.ScriptsNote(p, a.Scripts()); s != "" {
		note(c, "%s", s)
	}
	if a.Control != nil && !c.IsSet("depends") {
		if deps := debDepends(a.Control.Relations); deps != "" {
			note(c, "%s depends on %s: Debian's names, not installed (give the packages it needs with --depends)", path, deps)
		}
	}
	return p, nil
}

// debDepends returns what a .deb's relation fields say it needs, as written: its
// Pre-Depends and its Depends, which repo add takes both; "" for none.
func debDepends(relations map[string]string) string {
	var deps []string
	for _, f := range []string{"Pre-Depends", "Depends"} {
		if v := relations[f]; v != "" {
			deps = append(deps, v)
		}
	}
	return strings.Join(deps, ", ")
}

// commandFlags returns the commands the --bin flags name, as an index writes them
// (repo.ParseCommand); the entry they go into checks them.
func commandFlags(c *cli.Context) []repo.Command {
	var bin []repo.Command
	for _, b := range c.StringSlice("bin") {
		bin = append(bin, repo.ParseCommand(b))
	}
	return bin
}

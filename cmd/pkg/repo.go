package main

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/fetch"
	"pkg/install"
	"pkg/repo"
)

func repoCommand() *cli.Command {
	return &cli.Command{
		Name:  "repo",
		Usage: "maintain a repository directory",
		Subcommands: []*cli.Command{{
			Name:      "add",
			Usage:     "copy an archive into a repository and add it to the index",
			ArgsUsage: "REPO_DIR ARCHIVE",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "name", Usage: "package name (required but for a .deb: its Package)"},
				&cli.StringFlag{Name: "version", Usage: "package version (required but for a .deb: its Version)"},
				&cli.StringSliceFlag{Name: "depends", Usage: "a dependency: name, name=V, name>=V, name<V (repeatable)"},
				&cli.StringSliceFlag{Name: "bin", Usage: "a command: its file's path inside the package, or NAME=PATH to name it otherwise; installed executable (repeatable)"},
				&cli.StringSliceFlag{Name: "lib", Usage: "a directory of shared libraries inside the package, on LD_LIBRARY_PATH for its commands and those of the packages depending on it (repeatable)"},
				&cli.StringFlag{Name: "summary", Usage: "one line describing the package (for a .deb: its Description's first line)"},
				&cli.BoolFlag{Name: "replace", Usage: "replace the entry of the same name and version, if it differs"},
			}, signFlags("sign the new index with this key file, as 'pkg repo sign' does (repeatable)")...),
			Action: repoAddAction,
		}, {
			Name:      "remove",
			Usage:     "remove a package, or one version of it, from a repository's index and delete its archive",
			ArgsUsage: "REPO_DIR NAME[=VERSION]",
			Flags: append([]cli.Flag{
				&cli.BoolFlag{Name: "force", Usage: "remove it even if other packages in the index depend on it"},
			}, signFlags("sign the new index with this key file, as 'pkg repo sign' does (repeatable)")...),
			Action: repoRemoveAction,
		}, noArgs(repoKeygenCommand()), repoSignCommand(), noArgs(repoForgetCommand())},
	}
}

// noArgs makes cmd, whose action reads no arguments, refuse any.
func noArgs(cmd *cli.Command) *cli.Command {
	cmd.Before = func(c *cli.Context) error { return maxArgs(c, 0) }
	return cmd
}

// readRepoIndex returns the index in dir, or an empty one if it cannot be read, and
// whether dir has none.
func readRepoIndex(dir string) (ix *repo.Index, missing bool) {
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		return &repo.Index{}, errors.Is(err, fs.ErrNotExist)
	}
	if ix, err = repo.Parse(data); err != nil {
		return &repo.Index{}, false
	}
	return ix, false
}

func repoAddAction(c *cli.Context) error {
	if err := maxArgs(c, 2); err != nil {
		return err
	}
	if c.NArg() < 2 {
		return usagef("repo add: want REPO_DIR ARCHIVE, got %s", count(c.NArg(), "argument"))
	}
	dir, archive := c.Args().Get(0), c.Args().Get(1)
	st, err := fetch.Inspect(archive)
	if err != nil {
		return err
	}
	name, version, summary := c.String("name"), c.String("version"), c.String("summary")
	if ctl := st.Control; ctl != nil {
		name, version = cmp.Or(name, ctl.Package), cmp.Or(version, ctl.Version)
		if !c.IsSet("summary") {
			summary = ctl.Description
		}
		if ctl.Depends != "" && !c.IsSet("depends") {
			note(c, "%s depends on %s: Debian's names, not recorded (give the pkg packages it needs with --depends)", archive, ctl.Depends)
		}
	}
	if name == "" || version == "" {
		return usagef("repo add: --name and --version are required (a .deb's control file gives them)")
	}
	var bins []string
	for _, b := range c.StringSlice("bin") {
		bins = append(bins, repo.CleanBin(b))
	}
	if err := install.CheckRunnable(bins, st.Members); err != nil {
		return fmt.Errorf("repo add %s %s: %w", name, version, err)
	}
	var libs []string
	for _, l := range c.StringSlice("lib") {
		libs = append(libs, path.Clean(l))
	}
	if err := install.CheckLib(libs, st.Members); err != nil {
		return fmt.Errorf("repo add %s %s: %w", name, version, err)
	}
	signer, keys, err := newSigner(c, "")
	if err != nil {
		return err
	}
	before, created := readRepoIndex(dir)
	add := repo.Package{
		Name: name, Version: version, Depends: c.StringSlice("depends"),
		Bin: bins, Lib: libs, Summary: summary, InstalledSize: st.Bytes, Files: st.Files,
	}
	if !c.Bool("replace") {
		if err := checkRepublish(dir, archive, before, add); err != nil {
			return err
		}
	}
	p, meta, err := repo.AddSigned(dir, archive, add, signer)
	if err != nil {
		return err
	}
	if created {
		note(c, "%s had no index.json: this is a new repository", dir)
	}
	say(c, "added %s %s to %s: %s, %s, %s, sha256 %s", p.Name, p.Version, dir, p.Archive, size(p.Size), count(p.Files, "file"), p.SHA256)
	if rel, ok := repo.PreRelease(p.Version); ok {
		note(c, "%s is a pre-release of %s: it sorts before %s, and installs take a release while there is one (a packaging revision of %s is written %s-1 or %s+1)",
			p.Version, rel, rel, rel, rel, rel)
	}
	for _, q := range before.Packages {
		if q.Name == p.Name && q.Version == p.Version {
			note(c, "this replaced the entry of %s %s (archive %s, depends %q, bin %q)", q.Name, q.Version, q.Archive, q.Depends, q.Bin)
		}
	}
	for _, d := range p.Depends { // the index now holds before's packages and p
		r, err := repo.ParseRequirement(d)
		if err == nil && r.Name != p.Name && !slices.ContainsFunc(before.Packages, func(q repo.Package) bool { return q.Name == r.Name }) {
			note(c, "%s %s depends on %s, which %s does not offer (yet)", p.Name, p.Version, d, dir)
		}
	}
	if dirs := install.LibDirs(st.Members); len(p.Lib) == 0 && len(dirs) > 0 {
		note(c, "%s %s has shared libraries in %s: --lib %s puts them on LD_LIBRARY_PATH for the commands of the packages that depend on it",
			p.Name, p.Version, strings.Join(dirs, ", "), strings.Join(dirs, " --lib "))
	}
	if signer != nil {
		saySigned(c, dir, meta, keys)
	}
	return nil
}

func repoRemoveAction(c *cli.Context) error {
	if c.NArg() != 2 {
		return usagef("repo remove: want REPO_DIR NAME[=VERSION], got %s", count(c.NArg(), "argument"))
	}
	dir := c.Args().Get(0)
	name, version, pinned := strings.Cut(c.Args().Get(1), "=")
	if pinned && version == "" {
		return usagef("repo remove: no version after %q", c.Args().Get(1))
	}
	signer, keys, err := newSigner(c, "")
	if err != nil {
		return err
	}
	res, err := repo.Remove(dir, repo.Removal{Name: name, Version: version, Force: c.Bool("force")}, signer)
	if err != nil {
		return err
	}
	for _, p := range res.Packages {
		say(c, "removed %s %s from %s", p.Name, p.Version, dir)
	}
	for _, a := range res.Archives {
		say(c, "deleted %s", filepath.Join(dir, filepath.FromSlash(a)))
	}
	for _, n := range res.Broken {
		warn(c, "%s %s depends on %s, which %s no longer satisfies", n.Name, n.Version, n.Depends, dir)
	}
	if signer != nil {
		saySigned(c, dir, res.Meta, keys)
	}
	return nil
}

// checkRepublish refuses to add p, from archive, to the repository dir whose index is ix,
// when ix has the same name and version with another archive or other metadata: users
// who installed it would hold something the index no longer describes.
func checkRepublish(dir, archive string, ix *repo.Index, p repo.Package) error {
	i := slices.IndexFunc(ix.Packages, func(q repo.Package) bool { return q.Name == p.Name && q.Version == p.Version })
	if i < 0 {
		return nil
	}
	q := ix.Packages[i]
	_, sum, err := repo.HashFile(archive)
	if err != nil {
		return err
	}
	same := sum == q.SHA256 && slices.Equal(q.Depends, p.Depends) &&
		slices.Equal(q.Bin, p.Bin) && slices.Equal(q.Lib, p.Lib) && q.Summary == p.Summary
	if same {
		return nil
	}
	return fmt.Errorf("repo add: %s already has %s %s (archive %s, sha256 %s), which this would change under the users who installed it: publish a new version, or pass --replace",
		dir, q.Name, q.Version, q.Archive, q.SHA256)
}

package main

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/fetch"
	"pkg/install"
	"pkg/internal/units"
	"pkg/repo"
)

// repoAddAction adds an archive to a repository directory, checking that its commands and
// library directories are in it, and notes what the new entry may lack.
func repoAddAction(c *cli.Context) error {
	if err := maxArgs(c, 2); err != nil {
		return err
	}
	if c.NArg() < 2 {
		return usagef("repo add: want REPO_DIR ARCHIVE, got %s", units.Count(c.NArg(), "argument"))
	}
	dir, archive := c.Args().Get(0), c.Args().Get(1)
	platform := c.String("platform")
	if platform != "" {
		if err := repo.CheckPlatform(platform); err != nil {
			return usagef("repo add: --platform: %v", err)
		}
	}
	local, remote, cleanup, err := fetch.Local(c.Context, archive)
	if err != nil {
		return err
	}
	defer cleanup()
	st, err := fetch.Inspect(local)
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
	before, created := repo.ReadDir(dir)
	add := repo.Package{
		Name: name, Version: version, Depends: c.StringSlice("depends"),
		Bin: bins, Lib: libs, Summary: summary, InstalledSize: st.Bytes, Files: st.Files, Platform: platform,
	}
	if !c.Bool("replace") {
		if err := repo.CheckRepublish(dir, local, before, add); err != nil {
			return err
		}
	}
	var p repo.Package
	var meta repo.Meta
	if remote {
		p, meta, err = repo.AddURL(dir, archive, local, add, signer)
	} else {
		p, meta, err = repo.AddSigned(dir, archive, add, signer)
	}
	if err != nil {
		return err
	}
	if created {
		note(c, "%s had no index.json: this is a new repository", dir)
	}
	say(c, "added %s %s to %s: %s, %s, %s, sha256 %s", p.Name, p.Version, dir, p.Archive, units.Size(p.Size), units.Count(p.Files, "file"), p.SHA256)
	if rel, ok := repo.PreRelease(p.Version); ok {
		note(c, "%s is a pre-release of %s: it sorts before %s, and installs take a release while there is one (a packaging revision of %s is written %s-1 or %s+1)",
			p.Version, rel, rel, rel, rel, rel)
	}
	for _, q := range before.Packages {
		if q.Name == p.Name && q.Version == p.Version && q.Platform == p.Platform {
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

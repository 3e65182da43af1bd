package main

import (
	"cmp"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/internal/units"
	"pkg/publish"
	"pkg/repo"
)

// repoAddAction adds an archive to a repository directory (publish.Add), and notes what
// the new entry may lack.
func repoAddAction(c *cli.Context) error {
	if err := maxArgs(c, 2); err != nil {
		return err
	}
	if c.NArg() < 2 {
		return usagef("repo add: want REPO_DIR ARCHIVE, got %s", units.Count(c.NArg(), "argument"))
	}
	dir, archive := c.Args().Get(0), c.Args().Get(1)
	if platform := c.String("platform"); platform != "" {
		if err := repo.CheckPlatform(platform); err != nil {
			return usagef("repo add: --platform: %v", err)
		}
	}
	a, err := publish.Open(c.Context, archive)
	if err != nil {
		return err
	}
	defer a.Close()
	p := repo.Package{Name: c.String("name"), Version: c.String("version"), Depends: c.StringSlice("depends"),
		Bin: c.StringSlice("bin"), Lib: c.StringSlice("lib"), Summary: c.String("summary"), Platform: c.String("platform")}
	if ctl := a.Control; ctl != nil {
		p.Name, p.Version = cmp.Or(p.Name, ctl.Package), cmp.Or(p.Version, ctl.Version)
		if !c.IsSet("summary") {
			p.Summary = ctl.Description
		}
		if ctl.Depends != "" && !c.IsSet("depends") {
			note(c, "%s depends on %s: Debian's names, not recorded (give the pkg packages it needs with --depends)", archive, ctl.Depends)
		}
	}
	if p.Name == "" || p.Version == "" {
		return usagef("repo add: --name and --version are required (a .deb's control file gives them)")
	}
	signer, keys, err := newSigner(c, "")
	if err != nil {
		return err
	}
	res, err := publish.Add(dir, a, p, c.Bool("replace"), signer)
	if err != nil {
		return err
	}
	if p = res.Package; res.Created {
		note(c, "%s had no index.json: this is a new repository", dir)
	}
	say(c, "added %s %s to %s: %s, %s, %s, sha256 %s", p.Name, p.Version, dir, p.Archive, units.Size(p.Size), units.Count(p.Files, "file"), p.SHA256)
	if rel, ok := repo.PreRelease(p.Version); ok {
		note(c, "%s is a pre-release of %s: it sorts before %s, and installs take a release while there is one (a packaging revision of %s is written %s-1 or %s+1)",
			p.Version, rel, rel, rel, rel, rel)
	}
	for _, q := range res.Replaced {
		note(c, "this replaced the entry of %s %s (archive %s, depends %q, bin %q)", q.Name, q.Version, q.Archive, q.Depends, q.Bin)
	}
	for _, d := range res.Missing {
		note(c, "%s %s depends on %s, which %s does not offer (yet)", p.Name, p.Version, d, dir)
	}
	if len(res.LibDirs) > 0 {
		note(c, "%s %s has shared libraries in %s: --lib %s puts them on LD_LIBRARY_PATH for the commands of the packages that depend on it",
			p.Name, p.Version, strings.Join(res.LibDirs, ", "), strings.Join(res.LibDirs, " --lib "))
	}
	if signer != nil {
		saySigned(c, dir, res.Meta, keys)
	}
	return nil
}

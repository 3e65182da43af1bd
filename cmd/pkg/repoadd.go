package main

import (
	"cmp"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/publish"
	"pkg/repo"
	"pkg/report"
)

// repoAddAction adds an archive to a repository directory (publish.Add), and notes what
// the new entry may lack.
func repoAddAction(c *cli.Context) error {
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
	added, notes := report.AddedText(dir, res)
	tellAll(c, note, notes)
	say(c, "%s", added)
	if p = res.Package; len(res.LibDirs) > 0 {
		note(c, "%s %s has shared libraries in %s: --lib %s puts them on LD_LIBRARY_PATH for the commands of the packages that depend on it",
			p.Name, p.Version, strings.Join(res.LibDirs, ", "), strings.Join(res.LibDirs, " --lib "))
	}
	if signer != nil {
		saySigned(c, dir, res.Meta, keys)
	}
	return nil
}

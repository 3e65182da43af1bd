package main

import (
	"github.com/urfave/cli/v2"

	"pkg/fetch"
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
				&cli.StringFlag{Name: "name", Usage: "package name (required)"},
				&cli.StringFlag{Name: "version", Usage: "package version (required)"},
				&cli.StringSliceFlag{Name: "depends", Usage: "a dependency: name, name=V, name>=V, name<V (repeatable)"},
				&cli.StringSliceFlag{Name: "bin", Usage: "an executable's path inside the package (repeatable)"},
				&cli.StringFlag{Name: "summary", Usage: "one line describing the package"},
			}, signFlags("sign the new index with this key file, as 'pkg repo sign' does (repeatable)")...),
			Action: repoAddAction,
		}, repoKeygenCommand(), repoSignCommand(), repoForgetCommand()},
	}
}

func repoAddAction(c *cli.Context) error {
	if c.NArg() != 2 {
		return usagef("repo add: want REPO_DIR ARCHIVE, got %d arguments", c.NArg())
	}
	if c.String("name") == "" || c.String("version") == "" {
		return usagef("repo add: --name and --version are required")
	}
	dir, archive := c.Args().Get(0), c.Args().Get(1)
	st, err := fetch.Inspect(archive)
	if err != nil {
		return err
	}
	signer, keys, err := newSigner(c, "")
	if err != nil {
		return err
	}
	p, meta, err := repo.AddSigned(dir, archive, repo.Package{
		Name: c.String("name"), Version: c.String("version"), Depends: c.StringSlice("depends"),
		Bin: c.StringSlice("bin"), Summary: c.String("summary"), InstalledSize: st.Bytes, Files: st.Files,
	}, signer)
	if err != nil {
		return err
	}
	say(c, "added %s %s to %s: %s, %s, %s, sha256 %s", p.Name, p.Version, dir, p.Archive, size(p.Size), count(p.Files, "file"), p.SHA256)
	if signer != nil {
		saySigned(c, dir, meta, keys)
	}
	return nil
}

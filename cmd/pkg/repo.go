package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/internal/cliusage"
	"pkg/repo"
	"pkg/report"
)

func repoCommand() *cli.Command {
	return &cli.Command{
		Name:  "repo",
		Usage: "maintain a repository directory",
		Subcommands: []*cli.Command{{
			Name:      "add",
			Usage:     "copy an archive into a repository, or record the http(s) URL it is published at, and add it to the index",
			ArgsUsage: "REPO_DIR ARCHIVE",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "name", Usage: "package name (required but for a .deb: its Package)"},
				&cli.StringFlag{Name: "version", Usage: "package version (required but for a .deb: its Version)"},
				&cli.StringSliceFlag{Name: "depends", Usage: "a dependency: name, name=V, name>=V, name<V (repeatable)"},
				&cli.StringSliceFlag{Name: "bin", Usage: "a command: its file's path inside the package, or NAME=PATH to name it otherwise; installed executable (repeatable)"},
				&cli.StringSliceFlag{Name: "lib", Usage: "a directory of shared libraries inside the package, on LD_LIBRARY_PATH for its commands and those of the packages depending on it (repeatable)"},
				&cli.StringFlag{Name: "summary", Usage: "one line describing the package (for a .deb: its Description's first line)"},
				&cli.StringFlag{Name: "platform", Usage: "the platform the package runs on, GOOS-GOARCH such as linux-amd64 (default: any)"},
				&cli.BoolFlag{Name: "replace", Usage: "replace the entry of the same name and version, if it differs"},
			}, signFlags("sign the new index with this key file, as 'pkg repo sign' does (repeatable)")...),
			Before: cliusage.All(takes(0, 2, ""), want(2, "REPO_DIR ARCHIVE")),
			Action: repoAddAction,
		}, {
			Name:      "remove",
			Usage:     "remove a package, or one version of it, from a repository's index and delete its archive",
			ArgsUsage: "REPO_DIR NAME[=VERSION]",
			Flags: append([]cli.Flag{
				&cli.BoolFlag{Name: "force", Usage: "remove it even if other packages in the index depend on it"},
			}, signFlags("sign the new index with this key file, as 'pkg repo sign' does (repeatable)")...),
			Before: want(2, "REPO_DIR NAME[=VERSION]"),
			Action: repoRemoveAction,
		}, noArgs(repoKeygenCommand()), repoSignCommand(), repoForgetCommand(), noArgs(repoListCommand())},
	}
}

func repoRemoveAction(c *cli.Context) error {
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
	lines, warnings := report.RemovedText(dir, res)
	tellAll(c, say, lines)
	tellAll(c, warn, warnings)
	if signer != nil {
		saySigned(c, dir, res.Meta, keys)
	}
	return nil
}

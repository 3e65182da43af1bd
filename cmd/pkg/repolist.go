package main

import (
	"github.com/urfave/cli/v2"

	"pkg/report"
)

func repoListCommand() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "show the repositories in effect, in the order names resolve from them: name, priority, URLs, keys and where each was given",
		Flags: []cli.Flag{jsonFlag("repos")},
		Action: func(c *cli.Context) error {
			rs, err := repositories(c)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return report.Write(c.App.Writer, report.NewRepos(report.ReposOf(rs)))
			}
			if len(rs) == 0 {
				say(c, "no repositories: pass --repo, set PKG_REPO or configure one (docs/config.md)")
			}
			tellAll(c, say, report.ReposText(report.ReposOf(rs)))
			return nil
		},
	}
}

package main

import (
	"github.com/urfave/cli/v2"

	"pkg/config"
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
				return report.Write(c.App.Writer, report.NewRepos(reportRepos(rs)))
			}
			if len(rs) == 0 {
				say(c, "no repositories: pass --repo, set PKG_REPO or configure one (docs/config.md)")
			}
			for _, line := range report.ReposText(reportRepos(rs)) {
				say(c, "%s", line)
			}
			return nil
		},
	}
}

// reportRepos returns rs as pkg repo list reports them.
func reportRepos(rs []config.Repo) []report.Repository {
	out := make([]report.Repository, len(rs))
	for i, r := range rs {
		out[i] = report.Repository{Name: r.Name, URLs: r.URLs, Keys: r.Keys, Priority: r.Priority, From: r.File}
	}
	return out
}

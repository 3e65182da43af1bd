package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"pkg/config"
	"pkg/report"
	"pkg/trust"
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
			for _, r := range rs {
				say(c, "%s", repoLine(r))
				for i, u := range r.URLs {
					say(c, "  %s %s", map[bool]string{true: "url   ", false: "mirror"}[i == 0], u)
				}
				for _, s := range r.Keys {
					id := "?"
					if k, err := trust.ParsePublicKey(s); err == nil {
						id = k.ID()
					}
					say(c, "  key    %s %s", id, s)
				}
			}
			return nil
		},
	}
}

// repoLine is the head line of r in pkg repo list.
func repoLine(r config.Repo) string {
	if r.File == "--repo" || r.File == "PKG_REPO" {
		return fmt.Sprintf("%s (from %s)", r.Name, r.File)
	}
	return fmt.Sprintf("%s (priority %d, from %s)", r.Name, r.Priority, r.File)
}

// reportRepos returns rs as pkg repo list --json reports them.
func reportRepos(rs []config.Repo) []report.Repository {
	out := make([]report.Repository, len(rs))
	for i, r := range rs {
		out[i] = report.Repository{Name: r.Name, URLs: r.URLs, Keys: r.Keys, Priority: r.Priority, From: r.File}
	}
	return out
}

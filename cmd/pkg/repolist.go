package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

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
				return report.Write(c.App.Writer, report.NewRepos(rs))
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
func repoLine(r report.Repository) string {
	if r.From == "--repo" || r.From == "PKG_REPO" {
		return fmt.Sprintf("%s (from %s)", r.Name, r.From)
	}
	return fmt.Sprintf("%s (priority %d, from %s)", r.Name, r.Priority, r.From)
}

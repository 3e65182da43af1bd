package main

import (
	"maps"
	"slices"

	"github.com/urfave/cli/v2"

	"pkg/repo"
	"pkg/report"
	"pkg/txn"
)

func whyCommand() *cli.Command {
	return &cli.Command{
		Name:         "why",
		Usage:        "say why a package is installed: whether it was asked for, and which installed packages need it",
		ArgsUsage:    "NAME",
		Flags:        []cli.Flag{jsonFlag("why")},
		BashComplete: completeInstalled,
		Action: func(c *cli.Context) error {
			name, err := oneArg(c, "package name")
			if err != nil {
				return err
			}
			recs, requested, err := installedAndRequested(c)
			if err != nil {
				return err
			}
			if err := needInstalled("why", []string{name}, recs); err != nil {
				return err
			}
			p, _ := findRec(recs, name)
			neededBy, chains := repo.Why(txn.Installed(recs), slices.Collect(maps.Keys(requested)), name)
			w := report.NewWhy(&p, requested[name], neededBy, chains)
			if c.Bool("json") {
				return printJSON(c, w)
			}
			return w.WriteText(c.App.Writer, " ('pkg autoremove' removes it)")
		},
	}
}

package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

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
			printWhy(c, w)
			return nil
		},
	}
}

func printWhy(c *cli.Context, w report.Why) {
	out := c.App.Writer
	nv := w.Name + " " + w.Version
	if w.Requested != "" {
		fmt.Fprintf(out, "%s was asked for, as %s\n", nv, w.Requested)
	}
	switch {
	case len(w.NeededBy) == 0 && w.Requested == "":
		fmt.Fprintf(out, "%s was not asked for and no installed package needs it ('pkg autoremove' removes it)\n", nv)
		return
	case len(w.NeededBy) == 0:
		fmt.Fprintf(out, "%s is needed by no other installed package\n", nv)
		return
	}
	fmt.Fprintf(out, "%s is needed by %s\n", nv, strings.Join(w.NeededBy, ", "))
	for _, ch := range w.Chains {
		fmt.Fprintf(out, "  %s\n", strings.Join(ch, " -> "))
	}
	if len(w.Chains) == 0 && w.Requested == "" {
		fmt.Fprintf(out, "no package that was asked for needs it ('pkg autoremove' removes it)\n")
	}
}

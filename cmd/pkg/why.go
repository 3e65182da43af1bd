package main

import (
	"io"

	"github.com/urfave/cli/v2"

	"pkg/report"
)

func whyCommand() *cli.Command {
	return &cli.Command{
		Name:         "why",
		Usage:        "say why a package is installed: whether it was asked for, and which installed packages need it",
		ArgsUsage:    "NAME",
		Flags:        []cli.Flag{jsonFlag("why")},
		BashComplete: completeInstalled,
		Before:       takes(1, 1, "package name"),
		Action: func(c *cli.Context) error {
			name := c.Args().First()
			recs, requested, err := installedAndRequested(c)
			if err == nil {
				err = needInstalled("why", []string{name}, recs)
			}
			if err != nil {
				return err
			}
			w := report.WhyOf(recs, requested, name)
			return show(c, w, func(out io.Writer) error { return w.WriteText(out, " ('pkg autoremove' removes it)") })
		},
	}
}

package main

import (
	"github.com/urfave/cli/v2"

	"pkg/report"
)

func listCommand() *cli.Command {
	return &cli.Command{
		Name:   "list",
		Usage:  "list installed packages",
		Flags:  []cli.Flag{jsonFlag("list")},
		Before: takes(0, 0, ""),
		Action: func(c *cli.Context) error {
			ps, requested, err := installedAndRequested(c)
			if err != nil {
				return err
			}
			l := report.NewList(ps, requested)
			return show(c, l, l.WriteText)
		},
	}
}

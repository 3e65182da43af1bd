package main

import (
	"github.com/urfave/cli/v2"

	"pkg/txn"
)

func autoremoveCommand() *cli.Command {
	return &cli.Command{
		Name:   "autoremove",
		Usage:  "remove the packages that were installed as dependencies and that no package asked for needs any more",
		Flags:  planFlags(),
		Before: planning(0, 0, "", rootExists),
		Action: func(c *cli.Context) error {
			return removeChosen(c, "nothing to remove: every installed package was asked for or is needed by one that was", txn.Unneeded)
		},
	}
}

package main

import (
	"fmt"
	"strings"

	"pkg/txn"

	"github.com/urfave/cli/v2"
)

func removeCommand() *cli.Command {
	return &cli.Command{
		Name:      "remove",
		Usage:     "remove installed packages",
		ArgsUsage: "NAME...",
		Flags:     planFlags(),
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 1, "package name"); err != nil {
				return err
			}
			if err := checkPlanFlags(c); err != nil {
				return err
			}
			names := unique(c.Args().Slice())
			if err := rootExists(c); err != nil {
				return fmt.Errorf("remove %s: not installed: %w", strings.Join(names, " "), err)
			}
			if c.Bool("dry-run") {
				recs, err := peekRecords(c)
				if err == nil {
					err = needInstalled("remove", names, recs)
				}
				if err != nil {
					return err
				}
				return showPlan(c, txn.RemovePlan(c.String("root"), recs, names), nil)
			}
			root, err := openRoot(c)
			if err != nil {
				return err
			}
			defer root.Close()
			recs, err := root.DB().List()
			if err == nil {
				err = needInstalled("remove", names, recs)
			}
			if err != nil {
				return err
			}
			return apply(c, root, txn.RemovePlan(root.Dir(), recs, names), nil)
		},
	}
}

package main

import (
	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/txn"
)

func autoremoveCommand() *cli.Command {
	return &cli.Command{
		Name:  "autoremove",
		Usage: "remove the packages that were installed as dependencies and that no package asked for needs any more",
		Flags: planFlags(),
		Action: func(c *cli.Context) error {
			if err := maxArgs(c, 0); err != nil {
				return err
			}
			if err := checkPlanFlags(c); err != nil {
				return err
			}
			if err := rootExists(c); err != nil {
				return err
			}
			if c.Bool("dry-run") {
				var recs []db.Package
				var names []string
				err := peekRoot(c, func(d *db.DB) (err error) { recs, names, err = txn.Unneeded(d); return err })
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
			recs, names, err := txn.Unneeded(root.DB())
			if err != nil {
				return err
			}
			if len(names) == 0 {
				say(c, "nothing to remove: every installed package was asked for or is needed by one that was")
				return nil
			}
			return apply(c, root, txn.RemovePlan(root.Dir(), recs, names), nil)
		},
	}
}

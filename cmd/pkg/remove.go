package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/txn"
)

func removeCommand() *cli.Command {
	return &cli.Command{
		Name:         "remove",
		Usage:        "remove installed packages",
		ArgsUsage:    "NAME...",
		Flags:        planFlags(),
		Before:       planning(1, -1, "package name"),
		BashComplete: completeInstalled,
		Action: func(c *cli.Context) error {
			names := unique(c.Args().Slice())
			if err := sess(c).RootExists(); err != nil {
				return fmt.Errorf("remove %s: not installed: %w", strings.Join(names, " "), err)
			}
			return removeChosen(c, "", txn.RemovePlan, func(d *db.DB) ([]db.Record, []string, error) {
				recs, err := d.List()
				if err == nil {
					err = needInstalled("remove", names, recs)
				}
				return recs, names, err
			})
		},
	}
}

// removeChosen removes the packages pick chooses from the root's database, by the plan
// plan makes of them, or for a dry run shows that plan; none is what it says when pick
// chooses none.
func removeChosen(c *cli.Context, none string, plan func(root string, recs []db.Record, names []string) *txn.Plan,
	pick func(d *db.DB) ([]db.Record, []string, error)) error {
	var recs []db.Record
	var names []string
	read := func(d *db.DB) (err error) { recs, names, err = pick(d); return err }
	if c.Bool("dry-run") {
		if err := sess(c).PeekRoot(read); err != nil {
			return err
		}
		p := plan(c.String("root"), recs, names)
		if err := sess(c).CheckPlan(p); err != nil {
			return err
		}
		return showPlan(c, p, nil)
	}
	root, err := sess(c).OpenRoot(c.Context)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := read(root.DB()); err != nil {
		return err
	}
	if len(names) == 0 {
		say(c, "%s", none)
		return nil
	}
	return apply(c, root, plan(root.Dir(), recs, names), nil)
}

func autoremoveCommand() *cli.Command {
	return &cli.Command{
		Name:   "autoremove",
		Usage:  "remove the packages that were installed as dependencies and that no package asked for needs any more",
		Flags:  planFlags(),
		Before: planning(0, 0, "", rootExists),
		Action: func(c *cli.Context) error {
			return removeChosen(c, "nothing to remove: every installed package was asked for or is needed by one that was", txn.UnneededPlan, txn.Unneeded)
		},
	}
}

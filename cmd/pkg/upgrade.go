package main

import (
	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/report"
	"pkg/txn"
)

func upgradeCommand() *cli.Command {
	return &cli.Command{
		Name:  "upgrade",
		Usage: "move installed packages to the newest versions the other installed packages allow",
		Description: "With names, only those packages and the installed packages they depend on move;\n" +
			"the rest stay as they are and their depends constrain the upgrade. All are staged,\n" +
			"then swapped in together: the root holds all the new versions or none.",
		ArgsUsage: "[NAME...]",
		Flags:     planFlags(),
		Before:    planning(0, -1, "", rootExists),
		Action:    upgradeAction,
	}
}

func upgradeAction(c *cli.Context) error {
	names := unique(c.Args().Slice())
	var requested map[string]string
	list := func(d *db.DB) (recs []db.Package, err error) {
		if recs, requested, err = txn.ReadInstalled(d); err == nil {
			err = needInstalled("upgrade", names, recs)
		}
		return recs, err
	}
	if err := sess(c).PeekRoot(func(d *db.DB) error { _, err := list(d); return err }); err != nil { // a typo needs no index
		return err
	}
	return change(c, list, func(dir string, ix *txn.Index, recs []db.Package, cache *fetch.Cache) (*txn.Plan, error) {
		return txn.UpgradePlan(dir, ix, recs, names, requested, cache)
	}, func(_ *install.Root, plan *txn.Plan) bool {
		for _, h := range plan.Held {
			say(c, "%s", report.HeldText(h))
		}
		switch {
		case plan.Empty() && len(plan.Held) > 0:
			say(c, "nothing to upgrade")
		case plan.Empty():
			say(c, "everything is up to date")
		}
		return !plan.Empty()
	})
}

package main

import (
	"slices"

	"github.com/urfave/cli/v2"

	"pkg/db"
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
		Action:    upgradeAction,
	}
}

func upgradeAction(c *cli.Context) error {
	names := unique(c.Args().Slice())
	if err := checkPlanFlags(c); err != nil {
		return err
	}
	if err := rootExists(c); err != nil {
		return err
	}
	var recs []db.Package
	check := func(d *db.DB) (err error) {
		if recs, err = d.List(); err == nil {
			err = needInstalled("upgrade", names, recs)
		}
		return err
	}
	if err := peekRoot(c, check); err != nil { // a typo needs no index
		return err
	}
	dry := c.Bool("dry-run")
	f, ix, err := openFetcher(c, dry) // the root's accepted index bounds a rollback
	if err != nil {
		return err
	}
	if dry {
		plan, err := txn.UpgradePlan(c.String("root"), ix, recs, names, f.Cache)
		if err != nil {
			return err
		}
		return showPlan(c, plan, f.Cache)
	}
	root, f, ix, err := openRootFor(c, f, ix)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := check(root.DB()); err != nil { // again: another command may have changed the root
		return err
	}
	plan, err := txn.UpgradePlan(root.Dir(), ix, recs, names, f.Cache)
	if err != nil {
		return err
	}
	for _, h := range plan.Held {
		say(c, "%s", report.HeldText(h))
	}
	switch {
	case plan.Empty() && len(plan.Held) > 0:
		say(c, "nothing to upgrade")
		return nil
	case plan.Empty():
		say(c, "everything is up to date")
		return nil
	}
	return apply(c, root, plan, f)
}

// findRec returns the record of name among recs.
func findRec(recs []db.Package, name string) (db.Package, bool) {
	if i := slices.IndexFunc(recs, func(p db.Package) bool { return p.Name == name }); i >= 0 {
		return recs[i], true
	}
	return db.Package{}, false
}

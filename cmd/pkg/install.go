package main

import (
	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/repo"
	"pkg/report"
	"pkg/txn"
)

func installCommand() *cli.Command {
	return &cli.Command{
		Name:      "install",
		Usage:     "install packages and their dependencies",
		ArgsUsage: "NAME[@VERSION|CONSTRAINT]...",
		Flags: append([]cli.Flag{&cli.BoolFlag{Name: "reinstall",
			Usage: "install the named installed packages again, same version and archive (puts back what pkg verify reports)"}},
			planFlags()...),
		Before: planning(1, -1, "package name"),
		Action: installAction,
	}
}

func installAction(c *cli.Context) error {
	reqs, err := requirements(c.Args().Slice())
	if err != nil {
		return err
	}
	reinstall := c.Bool("reinstall")
	names := make([]string, len(reqs))
	for i, r := range reqs {
		if reinstall && len(r.Constraints) > 0 {
			return usagef("install --reinstall: give names of installed packages, not %s", r)
		}
		names[i] = r.Name
	}
	return change(c, (*db.DB).List, func(dir string, ix *txn.Index, recs []db.Package, cache *fetch.Cache) (*txn.Plan, error) {
		if reinstall {
			return txn.ReinstallPlan(dir, ix, recs, names, cache)
		}
		return txn.InstallPlan(dir, ix, recs, reqs, cache)
	}, func(root *install.Root, plan *txn.Plan) bool {
		for _, k := range plan.Unchanged {
			say(c, "%s %s is already installed", k.Name, k.Version)
		}
		if !reinstall {
			root.Request(reqs) // recorded by the commit
		}
		return true
	})
}

// requirements parses the command's arguments as requirements, refusing a bad one as a
// usage error.
func requirements(args []string) ([]repo.Requirement, error) {
	reqs, err := repo.ParseRequirements(args)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return reqs, nil
}

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

func fetchCommand() *cli.Command {
	return &cli.Command{
		Name:      "fetch",
		Usage:     "download packages and their dependencies into the cache without installing",
		ArgsUsage: "NAME[@VERSION|CONSTRAINT]...",
		Before:    takes(1, -1, "package name"),
		Action: func(c *cli.Context) error {
			reqs, err := requirements(c.Args().Slice())
			if err != nil {
				return err
			}
			sess(c).Observer().(progress).Verbose() // naming what the cache had too
			return sess(c).Fetch(c.Context, reqs)
		},
	}
}

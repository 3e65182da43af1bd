package main

import (
	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/repo"
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

package main

import (
	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/fetch"
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
		Action: installAction,
	}
}

func installAction(c *cli.Context) (err error) {
	if err := needArgs(c, 1, "package name"); err != nil {
		return err
	}
	reqs, err := requirements(c.Args().Slice())
	if err != nil {
		return err
	}
	if err := checkPlanFlags(c); err != nil {
		return err
	}
	for _, r := range reqs {
		if c.Bool("reinstall") && len(r.Constraints) > 0 {
			return usagef("install --reinstall: give names of installed packages, not %s", r)
		}
	}
	root, plan, f, err := planned(c, (*db.DB).List, func(dir string, ix *txn.Index, recs []db.Package, cache *fetch.Cache) (*txn.Plan, error) {
		return installPlan(c, dir, ix, recs, reqs, cache)
	})
	if root != nil {
		defer func() { closeRoot(root, err) }()
	}
	if err != nil || root == nil {
		return err
	}
	for _, k := range plan.Unchanged {
		say(c, "%s %s is already installed", k.Name, k.Version)
	}
	if !c.Bool("reinstall") {
		root.Request(reqs) // recorded by the commit
	}
	return pathHint(c, root, apply(c, root, plan, f))
}

// installPlan is the plan of an install, or of a reinstall with --reinstall.
func installPlan(c *cli.Context, dir string, ix *txn.Index, recs []db.Package, reqs []repo.Requirement, cache *fetch.Cache) (*txn.Plan, error) {
	if c.Bool("reinstall") {
		names := make([]string, len(reqs))
		for i, r := range reqs {
			names[i] = r.Name
		}
		return txn.ReinstallPlan(dir, ix, recs, names, cache)
	}
	return txn.InstallPlan(dir, ix, recs, reqs, cache)
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

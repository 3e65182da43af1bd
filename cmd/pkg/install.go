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
		Usage:     "install packages and their dependencies, from the repositories or local archive files",
		ArgsUsage: "NAME[@VERSION|CONSTRAINT]|FILE...",
		Description: "A FILE is a local archive (./tool-1.0.tar.gz, /tmp/x.deb): installed as it is, its\n" +
			"dependencies from the repositories, and held: upgrade leaves it, and 'pkg install REPO/NAME'\n" +
			"takes a repository's version instead.",
		Flags: append(append([]cli.Flag{&cli.BoolFlag{Name: "reinstall",
			Usage: "install the named installed packages again, same version and archive (puts back what pkg verify reports)"}},
			localFlags()...), planFlags()...),
		Before:       planning(1, -1, "package name"),
		BashComplete: completeOffered,
		Action:       installAction,
	}
}

func installAction(c *cli.Context) error {
	args, err := localArchives(c, c.Args().Slice())
	if err != nil {
		return err
	}
	reqs, err := requirements(c, args)
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
	var requested map[string]string
	list := func(d *db.DB) (recs []db.Record, err error) {
		recs, requested, err = txn.ReadInstalled(d)
		return recs, err
	}
	return change(c, list, func(dir string, ix *txn.Catalog, recs []db.Record, cache *fetch.Cache) (*txn.Plan, error) {
		if reinstall {
			return txn.ReinstallPlan(dir, ix, recs, names, cache)
		}
		return txn.InstallPlan(dir, ix, recs, reqs, requested, cache)
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

// requirements parses args, the arguments of the command of c, as requirements, refusing
// a bad one, or a file (isLocalArchive) where install has not taken it, as a usage error.
func requirements(c *cli.Context, args []string) ([]repo.Requirement, error) {
	for _, a := range args {
		switch {
		case !isLocalArchive(a):
		case c.Command.Name == "sync":
			return nil, usagef("sync: %q is a file, not a package name: give a lockfile with --file (-f)", a)
		default:
			return nil, usagef("%s: %q is a file, not a package name: only install takes local archive files", c.Command.FullName(), a)
		}
	}
	reqs, err := repo.ParseRequirements(args)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return reqs, nil
}

func upgradeCommand() *cli.Command {
	return &cli.Command{
		Name:  "upgrade",
		Usage: "move installed packages to the newest versions the other installed packages and the holds allow",
		Description: "With names, only those packages and the installed packages they depend on move;\n" +
			"the rest stay as they are and their depends constrain the upgrade. All are staged,\n" +
			"then swapped in together: the root holds all the new versions or none.\n" +
			"A package installed with a version or constraint (NAME=V, NAME@V, 'NAME>=V') is held:\n" +
			"it moves only within that, and a name with a new constraint moves it and holds it there.",
		ArgsUsage:    "[NAME[CONSTRAINT]...]",
		Flags:        planFlags(),
		Before:       planning(0, -1, "", rootExists),
		BashComplete: completeInstalled,
		Action:       upgradeAction,
	}
}

func upgradeAction(c *cli.Context) error {
	reqs, names := upgradeArgs(c.Args().Slice())
	var requested map[string]string
	list := func(d *db.DB) (recs []db.Record, err error) {
		if recs, requested, err = txn.ReadInstalled(d); err == nil {
			err = needInstalled("upgrade", names, recs)
		}
		return recs, err
	}
	if err := sess(c).PeekRoot(func(d *db.DB) error { _, err := list(d); return err }); err != nil { // a typo needs no index
		return err
	}
	return change(c, list, func(dir string, ix *txn.Catalog, recs []db.Record, cache *fetch.Cache) (*txn.Plan, error) {
		return txn.UpgradePlan(dir, ix, recs, reqs, requested, cache)
	}, func(root *install.Root, plan *txn.Plan) bool {
		for _, h := range plan.Held {
			say(c, "%s", report.HeldText(h))
		}
		switch {
		case plan.Empty() && len(plan.Held) > 0:
			say(c, "nothing to upgrade")
		case plan.Empty():
			say(c, "everything is up to date")
		}
		if holds := newHolds(reqs, requested); len(holds) > 0 {
			root.Request(holds) // recorded by the commit
			return true
		}
		return !plan.Empty()
	})
}

// upgradeArgs returns upgrade's arguments as requirements, and the names they give. A name
// with a constraint is a new hold; one with a repository is refused, as a name is.
func upgradeArgs(args []string) (reqs []repo.Requirement, names []string) {
	for _, a := range args {
		r, err := repo.ParseRequirement(a)
		if err != nil || len(r.Constraints) == 0 || r.Repo != "" {
			r = repo.Requirement{Name: a} // checked as a name by needInstalled
		}
		reqs = append(reqs, r)
		names = append(names, r.Name)
	}
	return reqs, unique(names)
}

// newHolds returns the requirements of reqs with a constraint, each keeping the repository
// its package was requested from (requested, db.Requested): the requests to record.
func newHolds(reqs []repo.Requirement, requested map[string]string) []repo.Requirement {
	var holds []repo.Requirement
	for _, r := range reqs {
		if len(r.Constraints) == 0 {
			continue
		}
		if was, err := repo.ParseRequirement(requested[r.Name]); err == nil {
			r.Repo = was.Repo
		}
		holds = append(holds, r)
	}
	return holds
}

func fetchCommand() *cli.Command {
	return &cli.Command{
		Name:         "fetch",
		Usage:        "download packages and their dependencies into the cache without installing",
		ArgsUsage:    "NAME[@VERSION|CONSTRAINT]...",
		Before:       takes(1, -1, "package name"),
		BashComplete: completeOffered,
		Action: func(c *cli.Context) error {
			reqs, err := requirements(c, c.Args().Slice())
			if err != nil {
				return err
			}
			sess(c).Observer().(progress).Verbose() // naming what the cache had too
			return sess(c).Fetch(c.Context, reqs)
		},
	}
}

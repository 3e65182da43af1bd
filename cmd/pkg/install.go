package main

import (
	"slices"

	"github.com/urfave/cli/v2"

	"pkg/repo"
	"pkg/report"
	"pkg/session"
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
	r := session.Request{Op: session.Install, Requires: reqs}
	if c.Bool("reinstall") {
		r = session.Request{Op: session.Reinstall}
		for _, q := range reqs {
			if len(q.Constraints) > 0 && (len(q.Constraints) > 1 || q.Constraints[0].Op != "@") {
				return usagef("install --reinstall: give names of installed packages, not %s", q)
			}
			name := q.Name
			if len(q.Constraints) > 0 { // NAME@VERSION picks one of several versions installed
				name += "@" + q.Constraints[0].Version
			}
			r.Names = append(r.Names, name)
		}
	}
	p, err := plan(c, r)
	if p == nil {
		return err
	}
	for _, k := range p.Unchanged {
		if !k.WasDependency {
			say(c, "%s %s is already installed", k.Name, k.Version)
		}
	}
	return applyRecorded(c, p)
}

// applyRecorded is apply that, once the change is committed, also says which packages it
// recorded otherwise (sayRecorded).
func applyRecorded(c *cli.Context, p *txn.Plan) error {
	out, err := applied(c, p)
	if out != nil && out.Committed {
		sayRecorded(c, p)
	}
	return err
}

// sayRecorded says which packages of p, committed, were installed as dependencies and
// are now recorded as asked for, and which were asked for and are now recorded as
// dependencies alone, naming the version asked for where the change replaced it.
func sayRecorded(c *cli.Context, p *txn.Plan) {
	for _, k := range slices.Concat(p.Changes, p.Unchanged) {
		switch {
		case k.WasDependency:
			say(c, "%s %s is already installed, as a dependency until now: recorded as asked for, so autoremove keeps it", k.Name, k.Version)
		case k.WasRequested && k.From != "" && k.From != k.Version:
			say(c, "%s %s was asked for until now: %s %s is recorded as a dependency, as the lockfile has it, so autoremove takes it once nothing needs it", k.Name, k.From, k.Name, k.Version)
		case k.WasRequested:
			say(c, "%s %s was asked for until now: recorded as a dependency, as the lockfile has it, so autoremove takes it once nothing needs it", k.Name, k.Version)
		}
	}
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
	p, err := plan(c, session.Request{Op: session.Upgrade, Requires: upgradeArgs(c.Args().Slice())})
	if p == nil {
		return err
	}
	beside := 0
	for _, h := range p.Held {
		if h.Beside != "" {
			beside++
			continue
		}
		say(c, "%s", report.HeldText(h))
	}
	if beside > 0 {
		note(c, "%s%s", report.BesideText(beside), cmdlineOf(c).carry(" ('pkg outdated --all' lists them)", false))
	}
	switch {
	case len(p.Changes) == 0 && len(p.Held) > 0:
		say(c, "nothing to upgrade")
	case len(p.Changes) == 0:
		say(c, "everything is up to date")
	}
	return apply(c, p) // records new holds, if any
}

// upgradeArgs returns upgrade's arguments as requirements. A name with a constraint is a
// new hold; one with a repository or alternatives is refused, as a name is.
func upgradeArgs(args []string) (reqs []repo.Requirement) {
	for _, a := range args {
		r, err := repo.ParseRequirement(a)
		if err != nil || len(r.Constraints) == 0 || r.Repo != "" || len(r.Or) > 0 {
			r = repo.Requirement{Name: a} // checked as a name (session.NeedInstalled)
		}
		reqs = append(reqs, r)
	}
	return reqs
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
			observer(c).Verbose() // naming what the cache had too
			return sess(c).Fetch(c.Context, reqs)
		},
	}
}

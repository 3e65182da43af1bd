package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"pkg/report"
	"pkg/runner"
	"pkg/session"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run a package's command from a root of pkg's own, without installing it into --root",
		ArgsUsage: "NAME[@VERSION|CONSTRAINT] [--] [ARGS...]",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "with", Usage: "also put this package, NAME[@VERSION|CONSTRAINT], in the command's root (repeatable)"},
			&cli.StringFlag{Name: "cmd", Usage: "the command to run, when the package has several"},
			&cli.StringFlag{Name: "lock", Usage: "take the packages at the versions and sha256s this lockfile records for this platform", TakesFile: true},
			&cli.BoolFlag{Name: "refresh", Usage: "read the repository's index now, even if a run read it in the last " + fmt.Sprint(runner.MaxAge.Minutes()) + " minutes"},
		},
		Before: takes(1, -1, "package name"),
		Action: runAction,
	}
}

func runAction(c *cli.Context) error {
	c.App.Writer = c.App.ErrWriter // stdout is the command's alone
	reqs, err := requirements(c, append([]string{c.Args().First()}, c.StringSlice("with")...))
	if err != nil {
		return err
	}
	args := c.Args().Tail()
	if len(args) > 0 && args[0] == "--" { // the flags end at NAME: "--" is not the command's
		args = args[1:]
	}
	req := runner.Request{Package: reqs[0], With: reqs[1:], Command: c.String("cmd"), Lock: c.String("lock")}
	r, err := sess(c).Run(c.Context, req, session.RunOptions{Refresh: c.Bool("refresh"), LockRepos: lockRepos(c)})
	if ce := (*runner.CommandError)(nil); errors.As(err, &ce) && len(ce.Commands)+len(ce.Others) > 0 {
		return usagef("%v (--cmd NAME picks one)", err)
	} else if err != nil && req.Lock != "" {
		return syncError(c, req.Lock, req.Package.String(), nil, err)
	} else if err != nil {
		return err
	}
	if r.Outcome != nil {
		note(c, "installed %s into %s for this run", report.InstalledText(r.Outcome), r.Root)
	}
	if r.NoMemo != nil {
		note(c, "the next run of %s resolves it again: %v", reqs[0], r.NoMemo)
	}
	return r.Exec(args, os.Environ())
}

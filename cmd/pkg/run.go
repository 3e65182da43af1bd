package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/repo"
	"pkg/runner"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run a package's command from a root of pkg's own, without installing it into --root",
		ArgsUsage: "NAME[@VERSION|CONSTRAINT] [-- ARGS...]",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "with", Usage: "also put this package, NAME[@VERSION|CONSTRAINT], in the command's root (repeatable)"},
			&cli.StringFlag{Name: "cmd", Usage: "the command to run, when the package has several"},
			&cli.StringFlag{Name: "lock", Usage: "take the packages at the versions and sha256s this lockfile records for this platform", TakesFile: true},
			&cli.BoolFlag{Name: "refresh", Usage: "read the repository's index now, even if a run read it in the last " + fmt.Sprint(runner.MaxAge.Minutes()) + " minutes"},
		},
		Action: runAction,
	}
}

func runAction(c *cli.Context) error {
	c.App.Writer = c.App.ErrWriter // stdout is the command's alone
	if err := needArgs(c, 1, "package name"); err != nil {
		return err
	}
	reqs, err := requirements(append([]string{c.Args().First()}, c.StringSlice("with")...))
	if err != nil {
		return err
	}
	o, err := sourceOptions(c, nil)
	if err != nil {
		return err
	}
	repos, err := repositories(c)
	if err != nil {
		return err
	}
	req := runner.Request{Package: reqs[0], With: reqs[1:], Command: c.String("cmd"), Trust: o.Trust, Root: c.String("root"), Lock: c.String("lock")}
	for _, r := range repos {
		req.Repos = append(req.Repos, runner.Repo{Name: r.Name, Location: r.URLs[0], Keys: r.Keys})
	}
	args := c.Args().Tail()
	if len(args) > 0 && args[0] == "--" { // the flags end at NAME: "--" is not the command's
		args = args[1:]
	}
	if !c.Bool("refresh") {
		if r, ok := runner.Reuse(c.Context, c.String("cache"), req, c.Bool("offline")); ok {
			return r.Exec(args, os.Environ())
		}
	}
	w := runner.Watch(c.String("cache"), req)
	if req.Lock != "" {
		l, err := repo.ReadLock(req.Lock)
		if err != nil {
			return err
		}
		if err := checkLockSigned(c, l, req.Lock); err != nil {
			return err
		}
	}
	f, ix, err := openFetcher(c, false)
	if err != nil {
		return err
	}
	ro := rootOptions(c)
	ro.Waiting = func(holder string) {
		fmt.Fprintf(c.App.ErrWriter, "pkg: waiting for %s to finish making the root of this run\n", holder)
	}
	var r *runner.Run
	err = f.Observer.(*progress).during(nil, func() error { r, err = runner.Make(c.Context, f, ix, req, w, ro); return err })
	if ce := (*runner.CommandError)(nil); errors.As(err, &ce) && len(ce.Commands)+len(ce.Others) > 0 {
		return usagef("%v (--cmd NAME picks one)", err)
	}
	if err != nil {
		return err
	}
	if r.Outcome != nil {
		var made []string
		for _, res := range r.Outcome.Results {
			made = append(made, res.Name+" "+res.Version)
		}
		note(c, "installed %s into %s for this run", strings.Join(made, ", "), r.Root)
	}
	if r.NoMemo != nil {
		note(c, "the next run of %s resolves it again: %v", reqs[0], r.NoMemo)
	}
	return r.Exec(args, os.Environ())
}

package main

import (
	"errors"
	"os"

	"github.com/urfave/cli/v2"

	"pkg/install"
	"pkg/internal/shell"
	"pkg/report"
	"pkg/txn"
)

// apply makes the change plan plans in root, fetching through f (nil for a plan that
// fetches nothing), and reports what it did. Once a change that fetched committed (with
// command links wrong or not), it says, once per root, how to put the root's bin/ on PATH
// when it is not (session.TellPath).
func apply(c *cli.Context, root *install.Root, plan *txn.Plan, f *txn.Fetcher) (err error) {
	var out *txn.Outcome
	if f == nil {
		out, err = plan.Apply(c.Context, root, nil)
	} else {
		err = f.Observer.(progress).During(plan.Packages(), func() error { out, err = plan.Apply(c.Context, root, f); return err })
	}
	if out == nil {
		return err
	}
	done := err == nil || errors.As(err, new(*install.LinksError)) // committed all the same
	told := report.AppliedText(out, plan.FromLock(), root.Salvaged(), root.Dir(), done, " ('pkg autoremove' removes it)")
	tellAll(c, warn, told.Warnings) // said under --quiet too
	sess(c).TellCopy(out.Results, func(how, why string) bool {
		note(c, "%s: copying %s instead of sharing blocks", why, how)
		return !c.Bool("quiet")
	})
	tellAll(c, say, told.Out)
	tellAll(c, note, told.Notes)
	if done && f != nil {
		sess(c).TellPath(root, os.Getenv("PATH"), func(bin string) bool {
			note(c, "%s is not on PATH; to run the commands pkg installs there, add it in your shell's profile: export PATH=%s", bin, shell.Quote(bin+":")+`"$PATH"`)
			return !c.Bool("quiet")
		})
	}
	return err
}

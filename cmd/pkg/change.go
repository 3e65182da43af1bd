package main

import (
	"errors"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/internal/shell"
	"pkg/report"
	"pkg/txn"
)

// planFlags are the flags of a command that changes the root and can show its plan instead.
func planFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "print what the command would do, and change nothing"},
		&cli.BoolFlag{Name: "json", Usage: "with --dry-run, print the plan as JSON (schema " + txn.Schema + ", docs/json/plan.md)"},
	}
}

// checkPlanFlags refuses --json without --dry-run: there is no plan to print.
func checkPlanFlags(c *cli.Context) error {
	if c.Bool("json") && !c.Bool("dry-run") {
		return usagef("%s: --json prints the plan of a dry run: pass --dry-run too", c.Command.Name)
	}
	return nil
}

// showPlan prints plan: as JSON with --json, else a line per change and a total.
// Offline, it refuses as the change would a plan that needs what cache (if not nil) lacks.
func showPlan(c *cli.Context, plan *txn.Plan, cache *fetch.Cache) error {
	if cache != nil && c.Bool("offline") {
		if err := plan.CheckCached(cache); err != nil {
			return err
		}
	}
	return show(c, plan, func(w io.Writer) error { return report.WritePlan(w, plan) })
}

// change makes a change's plan (session.Change) from the index of --repo and the root's
// records, which recs reads; a dry run shows it, else it is applied unless ready, told of
// it first, says there is nothing to do.
func change(c *cli.Context, recs func(d *db.DB) ([]db.Record, error),
	plan func(dir string, ix *txn.Catalog, recs []db.Record, cache *fetch.Cache) (*txn.Plan, error),
	ready func(root *install.Root, p *txn.Plan) bool) error {
	show := func(p *txn.Plan, cache *fetch.Cache) error { return showPlan(c, p, cache) }
	return sess(c).Change(c.Context, recs, plan, show, func(root *install.Root, p *txn.Plan, f *txn.Fetcher) error {
		if !ready(root, p) {
			return nil
		}
		return apply(c, root, p, f)
	})
}

// apply makes the change plan plans in root, fetching through f (nil for a plan that
// fetches nothing), and reports what it did. Once a change that fetched committed (with
// command links wrong or not), it says, once per root, how to put the root's bin/ on PATH
// when it is not (session.TellPath).
func apply(c *cli.Context, root *install.Root, plan *txn.Plan, f *txn.Fetcher) (err error) {
	var out *txn.Outcome
	if f == nil {
		out, err = plan.Apply(c.Context, root, nil)
	} else {
		err = sess(c).Observer().During(plan.Packages(), func() error { out, err = plan.Apply(c.Context, root, f); return err })
	}
	if out == nil {
		return err
	}
	done := err == nil || errors.As(err, new(*install.LinksError)) // committed all the same
	told := report.AppliedText(out, plan.FromLock(), root.Salvaged(), root.Dir(), done, " ('pkg autoremove' removes it)")
	tellAll(c, warn, told.Warnings)
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

package main

import (
	"errors"
	"io"

	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
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

// change makes a change's plan from the index of --repo and the root's records, which
// recs reads (again under the root's lock: another command may have changed them). A dry
// run shows the plan, reading the root without its lock; else change applies the plan
// unless ready, told of it first, says there is nothing to do.
func change(c *cli.Context, recs func(d *db.DB) ([]db.Package, error),
	plan func(dir string, ix *txn.Index, recs []db.Package, cache *fetch.Cache) (*txn.Plan, error),
	ready func(root *install.Root, p *txn.Plan) bool) (err error) {
	dry := c.Bool("dry-run")
	f, ix, err := openFetcher(c, dry) // the root's accepted index bounds a rollback
	if err != nil {
		return err
	}
	if dry {
		var rs []db.Package
		if err := peekRoot(c, func(d *db.DB) (err error) { rs, err = recs(d); return err }); err != nil {
			return err
		}
		p, err := plan(c.String("root"), ix, rs, f.Cache)
		if err != nil {
			return err
		}
		return showPlan(c, p, f.Cache)
	}
	root, f, ix, err := openRootFor(c, f, ix)
	if err != nil {
		return err
	}
	defer func() { closeRoot(root, err) }()
	rs, err := recs(root.DB())
	if err != nil {
		return err
	}
	p, err := plan(root.Dir(), ix, rs, f.Cache)
	if err != nil || !ready(root, p) {
		return err
	}
	return pathHint(c, root, apply(c, root, p, f))
}

// readOnlyRoot opens the root to read without its lock, or returns nil where there is none.
func readOnlyRoot(c *cli.Context) (*install.Root, error) {
	err := install.Exists(c.String("root"))
	if errors.Is(err, install.ErrNoRoot) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return install.OpenReadOnly(c.String("root"), rootOptions(c))
}

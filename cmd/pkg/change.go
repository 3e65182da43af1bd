package main

import (
	"io"

	"github.com/urfave/cli/v2"

	"pkg/report"
	"pkg/session"
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

// plan returns the plan of r (session.Plan), names not installed refused as a usage error.
// For a dry run it prints the plan (as JSON with --json, else a line per change and a
// total) and returns nil.
func plan(c *cli.Context, r session.Request) (*txn.Plan, error) {
	p, err := sess(c).Plan(c.Context, r)
	if err != nil {
		return nil, rootKept(nameUsage(err))
	}
	if c.Bool("dry-run") {
		defer p.Close()
		return nil, show(c, p, func(w io.Writer) error { return report.WritePlan(w, p, c.Command.Name) })
	}
	return p, nil
}

// apply applies p, which gives up the root, and says what it did (report.AppliedText).
func apply(c *cli.Context, p *txn.Plan) error {
	_, err := applied(c, p)
	return err
}

// applied is apply that also returns the Outcome, for a command that says more once the
// change is committed.
func applied(c *cli.Context, p *txn.Plan) (*txn.Outcome, error) {
	out, err := p.Apply(c.Context)
	if out == nil {
		return nil, rootKept(err)
	}
	told := report.AppliedText(out, cmdlineOf(c).carry(" ('pkg autoremove' removes what is no longer needed)", false))
	tellAll(c, warn, told.Warnings)
	tellAll(c, say, told.Out)
	tellAll(c, note, told.Notes)
	return out, err
}

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/internal/units"
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
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(plan)
	}
	w := c.App.Writer
	for _, ch := range plan.Changes {
		what := string(ch.Action) + " " + ch.Name + " " + ch.Version
		if ch.From != "" {
			what = string(ch.Action) + " " + ch.Name + " " + ch.From + " to " + ch.Version
		}
		var about []string
		if ch.Why != "" {
			about = append(about, ch.Why)
		}
		if ch.Download > 0 {
			about = append(about, units.Size(ch.Download)+" to download")
		}
		if len(about) > 0 {
			what += " (" + strings.Join(about, "; ") + ")"
		}
		fmt.Fprintln(w, what)
	}
	for _, k := range plan.Unchanged {
		fmt.Fprintf(w, "%s %s is already installed\n", k.Name, k.Version)
	}
	for _, h := range plan.Held {
		fmt.Fprintf(w, "keep %s at %s: %s\n", h.Name, h.Version, h.Detail.Why())
	}
	disk := units.Size(abs(plan.Disk)) + " more disk space"
	if plan.Disk < 0 {
		disk = units.Size(-plan.Disk) + " of disk space freed"
	}
	fmt.Fprintf(w, "dry run: %s, %s to download, %s; nothing was changed\n", units.Count(len(plan.Changes), "change"), units.Size(plan.Download), disk)
	return nil
}

func abs(n int64) int64 { return max(n, -n) }

// peekRecords returns the root's records without its lock, or none where there is no root.
func peekRecords(c *cli.Context) ([]db.Package, error) {
	var recs []db.Package
	err := peekRoot(c, func(d *db.DB) (err error) {
		recs, err = d.List()
		return err
	})
	return recs, err
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

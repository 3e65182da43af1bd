package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/repo"
	"pkg/txn"
)

func upgradeCommand() *cli.Command {
	return &cli.Command{
		Name:  "upgrade",
		Usage: "move installed packages to the newest versions the other installed packages allow",
		Description: "With names, only those packages and the installed packages they depend on move;\n" +
			"the rest stay as they are and their depends constrain the upgrade. All are staged,\n" +
			"then swapped in together: the root holds all the new versions or none.",
		ArgsUsage: "[NAME...]",
		Flags:     planFlags(),
		Action:    upgradeAction,
	}
}

func upgradeAction(c *cli.Context) error {
	names := unique(c.Args().Slice())
	if err := checkPlanFlags(c); err != nil {
		return err
	}
	if err := rootExists(c); err != nil {
		return err
	}
	var recs []db.Package
	check := func(d *db.DB) (err error) {
		if recs, err = d.List(); err == nil {
			err = needInstalled("upgrade", names, recs)
		}
		return err
	}
	if err := peekRoot(c, check); err != nil { // a typo needs no index
		return err
	}
	dry := c.Bool("dry-run")
	f, ix, err := openFetcher(c, dry) // the root's accepted index bounds a rollback
	if err != nil {
		return err
	}
	if dry {
		plan, err := txn.UpgradePlan(c.String("root"), ix, recs, names, f.Cache)
		if err != nil {
			return err
		}
		return showPlan(c, plan, f.Cache)
	}
	root, f, ix, err := openRootFor(c, f, ix)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := check(root.DB()); err != nil { // again: another command may have changed the root
		return err
	}
	plan, err := txn.UpgradePlan(root.Dir(), ix, recs, names, f.Cache)
	if err != nil {
		return err
	}
	for _, h := range plan.Held {
		if h.From != h.Version {
			say(c, "%s goes from %s to %s, not further: %s", h.Name, h.From, h.Version, heldReason(h.Detail))
			continue
		}
		say(c, "kept %s at %s: %s", h.Name, h.Version, heldReason(h.Detail))
	}
	switch {
	case plan.Empty() && len(plan.Held) > 0:
		say(c, "nothing to upgrade")
		return nil
	case plan.Empty():
		say(c, "everything is up to date")
		return nil
	}
	return apply(c, root, plan, f)
}

// heldReason says why an upgrade keeps h where it is.
func heldReason(h repo.Held) string {
	switch {
	case h.Newest != "":
		why := fmt.Sprintf("%s %s cannot be installed: %s", h.Package.Name, h.Newest, pinnedWhy(h.Package.Name, h.Newest, "the newest", h.Reason))
		if h.Next != "" {
			why += fmt.Sprintf("; nor %s: %s", h.Next, pinnedWhy(h.Package.Name, h.Next, "tried", h.NextReason))
		}
		return why
	case h.Older != "":
		return fmt.Sprintf("the repository offers only older versions (newest %s)", h.Older)
	}
	return "the repository no longer offers it"
}

// pinnedWhy words err, the resolver's refusal of name at version, for upgrade's report: a
// conflict without the versions the index has (the upgrade says them), and upgrade's own
// requirements by what they are: the version tried is called what, and each installed
// package "installed" (or "installed, or newer" where it may move).
func pinnedWhy(name, version, what string, err error) string {
	var ce *repo.ConflictError
	if !errors.As(err, &ce) {
		return err.Error()
	}
	var parts []string
	for _, n := range ce.Needs {
		switch {
		case n.By != "":
			parts = append(parts, n.String())
		case n.Name == name && slices.Equal(n.Constraints, []repo.Constraint{{Op: "=", Version: version}}):
			parts = append(parts, n.Requirement.String()+" ("+what+")")
		case slices.ContainsFunc(n.Constraints, func(c repo.Constraint) bool { return c.Op == ">=" }):
			parts = append(parts, n.Requirement.String()+" (installed, or newer)")
		default:
			parts = append(parts, n.Requirement.String()+" (installed)")
		}
	}
	if ce.More > 0 {
		parts = append(parts, fmt.Sprintf("%d more", ce.More))
	}
	if len(parts) > 1 {
		parts = []string{strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]}
	}
	return fmt.Sprintf("no version of %q satisfies %s", ce.Name, strings.Join(parts, ""))
}

// findRec returns the record of name among recs.
func findRec(recs []db.Package, name string) (db.Package, bool) {
	if i := slices.IndexFunc(recs, func(p db.Package) bool { return p.Name == name }); i >= 0 {
		return recs[i], true
	}
	return db.Package{}, false
}

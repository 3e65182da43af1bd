package main

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/install"
	"pkg/repo"
	"pkg/txn"
)

func installCommand() *cli.Command {
	return &cli.Command{
		Name:      "install",
		Usage:     "install packages and their dependencies",
		ArgsUsage: "NAME[@VERSION|CONSTRAINT]...",
		Flags: append([]cli.Flag{&cli.BoolFlag{Name: "reinstall",
			Usage: "install the named installed packages again, same version and archive (puts back what pkg verify reports)"}},
			planFlags()...),
		Action: installAction,
	}
}

func installAction(c *cli.Context) (err error) {
	if err := needArgs(c, 1, "package name"); err != nil {
		return err
	}
	reqs, err := requirements(c.Args().Slice())
	if err != nil {
		return err
	}
	if err := checkPlanFlags(c); err != nil {
		return err
	}
	for _, r := range reqs {
		if c.Bool("reinstall") && len(r.Constraints) > 0 {
			return usagef("install --reinstall: give names of installed packages, not %s", r)
		}
	}
	dry := c.Bool("dry-run")
	f, ix, err := openFetcher(c, dry)
	if err != nil {
		return err
	}
	if dry {
		recs, err := peekRecords(c)
		if err != nil {
			return err
		}
		plan, err := installPlan(c, ix, recs, reqs, f)
		if err != nil {
			return err
		}
		return showPlan(c, plan)
	}
	root, f, ix, err := openRootFor(c, f, ix)
	if err != nil {
		return err
	}
	defer func() { closeRoot(root, err) }()
	recs, err := root.DB().List()
	if err != nil {
		return err
	}
	plan, err := installPlan(c, ix, recs, reqs, f)
	if err != nil {
		return err
	}
	for _, k := range plan.Unchanged {
		say(c, "%s %s is already installed", k.Name, k.Version)
	}
	return apply(c, root, plan, f)
}

// installPlan is the plan of an install, or of a reinstall with --reinstall.
func installPlan(c *cli.Context, ix *txn.Index, recs []db.Package, reqs []repo.Requirement, f *txn.Fetcher) (*txn.Plan, error) {
	if c.Bool("reinstall") {
		names := make([]string, len(reqs))
		for i, r := range reqs {
			names[i] = r.Name
		}
		return txn.ReinstallPlan(c.String("root"), ix, recs, names, f.Cache)
	}
	return txn.InstallPlan(c.String("root"), ix, recs, reqs, f.Cache)
}

func requirements(args []string) ([]repo.Requirement, error) {
	reqs := make([]repo.Requirement, len(args))
	for i, a := range args {
		r, err := repo.ParseRequirement(a)
		if err != nil {
			return nil, usagef("%v", err)
		}
		reqs[i] = r
	}
	return reqs, nil
}

// apply makes the change plan plans in root, fetching through f (nil for a plan that
// fetches nothing), and reports what it did.
func apply(c *cli.Context, root *install.Root, plan *txn.Plan, f *txn.Fetcher) error {
	var out *txn.Outcome
	err := func() (err error) {
		if f == nil {
			out, err = plan.Apply(c.Context, root, nil)
			return err
		}
		obs := f.Observer.(*progress)
		return obs.during(plan.Packages(), func() error { out, err = plan.Apply(c.Context, root, f); return err })
	}()
	if out == nil {
		return err
	}
	saySalvaged(c, root)
	noted := false
	for _, res := range out.Results {
		report(c, res, out.Again, &noted)
	}
	var links *install.LinksError // committed all the same
	if err != nil && !errors.As(err, &links) {
		return err
	}
	for _, r := range out.Removed {
		if r.Version == "" {
			say(c, "removed %s", r.Name)
		} else {
			say(c, "removed %s %s", r.Name, r.Version)
		}
	}
	sayChanges(c, root, out.Before, plan.Wanted)
	if out.Unshared != nil {
		note(c, "%s; a cache prune from another root may remove what this one installed from", userText(out.Unshared))
	}
	if out.Unsettled != nil {
		note(c, "%s; cache entries left unsynced have all their data checked at their first use after a reboot", userText(out.Unsettled))
	}
	return err
}

// report says what was installed, and, the first time (*noted), that the filesystem
// made pkg copy data rather than share it.
func report(c *cli.Context, res *install.Result, again bool, noted *bool) {
	if res.Fallback != nil && !*noted {
		how := "with copy_file_range"
		if res.Method == install.Copy {
			how = "through a buffer"
		}
		why := userText(res.Fallback)
		switch {
		case errors.Is(res.Fallback, syscall.EXDEV):
			why = fmt.Sprintf("the cache %s and the root %s are on different filesystems or mounts", c.String("cache"), c.String("root"))
		case errors.Is(res.Fallback, syscall.EOPNOTSUPP):
			why = fmt.Sprintf("the filesystem of %s cannot share blocks between files (XFS and btrfs can)", c.String("root"))
		}
		note(c, "%s: copying %s instead of sharing blocks", why, how)
		*noted = true
	}
	what := "installed " + res.Name + " " + res.Version
	switch n := repo.CompareVersions(res.Version, res.Previous); {
	case again || res.Again:
		what = "reinstalled " + res.Name + " " + res.Version
	case res.Previous == "":
	case n > 0:
		what = "upgraded " + res.Name + " " + res.Previous + " to " + res.Version
	case n < 0:
		what = "downgraded " + res.Name + " " + res.Previous + " to " + res.Version
	default: // the same version from another archive
		what = "replaced " + res.Name + " " + res.Version + " with the archive the repository now has of it"
	}
	say(c, "%s: %s, %s (%s cloned, %s copied) in %s", what,
		count(res.Files, "file"), size(res.Bytes), size(res.Cloned), size(res.Copied), dur(res.Elapsed))
}

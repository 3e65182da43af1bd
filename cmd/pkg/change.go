package main

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/urfave/cli/v2"

	"pkg/install"
	"pkg/internal/units"
	"pkg/report"
	"pkg/txn"
)

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
		sayResult(c, res, out.Again, plan.FromLock(), &noted)
	}
	if len(out.Results) > 0 { // the per-package times are their staging: the commit is shared
		say(c, "committed %s in %s", units.Count(len(out.Results), "package"), units.Duration(out.Results[0].Commit))
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
	for _, ch := range out.Commands {
		say(c, "%s", report.CommandText(ch))
	}
	for _, p := range out.Unneeded {
		say(c, "%s %s is no longer needed by another package ('pkg autoremove' removes it)", p.Name, p.Version)
	}
	if out.Unshared != nil {
		note(c, "%s; a cache prune from another root may remove what this one installed from", out.Unshared)
	}
	if out.Unsettled != nil {
		note(c, "%s; cache entries left unsynced have all their data checked at their first use after a reboot", out.Unsettled)
	}
	return err
}

// sayResult says what was installed, and noteCopy why it was copied.
func sayResult(c *cli.Context, res *install.Result, again, locked bool, noted *bool) {
	noteCopy(c, res, noted)
	say(c, "%s", report.ResultText(res, again, locked))
}

// noteCopy says, once per root until that changes (tellOnce), why an install copies its
// data rather than share blocks with the cache; *noted keeps it to once per command.
func noteCopy(c *cli.Context, res *install.Result, noted *bool) {
	switch {
	case res.Method == install.Clone && res.Fallback == nil:
		tellOnce(c, "copy", "", nil)
		return
	case res.Fallback == nil || *noted:
		return
	}
	*noted = true
	how := "with copy_file_range"
	if res.Method == install.Copy {
		how = "through a buffer"
	}
	why := res.Fallback.Error()
	switch {
	case errors.Is(res.Fallback, syscall.EXDEV):
		why = fmt.Sprintf("the cache %s and the root %s are on different filesystems or mounts", c.String("cache"), c.String("root"))
	case errors.Is(res.Fallback, syscall.EOPNOTSUPP):
		why = fmt.Sprintf("the filesystem of %s cannot share blocks between files (XFS and btrfs can)", c.String("root"))
	}
	tellOnce(c, "copy", how+": "+why, func() bool {
		note(c, "%s: copying %s instead of sharing blocks", why, how)
		return !c.Bool("quiet")
	})
}

// saySalvaged says what the last change kept of the trees it replaced or removed: files
// the user added to a package's directory, or changed in it. It says so under --quiet too.
func saySalvaged(c *cli.Context, root *install.Root) {
	for _, s := range root.Salvaged() {
		for _, line := range report.SalvageText(s, root.Dir()) {
			warn(c, "%s", line)
		}
	}
}

package main

import (
	"errors"

	"github.com/urfave/cli/v2"

	"pkg/install"
	"pkg/report"
	"pkg/txn"
)

// apply makes the change plan plans in root, fetching through f (nil for a plan that
// fetches nothing), and reports what it did.
func apply(c *cli.Context, root *install.Root, plan *txn.Plan, f *txn.Fetcher) (err error) {
	var out *txn.Outcome
	if f == nil {
		out, err = plan.Apply(c.Context, root, nil)
	} else {
		err = f.Observer.(*progress).during(plan.Packages(), func() error { out, err = plan.Apply(c.Context, root, f); return err })
	}
	if out == nil {
		return err
	}
	for _, s := range root.Salvaged() { // said under --quiet too
		for _, line := range report.SalvageText(s, root.Dir()) {
			warn(c, "%s", line)
		}
	}
	noted := false
	for _, res := range out.Results {
		noteCopy(c, res, &noted)
		say(c, "%s", report.ResultText(res, out.Again, plan.FromLock()))
	}
	if s := report.CommittedText(out); s != "" {
		say(c, "%s", s)
	}
	var links *install.LinksError // committed all the same
	if err != nil && !errors.As(err, &links) {
		return err
	}
	for _, line := range report.ChangeText(out, " ('pkg autoremove' removes it)") {
		say(c, "%s", line)
	}
	for _, line := range report.ChangeNotes(out) {
		note(c, "%s", line)
	}
	return err
}

// noteCopy notes why an install copies its data rather than share blocks with the cache
// (session.TellCopy); *noted keeps it to once per command.
func noteCopy(c *cli.Context, res *install.Result, noted *bool) {
	sess(c).TellCopy(res, noted, func(how, why string) bool {
		note(c, "%s: copying %s instead of sharing blocks", why, how)
		return !c.Bool("quiet")
	})
}

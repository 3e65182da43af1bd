package main

import (
	"errors"

	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/install"
	"pkg/internal/units"
	"pkg/report"
	"pkg/txn"
)

func outdatedCommand() *cli.Command {
	return &cli.Command{
		Name:   "outdated",
		Usage:  "list installed packages the repository has newer versions of: installed, newest allowed, newest",
		Flags:  []cli.Flag{jsonFlag("outdated")},
		Before: takes(0, 0, ""),
		Action: func(c *cli.Context) error {
			recs, requested, err := installedAndRequested(c)
			if err != nil {
				return err
			}
			_, ix, err := sess(c).OpenFetcher(c.Context, false)
			if err != nil {
				return err
			}
			out := report.NewOutdated(ix.Outdated(txn.Installed(recs), txn.Requirements(requested)))
			if len(out.Packages) == 0 && !c.Bool("json") {
				say(c, "%s up to date", units.Count(len(recs), "package"))
				return nil
			}
			return show(c, out, out.WriteText)
		},
	}
}

// installedAndRequested returns the root's installed packages and the requirements of
// those the user asked for (db.DB.Requested); none where there is no root.
func installedAndRequested(c *cli.Context) (recs []db.Package, requested map[string]string, err error) {
	err = sess(c).ViewRoot(func(d *db.DB) (err error) {
		recs, requested, err = txn.ReadInstalled(d)
		return err
	})
	if errors.Is(err, install.ErrNoRoot) {
		note(c, "nothing is installed: %v", err)
		err = nil
	}
	return recs, requested, err
}

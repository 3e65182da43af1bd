package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/install"
	"pkg/report"
	"pkg/txn"
)

func infoCommand() *cli.Command {
	return &cli.Command{
		Name:         "info",
		Usage:        "show a package: as installed, or as the repository offers it",
		ArgsUsage:    "NAME",
		Flags:        []cli.Flag{jsonFlag("info")},
		BashComplete: completeInstalled,
		Before:       takes(1, 1, "package name"),
		Action:       infoAction,
	}
}

func infoAction(c *cli.Context) error {
	name := c.Args().First()
	if err := installedNames("info", []string{name}); err != nil {
		return err
	}
	var recs []db.Package
	var requested map[string]string
	err := sess(c).ViewRoot(func(d *db.DB) (err error) { recs, requested, err = txn.ReadInstalled(d); return err })
	noRoot := errors.Is(err, install.ErrNoRoot)
	if err != nil && !noRoot {
		return err
	}
	p, ok := txn.Find(recs, name)
	switch {
	case !ok && sess(c).HasRepos():
		return offeredInfo(c, name, recs)
	case noRoot:
		return fmt.Errorf("info %s: not installed: %w", name, err)
	case !ok:
		return notInstalled("info", name, recs)
	}
	dir, err := filepath.Abs(c.String("root"))
	if err != nil {
		return err
	}
	info := report.InstalledInfo(&p, filepath.Join(dir, "pkgs", p.Name), requested[p.Name])
	return show(c, info, func(w io.Writer) error { return info.WriteText(w, "") })
}

// offeredInfo shows name, which is not among installed, as the repository offers it: the
// version a new install takes.
func offeredInfo(c *cli.Context, name string, installed []db.Package) error {
	_, ix, err := sess(c).OpenFetcher(c.Context, false)
	if err != nil {
		return err
	}
	p, err := txn.Offered(ix, name, installed)
	if err != nil {
		return fmt.Errorf("info %w", err)
	}
	info := report.OfferedInfo(p, ix.Versions(name))
	return show(c, info, func(w io.Writer) error {
		return info.WriteText(w, fmt.Sprintf(" ('pkg install %s' installs it)", name))
	})
}

func searchCommand() *cli.Command {
	return &cli.Command{
		Name:      "search",
		Usage:     "list what the repository offers, each package at the version a new install takes, marking what is installed",
		ArgsUsage: "[WORD]",
		Flags:     []cli.Flag{jsonFlag("search")},
		Before:    takes(0, 1, ""),
		Action: func(c *cli.Context) error {
			_, ix, err := sess(c).OpenFetcher(c.Context, false)
			if err != nil {
				return err
			}
			found := ix.Search(c.Args().First())
			if len(found) == 0 && c.NArg() > 0 && !c.Bool("json") {
				return fmt.Errorf("search: nothing in %s matches %q", ix.Source, c.Args().First())
			}
			var recs []db.Package // for the marks only: a root pkg cannot read has none
			_ = sess(c).PeekRoot(func(d *db.DB) (err error) { recs, err = d.List(); return err })
			s := report.NewSearch(c.Args().First(), found, recs)
			return show(c, s, s.WriteText)
		},
	}
}

package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/report"
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
	info, offered, err := sess(c).Info(c.Context, name)
	if err != nil {
		return searchTip(err)
	}
	tip := ""
	if offered {
		tip = fmt.Sprintf(" ('pkg install %s' installs it)", name)
	}
	return show(c, info, func(w io.Writer) error { return info.WriteText(w, tip) })
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
			var recs []db.Record // for the marks only: a root pkg cannot read has none
			_ = sess(c).PeekRoot(func(d *db.DB) (err error) { recs, err = d.List(); return err })
			s := report.NewSearch(c.Args().First(), found, recs)
			return show(c, s, s.WriteText)
		},
	}
}

package main

import (
	"io"

	"github.com/urfave/cli/v2"

	"pkg/internal/units"
	"pkg/report"
	"pkg/session"
)

func listCommand() *cli.Command {
	return &cli.Command{
		Name:   "list",
		Usage:  "list installed packages",
		Flags:  []cli.Flag{jsonFlag("list")},
		Before: takes(0, 0, ""),
		Action: func(c *cli.Context) error {
			ps, requested, err := sess(c).Installed()
			if err != nil {
				return err
			}
			l := report.NewList(ps, requested)
			return show(c, l, l.WriteText)
		},
	}
}

func filesCommand() *cli.Command {
	return &cli.Command{
		Name:         "files",
		Usage:        "list the files of an installed package, relative to its directory",
		ArgsUsage:    "NAME",
		Flags:        []cli.Flag{jsonFlag("files")},
		BashComplete: completeInstalled,
		Before:       takes(1, 1, "package name"),
		Action: func(c *cli.Context) error {
			name := c.Args().First()
			if err := installedNames("files", []string{name}); err != nil {
				return err
			}
			rec, files, err := sess(c).Files(name)
			if err != nil {
				return searchTip(c, err)
			}
			f := report.NewFiles(&rec, files)
			return show(c, f, f.WriteText)
		},
	}
}

func whyCommand() *cli.Command {
	return &cli.Command{
		Name:         "why",
		Usage:        "say why a package is installed: whether it was asked for, and which installed packages need it",
		ArgsUsage:    "NAME",
		Flags:        []cli.Flag{jsonFlag("why")},
		BashComplete: completeInstalled,
		Before:       takes(1, 1, "package name"),
		Action: func(c *cli.Context) error {
			recs, requested, err := sess(c).Installed()
			var keys []string
			if err == nil {
				keys, err = session.Keys("why", c.Args().Slice(), recs)
			}
			if err != nil {
				return nameUsage(err)
			}
			w := report.WhyOf(recs, requested, keys[0])
			return show(c, w, func(out io.Writer) error {
				return w.WriteText(out, cmdlineOf(c).carry(" ('pkg autoremove' removes it)", false))
			})
		},
	}
}

func outdatedCommand() *cli.Command {
	return &cli.Command{
		Name:  "outdated",
		Usage: "list installed packages the repository has newer versions (or another archive) of: installed, newest allowed, newest",
		Flags: []cli.Flag{jsonFlag("outdated"),
			&cli.BoolFlag{Name: "all", Usage: "also list the npm packages not asked for that stay at what their dependents' ranges allow, a newer version of theirs installed beside them"}},
		Before: takes(0, 0, ""),
		Action: func(c *cli.Context) error {
			n, found, err := sess(c).Outdated(c.Context)
			if err != nil {
				return err
			}
			out := report.NewOutdated(found, c.Bool("all"))
			switch {
			case c.Bool("json"):
				return show(c, out, nil)
			case len(out.Packages) == 0 && out.Omitted == 0:
				say(c, "%s up to date", units.Count(n, "package"))
				return nil
			case len(out.Packages) > 0:
				if err := out.WriteText(c.App.Writer); err != nil {
					return err
				}
			}
			if out.Omitted > 0 {
				note(c, "%s%s", report.BesideText(out.Omitted), cmdlineOf(c).carry(" ('pkg outdated --all' lists them)", false))
			}
			return nil
		},
	}
}

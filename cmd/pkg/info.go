package main

import (
	"fmt"
	"io"

	"pkg/report"

	"github.com/urfave/cli/v2"
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
	read, err := sess(c).Info(c.Context, name)
	if err != nil {
		return searchTip(c, err)
	}
	var info report.Info
	tip := ""
	if read.Offered != nil {
		info = report.OfferedInfo(*read.Offered, read.Versions)
		tip = cmdlineOf(c).carry(fmt.Sprintf(" ('pkg install %s' installs it)", name), false)
	} else {
		info = report.InstalledInfo(read.Installed, read.Dir, read.Requested, read.Held)
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
			found, err := sess(c).Search(c.Context, c.Args().First())
			if err != nil {
				return err
			}
			s := report.NewSearch(c.Args().First(), found.Packages, found.Installed)
			if err := show(c, s, s.WriteText); err != nil {
				return err
			}
			if len(s.Packages) == 0 && c.NArg() > 0 { // as grep, --json too: the document says none
				return fmt.Errorf("search: nothing in %s matches %q", found.From, c.Args().First())
			}
			return nil
		},
	}
}

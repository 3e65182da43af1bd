package main

import (
	"fmt"
	"io"

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
			s, from, err := sess(c).Search(c.Context, c.Args().First())
			if err != nil {
				return err
			}
			if len(s.Packages) == 0 && c.NArg() > 0 && !c.Bool("json") {
				return fmt.Errorf("search: nothing in %s matches %q", from, c.Args().First())
			}
			return show(c, s, s.WriteText)
		},
	}
}

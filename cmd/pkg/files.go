package main

import (
	"errors"
	"fmt"

	"pkg/db"
	"pkg/install"
	"pkg/report"

	"github.com/urfave/cli/v2"
)

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
			var f report.Files
			err := sess(c).ViewRoot(func(d *db.DB) error {
				ps, files, err := d.Installed(name)
				if errors.Is(err, db.ErrNotInstalled) {
					installed, _ := d.List() // for a suggestion only
					return notInstalled("files", name, installed)
				} else if err == nil {
					f = report.NewFiles(&ps[0], files[0])
				}
				return err
			})
			if errors.Is(err, install.ErrNoRoot) {
				return fmt.Errorf("files %s: not installed: %w", name, err)
			} else if err != nil {
				return err
			}
			return show(c, f, f.WriteText)
		},
	}
}

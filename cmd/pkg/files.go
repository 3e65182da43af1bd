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
		Action: func(c *cli.Context) error {
			name, err := oneArg(c, "package name")
			if err != nil {
				return err
			}
			if err := installedNames("files", []string{name}); err != nil {
				return err
			}
			var ps []db.Package
			var files [][]db.File
			err = viewRoot(c, func(d *db.DB) (err error) {
				ps, files, err = d.Installed(name)
				if errors.Is(err, db.ErrNotInstalled) {
					installed, _ := d.List() // for a suggestion only
					return notInstalled("files", name, installed)
				}
				return err
			})
			if errors.Is(err, install.ErrNoRoot) {
				return fmt.Errorf("files %s: not installed: %w", name, err)
			}
			if err != nil {
				return err
			}
			f := report.NewFiles(&ps[0], files[0])
			return show(c, f, f.WriteText)
		},
	}
}

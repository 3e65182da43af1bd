package main

import (
	"errors"
	"fmt"

	"pkg/db"
	"pkg/install"

	"github.com/urfave/cli/v2"
)

func filesCommand() *cli.Command {
	return &cli.Command{
		Name:      "files",
		Usage:     "list the files of an installed package, relative to its directory",
		ArgsUsage: "NAME",
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 1, "package name"); err != nil {
				return err
			}
			var files []db.File
			err := viewRoot(c, func(d *db.DB) (err error) {
				files, err = d.Files(c.Args().First())
				return err
			})
			if errors.Is(err, db.ErrNotInstalled) {
				return fmt.Errorf("files %s: not installed", c.Args().First())
			}
			if errors.Is(err, install.ErrNoRoot) {
				return fmt.Errorf("files %s: not installed: %w", c.Args().First(), err)
			}
			if err != nil {
				return err
			}
			for _, f := range files {
				fmt.Fprintln(c.App.Writer, f.Path)
			}
			return nil
		},
	}
}

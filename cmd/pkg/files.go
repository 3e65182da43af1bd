package main

import (
	"fmt"

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
			root, err := openRoot(c)
			if err != nil {
				return err
			}
			defer root.Close()
			files, err := root.DB().Files(c.Args().First())
			if err != nil {
				return fmt.Errorf("files %s: not installed", c.Args().First())
			}
			for _, f := range files {
				fmt.Fprintln(c.App.Writer, f.Path)
			}
			return nil
		},
	}
}

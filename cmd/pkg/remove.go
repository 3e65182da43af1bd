package main

import "github.com/urfave/cli/v2"

func removeCommand() *cli.Command {
	return &cli.Command{
		Name:      "remove",
		Usage:     "remove installed packages",
		ArgsUsage: "NAME...",
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 1, "package name"); err != nil {
				return err
			}
			root, err := openRoot(c)
			if err != nil {
				return err
			}
			defer root.Close()
			if err := root.Remove(c.Args().Slice()...); err != nil {
				return err
			}
			for _, name := range c.Args().Slice() {
				say(c, "removed %s", name)
			}
			return nil
		},
	}
}

package main

import (
	"errors"
	"maps"
	"slices"

	"github.com/urfave/cli/v2"

	"pkg/install"
	"pkg/repo"
)

func autoremoveCommand() *cli.Command {
	return &cli.Command{
		Name:  "autoremove",
		Usage: "remove the packages that were installed as dependencies and that no package asked for needs any more",
		Action: func(c *cli.Context) error {
			if err := maxArgs(c, 0); err != nil {
				return err
			}
			if err := rootExists(c); err != nil {
				return err
			}
			root, err := openRoot(c)
			if err != nil {
				return err
			}
			defer root.Close()
			recs, err := root.DB().List()
			if err != nil {
				return err
			}
			requested, err := root.DB().Requested()
			if err != nil {
				return err
			}
			names := repo.Unneeded(installedPackages(recs), slices.Collect(maps.Keys(requested)))
			if len(names) == 0 {
				say(c, "nothing to remove: every installed package was asked for or is needed by one that was")
				return nil
			}
			err = root.Remove(names...)
			saySalvaged(c, root)
			if links := (*install.LinksError)(nil); err != nil && !errors.As(err, &links) {
				return err
			}
			for _, name := range names {
				say(c, "removed %s", nameVersion(recs, name))
			}
			return err
		},
	}
}

package main

import (
	"errors"
	"fmt"
	"strings"

	"pkg/db"
	"pkg/install"

	"github.com/urfave/cli/v2"
)

func removeCommand() *cli.Command {
	return &cli.Command{
		Name:      "remove",
		Usage:     "remove installed packages",
		ArgsUsage: "NAME...",
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 1, "package name"); err != nil {
				return err
			}
			names := unique(c.Args().Slice())
			if err := rootExists(c); err != nil {
				return fmt.Errorf("remove %s: not installed: %w", strings.Join(names, " "), err)
			}
			root, err := openRoot(c)
			if err != nil {
				return err
			}
			defer root.Close()
			installed, err := root.DB().List()
			if err != nil {
				return err
			}
			if err := needInstalled("remove", names, installed); err != nil {
				return err
			}
			err = root.Remove(names...)
			if links := (*install.LinksError)(nil); err != nil && !errors.As(err, &links) {
				return err
			}
			for _, name := range names {
				say(c, "removed %s", nameVersion(installed, name))
			}
			saySalvaged(c, root)
			return err
		},
	}
}

// saySalvaged says what the last change kept of the trees it replaced or removed: files
// the user added to a package's directory, or changed in it. It says so under --quiet too.
func saySalvaged(c *cli.Context, root *install.Root) {
	for _, s := range root.Salvaged() {
		list := strings.Join(s.Paths[:min(len(s.Paths), 5)], ", ")
		if more := len(s.Paths) - 5; more > 0 {
			list += fmt.Sprintf(" and %d more", more)
		}
		warn(c, "the directory of %s %s held %s that it did not install or that changed since: kept in %s: %s",
			s.Name, s.Version, count(len(s.Paths), "path"), s.Dir, list)
	}
}

// nameVersion is name and its version among recs, or name alone if recs has none.
func nameVersion(recs []db.Package, name string) string {
	if r, ok := findRec(recs, name); ok {
		return name + " " + r.Version
	}
	return name
}

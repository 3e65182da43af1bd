package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"pkg/db"
	"pkg/install"

	"github.com/urfave/cli/v2"
)

func infoCommand() *cli.Command {
	return &cli.Command{
		Name:      "info",
		Usage:     "show an installed package",
		ArgsUsage: "NAME",
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 1, "package name"); err != nil {
				return err
			}
			var p *db.Package
			err := viewRoot(c, func(d *db.DB) (err error) {
				p, err = d.Get(c.Args().First())
				return err
			})
			if errors.Is(err, db.ErrNotInstalled) {
				return fmt.Errorf("info %s: not installed (try 'pkg search %s')", c.Args().First(), c.Args().First())
			}
			if errors.Is(err, install.ErrNoRoot) {
				return fmt.Errorf("info %s: not installed: %w", c.Args().First(), err)
			}
			if err != nil {
				return err
			}
			dir, err := filepath.Abs(c.String("root"))
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 1, ' ', 0)
			fmt.Fprintf(tw, "name:\t%s\nversion:\t%s\nsummary:\t%s\n", p.Name, p.Version, p.Summary)
			fmt.Fprintf(tw, "depends:\t%s\nbin:\t%s\n", strings.Join(p.Depends, ", "), strings.Join(p.Bin, ", "))
			fmt.Fprintf(tw, "files:\t%d\nsize:\t%s\nsha256:\t%s\n", p.Files, size(p.Size), p.SHA256)
			fmt.Fprintf(tw, "installed:\t%s\ndirectory:\t%s\n", p.Installed.Local().Format(time.RFC3339), filepath.Join(dir, "pkgs", p.Name))
			return tw.Flush()
		},
	}
}

package main

import (
	"errors"
	"fmt"
	"io"
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
			if err := maxArgs(c, 1); err != nil {
				return err
			}
			name := c.Args().First()
			if err := installedNames("info", []string{name}); err != nil {
				return err
			}
			var p *db.Package
			err := viewRoot(c, func(d *db.DB) (err error) {
				p, err = d.Get(name)
				if errors.Is(err, db.ErrNotInstalled) {
					installed, _ := d.List() // for a suggestion only
					return notInstalled("info", name, installed)
				}
				return err
			})
			if errors.Is(err, install.ErrNoRoot) {
				return fmt.Errorf("info %s: not installed: %w", name, err)
			}
			if err != nil {
				return err
			}
			dir, err := filepath.Abs(c.String("root"))
			if err != nil {
				return err
			}
			return printInfo(c.App.Writer, p, filepath.Join(dir, "pkgs", p.Name))
		},
	}
}

// printInfo prints p's record, and dir, where it is installed; it leaves out empty fields.
func printInfo(w io.Writer, p *db.Package, dir string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	fmt.Fprintf(tw, "name:\t%s\nversion:\t%s\n", p.Name, p.Version)
	for _, f := range [][2]string{{"summary", p.Summary}, {"depends", strings.Join(p.Depends, ", ")}, {"bin", strings.Join(p.Bin, ", ")}, {"lib", strings.Join(p.Lib, ", ")}} {
		if f[1] != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", f[0], f[1])
		}
	}
	fmt.Fprintf(tw, "files:\t%d\nsize:\t%s\nsha256:\t%s\n", p.Files, size(p.Size), p.SHA256)
	fmt.Fprintf(tw, "installed:\t%s\ndirectory:\t%s\n", p.Installed.Local().Format(time.RFC3339), dir)
	return tw.Flush()
}

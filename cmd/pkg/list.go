package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/install"
)

func listCommand() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list installed packages",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print a JSON array"}},
		Action: func(c *cli.Context) error {
			if err := maxArgs(c, 0); err != nil {
				return err
			}
			var ps []db.Package
			err := viewRoot(c, func(d *db.DB) (err error) {
				ps, err = d.List()
				return err
			})
			if errors.Is(err, install.ErrNoRoot) {
				note(c, "nothing is installed: %v", err)
			} else if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c, ps)
			}
			printTable(c, ps)
			return nil
		},
	}
}

func printJSON(c *cli.Context, ps []db.Package) error {
	if ps == nil {
		ps = []db.Package{}
	}
	enc := json.NewEncoder(c.App.Writer)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // "lib>=1.0", not "lib\u003e=1.0"
	return enc.Encode(ps)
}

func printTable(c *cli.Context, ps []db.Package) {
	tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Name, p.Version, count(p.Files, "file"), size(p.Size))
	}
	tw.Flush()
}

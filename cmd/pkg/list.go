package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/internal/units"
	"pkg/report"
)

func listCommand() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list installed packages",
		Flags: []cli.Flag{jsonFlag("list")},
		Action: func(c *cli.Context) error {
			if err := maxArgs(c, 0); err != nil {
				return err
			}
			ps, requested, err := installedAndRequested(c)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c, report.NewList(ps, requested))
			}
			printTable(c, ps)
			return nil
		},
	}
}

// jsonFlag is --json of the command name, which prints the schema docs/json/NAME.md
// documents.
func jsonFlag(name string) cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print JSON (schema pkg." + name + "/1)"}
}

// printJSON prints v, a type of package report.
func printJSON(c *cli.Context, v any) error { return report.Write(c.App.Writer, v) }

func printTable(c *cli.Context, ps []db.Package) {
	tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Name, p.Version, units.Count(p.Files, "file"), units.Size(p.Size))
	}
	tw.Flush()
}

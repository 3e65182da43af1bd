package main

import (
	"io"

	"github.com/urfave/cli/v2"

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
			l := report.NewList(ps, requested)
			return show(c, l, l.WriteText)
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

// show prints doc, a type of package report, as JSON with --json, else as text does.
func show(c *cli.Context, doc any, text func(io.Writer) error) error {
	if c.Bool("json") {
		return printJSON(c, doc)
	}
	return text(c.App.Writer)
}

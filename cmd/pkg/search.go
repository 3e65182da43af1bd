package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/report"
)

func searchCommand() *cli.Command {
	return &cli.Command{
		Name:      "search",
		Usage:     "list what the repository offers, each package at the version a new install takes, marking what is installed",
		ArgsUsage: "[WORD]",
		Flags:     []cli.Flag{jsonFlag("search")},
		Action: func(c *cli.Context) error {
			if err := maxArgs(c, 1); err != nil {
				return err
			}
			_, ix, err := openFetcher(c, false)
			if err != nil {
				return err
			}
			found := ix.Search(c.Args().First())
			if len(found) == 0 && c.NArg() > 0 && !c.Bool("json") {
				return fmt.Errorf("search: nothing in %s matches %q", ix.Source, c.Args().First())
			}
			var recs []db.Package // for the marks only: a root pkg cannot read has none
			_ = peekRoot(c, func(d *db.DB) (err error) { recs, err = d.List(); return err })
			s := report.NewSearch(c.Args().First(), found, recs)
			if c.Bool("json") {
				return printJSON(c, s)
			}
			return printFound(c, s.Packages)
		},
	}
}

// printFound prints one line per package, its version marked "[installed]", or
// "[installed: V]" where another version is.
func printFound(c *cli.Context, found []report.Found) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	for _, p := range found {
		v := p.Version
		switch p.Installed {
		case "":
		case p.Version:
			v += " [installed]"
		default:
			v += " [installed: " + p.Installed + "]"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, v, p.Summary)
	}
	tw.Flush()
	for line := range strings.Lines(b.String()) {
		// No padding after a missing summary.
		if _, err := fmt.Fprintln(c.App.Writer, strings.TrimRight(line, " \n")); err != nil {
			return err
		}
	}
	return nil
}

package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"
)

func searchCommand() *cli.Command {
	return &cli.Command{
		Name:      "search",
		Usage:     "list what the repository offers, each package at the version a new install takes",
		ArgsUsage: "[WORD]",
		Action: func(c *cli.Context) error {
			if err := maxArgs(c, 1); err != nil {
				return err
			}
			_, ix, err := openFetcher(c, false)
			if err != nil {
				return err
			}
			found := ix.Search(c.Args().First())
			if len(found) == 0 && c.NArg() > 0 {
				return fmt.Errorf("search: nothing in %s matches %q", ix.Source, c.Args().First())
			}
			var b strings.Builder
			tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
			for _, p := range found {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, p.Version, p.Summary)
			}
			tw.Flush()
			for line := range strings.Lines(b.String()) {
				// No padding after a missing summary.
				if _, err := fmt.Fprintln(c.App.Writer, strings.TrimRight(line, " \n")); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

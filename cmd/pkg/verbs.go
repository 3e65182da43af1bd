package main

import (
	"io"

	"github.com/urfave/cli/v2"

	"pkg/internal/cliusage"
	"pkg/report"
)

// What the verb files share: their argument checks, --json, and telling lines.

// takes is a command's Before refusing fewer than min arguments, naming what is missing,
// and more than max (max < 0: any number); want, any number but n, saying what it wants.
var takes, want = cliusage.Args, cliusage.Want

// planning is takes for a command that shows its plan with --dry-run (checkPlanFlags),
// followed by the checks more.
func planning(min, max int, what string, more ...cli.BeforeFunc) cli.BeforeFunc {
	return cliusage.All(append([]cli.BeforeFunc{takes(min, max, what), checkPlanFlags}, more...)...)
}

// rootExists is a command's Before refusing a root where nothing was ever installed
// (session.RootExists).
func rootExists(c *cli.Context) error { return sess(c).RootExists() }

// noArgs makes cmd, whose action reads no arguments, refuse any.
func noArgs(cmd *cli.Command) *cli.Command {
	cmd.Before = takes(0, 0, "")
	return cmd
}

// jsonFlag is --json of the command name, which prints the schema docs/json/NAME.md
// documents.
func jsonFlag(name string) cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print JSON (schema pkg." + name + "/1)"}
}

// show prints doc, a type of package report, as JSON with --json, else as text does.
func show(c *cli.Context, doc any, text func(io.Writer) error) error {
	if c.Bool("json") {
		return report.Write(c.App.Writer, doc)
	}
	return text(c.App.Writer)
}

// tellAll tells, by say, note or warn, each of lines.
func tellAll(c *cli.Context, tell func(c *cli.Context, format string, args ...any), lines []string) {
	for _, line := range lines {
		tell(c, "%s", line)
	}
}

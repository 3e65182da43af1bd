package main

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/urfave/cli/v2"

	"pkg/cmd/pkg/internal/cliusage"
	"pkg/repo"
	"pkg/report"
	"pkg/session"
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

// usagef is cliusage.Errorf: a usage error of the command.
func usagef(format string, args ...any) error { return cliusage.Errorf(format, args...) }

// globalUsagef is usagef for a mistake in the global flags.
func globalUsagef(format string, args ...any) error {
	return &cliusage.UsageError{Msg: fmt.Sprintf(format, args...), Global: true}
}

// unique returns names without repeats, each where it first appears.
func unique(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// installedNames is repo.CheckNames for the command op, its refusals usage errors.
func installedNames(op string, names []string) error { return nameUsage(repo.CheckNames(op, names)) }

// nameUsage makes a *repo.NameError a usage error.
func nameUsage(err error) error {
	if ne := (*repo.NameError)(nil); errors.As(err, &ne) {
		return usagef("%v", err)
	}
	return err
}

// searchTip adds to the *session.NotInstalledError of a question about a package (info,
// files) that the repository may have it, when no installed name is close.
func searchTip(c *cli.Context, err error) error {
	if ne := (*session.NotInstalledError)(nil); errors.As(err, &ne) && ne.Close == "" && len(ne.ProvidedBy) == 0 {
		return fmt.Errorf("%w (try %s)", err, cmdlineOf(c).carry("'pkg search "+ne.Name+"'", false))
	}
	return err
}

package cliusage

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// Options is what Run needs to know of an app that its definition does not say.
type Options struct {
	// Wants says, by flag name, what a flag whose value is refused takes (Check).
	Wants map[string]string
	// CommandLines names the commands ("run", "cache list") whose arguments after the
	// first are a command line of its own: their flags end at that argument (FlagsFirst).
	CommandLines []string
}

// Run runs app on the command line args as it is written (FlagsFirst), once Check finds
// no mistake in its flags. It returns the command run, as "cache list" ("" where none
// was), and the command's error, or an *UnknownError for a command line that names no
// command. A command without subcommands or a BashComplete of its own completes only its
// flags (CompleteFlags); a completion asked for after "--" offers nothing and runs nothing;
// a command with subcommands, given none, is a *UsageError.
func Run(ctx context.Context, app *cli.App, args []string, o Options) (used string, err error) {
	Track(app.Commands, &used)
	completeLeaves(app.Commands)
	needSubcommands(app.Commands)
	var unknown *UnknownError
	Unknown(app, &unknown)
	args = FlagsFirst(app, args, o.CommandLines)
	if completing(app, args) && (slices.Contains(args, "--") || lineBegun(app, args, o.CommandLines)) {
		return used, nil // urfave/cli would run the command, the request its argument (checkShellCompleteFlag in help.go)
	}
	if err = Check(app, args, o.Wants); err == nil {
		err = app.RunContext(ctx, args)
	}
	if unknown != nil {
		return used, unknown
	}
	return used, err
}

// completing reports whether args ask app for completions, not to run a command.
func completing(app *cli.App, args []string) bool {
	return app.EnableBashCompletion && len(args) > 1 && args[len(args)-1] == "--generate-bash-completion"
}

// lineBegun reports whether args ask for a completion past the first argument of one of
// the commands lines names ("run NAME"), where their flags end: what comes there is a
// command line of its own, whose flags are not the command's.
func lineBegun(app *cli.App, args []string, lines []string) bool {
	cmds, name := app.Commands, ""
	var cmd *cli.Command
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "-") && cmd != nil && defines(cmd.Flags, a):
			i += takesValue(cmd.Flags, a)
			continue
		case strings.HasPrefix(a, "-"):
			i += takesValue(app.Flags, a)
			continue
		case cmd != nil && slices.Contains(lines, name):
			return true
		}
		if cmd = findCommand(cmds, a); cmd == nil {
			return false
		}
		cmds, name = cmd.Subcommands, strings.TrimSpace(name+" "+cmd.Name)
	}
	return false
}

// completeLeaves gives each command of cmds, and of their subcommands, that has none
// and no BashComplete, CompleteFlags: urfave/cli's default offers the help command urfave/cli
// adds to every command ("help", "h") as if it were an argument.
func completeLeaves(cmds []*cli.Command) {
	for _, c := range cmds {
		switch {
		case len(c.Subcommands) > 0:
			completeLeaves(c.Subcommands)
		case c.BashComplete == nil:
			c.BashComplete = CompleteFlags
		}
	}
}

// needSubcommands gives each command of cmds that has subcommands and no Action one that
// refuses a command line naming none as a *UsageError: urfave/cli's default prints the
// help and succeeds. A word that names no subcommand is still urfave/cli's to report
// (Unknown).
func needSubcommands(cmds []*cli.Command) {
	for _, c := range cmds {
		if len(c.Subcommands) == 0 {
			continue
		}
		needSubcommands(c.Subcommands)
		if c.Action == nil {
			c.Action = missingSubcommand
		}
	}
}

func missingSubcommand(c *cli.Context) error {
	if c.Args().Present() {
		return cli.ShowCommandHelp(c, c.Args().First())
	}
	var names []string
	for _, sub := range c.Command.VisibleCommands() {
		if sub.Name != "help" {
			names = append(names, sub.Name)
		}
	}
	return Errorf("%s: missing subcommand: %s", commandName(c), orList(names))
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// Hint returns what to do about a mistake in the command line, err an *UnknownError, a
// *FlagError or a *UsageError, for the command used (Run); ok is false for other errors.
func Hint(app *cli.App, used string, err error) (hint string, ok bool) {
	var un *UnknownError
	var fe *FlagError
	var ue *UsageError
	usage := app.Name + " help"
	switch {
	case errors.As(err, &un):
		return "run '" + un.Help + "' for the list", true
	case errors.As(err, &fe):
		switch {
		case fe.Env != "" && fe.Want == "a boolean":
			return "set it to 1 or 0 (true and false work too), or unset it", true
		case fe.Env != "":
			return "set it to " + fe.Want + ", or unset it", true
		case fe.Command != "":
			usage = app.Name + " " + fe.Command + " --help"
		}
	case errors.As(err, &ue):
		if used != "" && !ue.Global {
			usage = app.Name + " " + used + " --help"
		}
	default:
		return "", false
	}
	return "run '" + usage + "' for usage", true
}

package cliusage

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// An UnknownError is a command line that names no command: Name, with a guess among the
// commands it might have meant (Guess) and the command that lists them (Help).
type UnknownError struct {
	Name, Guess, Help string
}

func (e *UnknownError) Error() string { return fmt.Sprintf("unknown command %q%s", e.Name, e.Guess) }

// Unknown sets app.CommandNotFound to keep, in *err, the unknown command a command line
// names, of the app's or of one of its commands' subcommands.
func Unknown(app *cli.App, err **UnknownError) {
	app.CommandNotFound = func(c *cli.Context, name string) {
		e := &UnknownError{Name: name, Guess: Guess(name, c.App.Commands), Help: c.App.Name + " help"}
		if c.Command != nil && c.Command.Name != "" && c.Command.Name != c.App.Name { // a subcommand of c.Command's
			e.Guess, e.Help = Guess(name, c.Command.Subcommands), c.App.Name+" "+c.Command.Name+" help"
		}
		*err = e
	}
}

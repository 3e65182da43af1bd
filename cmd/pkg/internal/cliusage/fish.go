package cliusage

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// FishCompletion returns app's fish completion script: urfave/cli's
// (cli.App.ToFishCompletion), which lets fish offer file names beside the commands, and
// a line for each place a command is expected, before the first and after a command with
// subcommands, that offers none there. Where a flag's value is a file, fish offers file
// names for it when the flag says so (TakesFile).
func FishCompletion(app *cli.App) (string, error) {
	script, err := app.ToFishCompletion()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(script)
	fmt.Fprintf(&b, "complete -c %s -n '__fish_%[1]s_no_subcommand' -f\n", app.Name)
	fishNoFiles(&b, app.Name, app.VisibleCommands())
	return b.String(), nil
}

// fishNoFiles writes, for each of cmds that has subcommands, and theirs, a line that
// offers no file names after it until one of its subcommands. The help command urfave/cli
// adds to the command running makes no group.
func fishNoFiles(b *strings.Builder, app string, cmds []*cli.Command) {
	for _, c := range cmds {
		var subs []*cli.Command
		var names []string
		for _, s := range c.VisibleCommands() {
			if !s.HasName("help") {
				subs, names = append(subs, s), append(names, s.Names()...)
			}
		}
		if len(subs) == 0 {
			continue
		}
		fmt.Fprintf(b, "complete -c %s -n '__fish_seen_subcommand_from %s; and not __fish_seen_subcommand_from %s' -f\n",
			app, strings.Join(c.Names(), " "), strings.Join(names, " "))
		fishNoFiles(b, app, subs)
	}
}

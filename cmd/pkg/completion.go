package main

import (
	_ "embed"
	"fmt"

	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/internal/cliusage"
)

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a script that completes pkg's commands, flags and installed package names in a shell",
		ArgsUsage: "bash|zsh|fish",
		Description: "bash: source <(pkg completion bash), or save it as ~/.local/share/bash-completion/completions/pkg\n" +
			"zsh: save it as _pkg in a directory of $fpath\n" +
			"fish: pkg completion fish > ~/.config/fish/completions/pkg.fish",
		Before: takes(1, 1, "shell (bash, zsh or fish)"),
		Action: func(c *cli.Context) error {
			sh := c.Args().First()
			script, ok := completions[sh]
			if !ok {
				return usagef("completion: no completion for shell %q: bash, zsh or fish", sh)
			}
			if sh == "fish" {
				s, err := c.App.ToFishCompletion()
				if err != nil {
					return err
				}
				script = s + script
			}
			_, err := fmt.Fprint(c.App.Writer, script)
			return err
		},
	}
}

// completions are the scripts by shell. The bash and zsh scripts ask pkg itself, through
// urfave/cli's --generate-bash-completion (cli.App.EnableBashCompletion), what may come
// next; fish's adds the installed packages' names to urfave/cli's script for the commands
// that take them (completeInstalled).
var completions = map[string]string{"bash": bashCompletion, "zsh": zshCompletion, "fish": fishInstalled}

var (
	//go:embed completion/pkg.bash
	bashCompletion string
	//go:embed completion/_pkg
	zshCompletion string
	//go:embed completion/installed.fish
	fishInstalled string
)

// completeInstalled completes a command's flags, else the names of the installed packages.
var completeInstalled = cliusage.Complete(func(c *cli.Context) (names []string) {
	sess(c).PeekRoot(func(d *db.DB) error {
		ps, err := d.List()
		for _, p := range ps {
			names = append(names, p.Name)
		}
		return err
	})
	return names
})

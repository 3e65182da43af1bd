package main

import (
	_ "embed"
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"pkg/cmd/pkg/internal/cliusage"
	"pkg/internal/shell"
)

func envCommand() *cli.Command {
	return &cli.Command{
		Name:  "env",
		Usage: "print the shell command that puts the root's commands on PATH",
		Description: "eval \"$(pkg env)\" in a POSIX shell; in GitHub Actions,\n" +
			"pkg env --bin-dir >> \"$GITHUB_PATH\" does it for the steps that follow.\n" +
			"A root whose path holds ':', PATH's separator, is refused: use a symlink to it.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "bin-dir", Usage: "print only the directory, unquoted"},
		},
		Before: takes(0, 0, ""),
		Action: func(c *cli.Context) error {
			root, err := filepath.Abs(c.String("root"))
			if err != nil {
				return err
			}
			bin := filepath.Join(root, "bin")
			if !shell.CanBeOnPath(bin) {
				return fmt.Errorf("env: %s cannot be on PATH: it holds ':', which separates PATH's directories; "+
					"give --root a path without ':', such as a symlink to this root (ln -s %s ~/pkg-root, then pkg --root ~/pkg-root env)",
					bin, shell.Quote(root))
			}
			line := fmt.Sprintf("export PATH=\"%s:$PATH\"", shell.Escape(bin))
			if c.Bool("bin-dir") {
				line = bin
			}
			_, err = fmt.Fprintln(c.App.Writer, line)
			return err
		},
	}
}

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
				s, err := cliusage.FishCompletion(c.App)
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
// next; fish's adds, to cliusage.FishCompletion's script, the names pkg itself completes
// for the commands that take package names (completeInstalled, completeOffered).
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
var completeInstalled = cliusage.Complete(func(c *cli.Context) []string { return sess(c).Names(c.Context, false) })

// completeOffered completes a command's flags, else the names of the packages the
// repositories offer, as the cache's copies of their indexes have them (no network).
var completeOffered = cliusage.Complete(func(c *cli.Context) []string { return sess(c).Names(c.Context, true) })

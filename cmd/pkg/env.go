package main

import (
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"pkg/internal/shell"
)

func envCommand() *cli.Command {
	return &cli.Command{
		Name:  "env",
		Usage: "print the shell command that puts the root's commands on PATH",
		Description: "eval \"$(pkg env)\" in a POSIX shell; in GitHub Actions,\n" +
			"pkg env --bin-dir >> \"$GITHUB_PATH\" does it for the steps that follow.",
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
			line := fmt.Sprintf("export PATH=\"%s:$PATH\"", shell.Escape(bin))
			if c.Bool("bin-dir") {
				line = bin
			}
			_, err = fmt.Fprintln(c.App.Writer, line)
			return err
		},
	}
}

package main

import (
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"
)

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "check installed files against what was installed: type, mode, size, content",
		ArgsUsage: "[NAME...]",
		Action:    verifyAction,
	}
}

// verifyAction prints one line per problem on stdout and fails when there is any.
func verifyAction(c *cli.Context) error {
	root, err := openRoot(c)
	if err != nil {
		return err
	}
	defer root.Close()
	problems, err := root.Verify(c.Args().Slice()...)
	if err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintln(c.App.Writer, p)
	}
	if len(problems) > 0 {
		return fmt.Errorf("verify: %d problems found", len(problems))
	}
	pkgs, files := 0, 0
	all, err := root.DB().List()
	if err != nil {
		return err
	}
	for _, p := range all {
		if c.NArg() == 0 || slices.Contains(c.Args().Slice(), p.Name) {
			pkgs, files = pkgs+1, files+p.Files
		}
	}
	say(c, "verified %d packages, %d files", pkgs, files)
	return nil
}

package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/report"
)

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "check installed files against what was installed: type, mode, size, content",
		ArgsUsage: "[NAME...]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "full", Usage: "read and hash every file, also those that still share their blocks with the cache"},
			jsonFlag("verify"),
		},
		BashComplete: completeInstalled,
		Before:       rootExists,
		Action:       verifyAction,
	}
}

// verifyAction prints one line per problem on stdout and fails when there is any.
func verifyAction(c *cli.Context) error {
	names := unique(c.Args().Slice())
	all, problems, err := sess(c).Verify(c.Context, names, c.Bool("full"))
	if err != nil {
		return nameUsage(err)
	}
	v := report.VerifyOf(all, names, problems)
	if err := show(c, v, v.WriteText); err != nil {
		return err
	}
	if len(problems) == 0 {
		if !c.Bool("json") { // the JSON says it
			say(c, "%s", v.Text())
		}
		return nil
	}
	reinstall, foreign := v.Repair()
	first := ""
	if len(foreign) > 0 {
		first = "move " + strings.Join(foreign, " and ") + " away (not pkg's to replace), then "
	}
	return fmt.Errorf("verify: %s; %spkg install --reinstall %s restores what was installed (keeping what you changed in .pkg/saved)",
		v.Text(), first, strings.Join(reinstall, " "))
}

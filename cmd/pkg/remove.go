package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/internal/shell"
	"pkg/report"
	"pkg/session"
)

func removeCommand() *cli.Command {
	return &cli.Command{
		Name:         "remove",
		Usage:        "remove installed packages",
		ArgsUsage:    "NAME...",
		Flags:        planFlags(),
		Before:       planning(1, -1, "package name"),
		BashComplete: completeInstalled,
		Action: func(c *cli.Context) error {
			names := unique(c.Args().Slice())
			if err := sess(c).RootExists(); err != nil {
				return fmt.Errorf("remove %s: not installed: %w", strings.Join(names, " "), err)
			}
			return removeChosen(c, session.Request{Op: session.Remove, Names: names}, "")
		},
	}
}

// removeChosen removes the packages of r, a remove or autoremove, or for a dry run shows
// its plan; none is what it says when there are none.
func removeChosen(c *cli.Context, r session.Request, none string) error {
	p, err := plan(c, r)
	if p == nil {
		return err
	}
	if len(p.Changes) == 0 {
		if len(p.Kept) == 0 {
			say(c, "%s", none)
		}
		for _, k := range p.Kept {
			say(c, "%s", report.KeptText(k))
		}
		if len(p.KeptBy) > 0 {
			advise(c, "%s", reinstallUnknown(p.KeptBy))
		}
		return p.Close()
	}
	return apply(c, p)
}

// reinstallUnknown is the advice about packages recorded without their dependencies (keys),
// which keep a removal from taking what they may need.
func reinstallUnknown(keys []string) string {
	return fmt.Sprintf("'pkg install --reinstall %s' records the dependencies of each again from a repository that offers its archive (--repo URL gives one), and then what none needs can go",
		quoteAll(keys))
}

// quoteAll returns words as arguments of a command line, each quoted for the shell.
func quoteAll(words []string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = shell.Quote(w)
	}
	return strings.Join(quoted, " ")
}

func autoremoveCommand() *cli.Command {
	return &cli.Command{
		Name:   "autoremove",
		Usage:  "remove the packages that were installed as dependencies and that no package asked for needs any more",
		Flags:  planFlags(),
		Before: planning(0, 0, "", rootExists),
		Action: func(c *cli.Context) error {
			return removeChosen(c, session.Request{Op: session.Autoremove}, "nothing to remove: every installed package was asked for or is needed by one that was")
		},
	}
}

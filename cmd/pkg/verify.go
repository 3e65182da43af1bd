package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/install"
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
	root, err := sess(c).OpenRoot(c.Context)
	// Checking needs no writing; on a read-only filesystem nothing changes it meanwhile.
	if notYours := errors.Is(err, install.ErrNotYours); notYours || errors.Is(err, install.ErrReadOnly) {
		if root, err = install.OpenReadOnly(c.String("root"), sess(c).RootOptions()); err == nil && notYours {
			note(c, "%s is not yours: verifying without its lock, so a command changing it meanwhile may show as problems", root.Dir())
		}
	}
	if err != nil {
		return err
	}
	defer root.Close()
	all, err := root.DB().List()
	if err == nil {
		err = needInstalled("verify", names, all)
	}
	if err != nil {
		return err
	}
	// The cache's extents spare hashing the files that still share them; verify makes no cache.
	var cache install.Cache
	if _, err := os.Stat(c.String("cache")); err == nil && !c.Bool("full") {
		if fc, err := sess(c).OpenCache(false); err == nil {
			cache = fc
		}
	}
	problems, err := root.VerifyWith(cache, names...)
	if err != nil {
		return err
	}
	if saved := root.Saved(); len(saved) > 0 {
		note(c, "%s holds what upgrades and removes found added or changed in packages' directories (%d kept): look through it, and delete what you no longer need",
			filepath.Join(root.Dir(), ".pkg", "saved"), len(saved))
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

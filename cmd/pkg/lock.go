package main

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/urfave/cli/v2"

	"pkg/repo"
	"pkg/report"
	"pkg/txn"
)

func lockCommand() *cli.Command {
	return &cli.Command{
		Name:      "lock",
		Usage:     "resolve packages and write their exact versions, URLs and sha256 to a lockfile",
		ArgsUsage: "[NAME[@VERSION|CONSTRAINT]...]",
		Description: "With no arguments, lock re-resolves the requirements the lockfile records,\n" +
			"against the repository it records unless --repo is given.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "pkg.lock", Usage: "lockfile to write"},
			&cli.StringSliceFlag{Name: "platform", Usage: "lock for these platforms, GOOS-GOARCH, comma-separated or repeated (default: this machine's, where the repository names platforms)"},
		},
		Action: lockAction,
	}
}

func lockAction(c *cli.Context) error {
	path := c.String("output")
	old, err := repo.ReadLock(path)
	switch {
	case err != nil && c.NArg() == 0 && errors.Is(err, fs.ErrNotExist):
		return usagef("lock: missing package name (or an existing %s to refresh)", path)
	case err != nil && c.NArg() == 0:
		return err
	}
	// With packages named, an unreadable lockfile is written anew (old is nil); with none,
	// old's requirements are locked again. Either way old's repositories are the default.
	reqs, err := requirements(c.Args().Slice())
	platforms, perr := repo.ParsePlatforms(c.StringSlice("platform"))
	switch {
	case err != nil:
		return err
	case perr != nil:
		return usagef("lock: --platform: %v", perr)
	case old != nil:
		useLockRepos(c, old, path)
	}
	if c.NArg() == 0 {
		reqs = old.Requires
	}
	_, ix, err := sess(c).OpenFetcher(c.Context, false)
	if err != nil {
		return err
	}
	l, err := txn.Lock(old, ix, reqs, path, platforms)
	if ue := (*txn.UnresolvedError)(nil); c.NArg() == 0 && errors.As(err, &ue) {
		return fmt.Errorf("%w; these are the requirements %s records (%s): to change them, name the ones to lock, 'pkg lock -o %s NAME...'",
			err, path, repo.JoinRequirements(reqs), path)
	}
	if err == nil {
		err = repo.WriteLock(path, l)
	}
	if err != nil {
		return err
	}
	tellAll(c, say, report.LockText(old, l, path))
	return nil
}

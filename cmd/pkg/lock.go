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
	// With packages named, an unreadable lockfile is written anew (old is nil).
	reqs, err := lockRequirements(c, old)
	if err != nil {
		return err
	}
	platforms, err := repo.ParsePlatforms(c.StringSlice("platform"))
	if err != nil {
		return usagef("lock: --platform: %v", err)
	}
	_, ix, err := openFetcher(c, false)
	if err != nil {
		return err
	}
	l, err := txn.Lock(old, ix, reqs, path, platforms)
	if ue := (*txn.UnresolvedError)(nil); c.NArg() == 0 && errors.As(err, &ue) {
		return fmt.Errorf("%w; these are the requirements %s records (%s): to change them, name the ones to lock, 'pkg lock -o %s NAME...'",
			err, path, repo.JoinRequirements(reqs), path)
	}
	if err != nil {
		return err
	}
	if err := repo.WriteLock(path, l); err != nil {
		return err
	}
	for _, line := range report.LockText(old, l, path) {
		say(c, "%s", line)
	}
	return nil
}

// lockRequirements returns the requirements given, or else those old records, and makes
// old's repository the default of --repo.
func lockRequirements(c *cli.Context, old *repo.Lock) ([]repo.Requirement, error) {
	if old != nil {
		useLockRepos(c, old, c.String("output"))
	}
	if c.NArg() == 0 {
		return old.Requires, nil
	}
	return requirements(c.Args().Slice())
}

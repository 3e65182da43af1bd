package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/fetch"
	"pkg/install"
	"pkg/repo"
	"pkg/txn"
)

func syncCommand() *cli.Command {
	return &cli.Command{
		Name:      "sync",
		Usage:     "make the root hold exactly the packages of a lockfile",
		ArgsUsage: "[NAME[@VERSION|CONSTRAINT]...]",
		Description: "sync installs what is missing, replaces what differs and removes what the lockfile\n" +
			"does not list, fetching each archive by the lockfile's URL and checking it against the\n" +
			"lockfile's size and sha256. Requirements given must be those the lockfile was made for.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Value: "pkg.lock", Usage: "lockfile to read"},
			&cli.BoolFlag{Name: "frozen", Usage: "fail unless the repository still resolves the lockfile's requirements to its packages"},
			&cli.BoolFlag{Name: "keep-extra", Usage: "keep installed packages the lockfile does not list"},
		}, planFlags()...),
		Before: planning(0, -1, ""),
		Action: syncAction,
	}
}

// syncAction checks the lockfile, compares it with the root and, when they differ, stages
// every package to install, then commits them and removes the extras together.
// Nothing but the lockfile and the database is read when they agree. A dry run reads the
// root without its lock.
func syncAction(c *cli.Context) (err error) {
	path := c.String("file")
	l, err := readSyncLock(c, path)
	if err != nil {
		return err
	}
	var root *install.Root
	var cache *fetch.Cache
	if c.Bool("dry-run") {
		if root, err = readOnlyRoot(c); err == nil {
			cache, err = openCacheFor(c, true)
		}
	} else if root, err = openRoot(c); err == nil {
		defer func() { closeRoot(root, err) }()
	}
	if err != nil {
		return err
	}
	plan, kept, err := txn.SyncPlan(root, l, c.Bool("keep-extra"), cache)
	if err != nil {
		return err
	}
	if plan.Root == "" {
		plan.Root = c.String("root")
	}
	if len(kept) > 0 {
		note(c, "keeping %s, not in %s", strings.Join(kept, ", "), path)
	}
	if rm := plan.Removes(); len(rm) > 0 && !rootNamed(c) {
		// A project's lockfile synced into the user's own root would take their tools away.
		return fmt.Errorf("sync: %s does not list %s, installed in your default root %s; nothing was changed: pass --keep-extra to keep them, --root DIR for a root of the project's own, or --root %s to make this one hold exactly %s",
			path, strings.Join(rm, ", "), plan.Root, plan.Root, path)
	}
	switch {
	case c.Bool("dry-run"):
		return showPlan(c, plan, cache)
	case plan.Empty():
		say(c, "nothing to do: root matches %s", path)
		return nil
	}
	// The cache is opened under the root's lock, unlike in install: a prune takes no root
	// lock, so this cannot deadlock, and a no-op sync needs no cache at all. A prune between
	// the plan and here only means fetching again what it removed.
	srcs, _, err := lockSources(c, l)
	if err == nil {
		cache, err = openCache(c)
	}
	if err == nil {
		err = plan.Relocate(l, srcs)
	}
	if err != nil {
		return err
	}
	root.Request(l.Requires) // recorded by the commit
	f := newFetcher(c, &progress{c: c}, txn.FirstSource(l, srcs), cache)
	f.Sources = srcs
	return pathHint(c, root, apply(c, root, plan, f))
}

// readSyncLock reads the lockfile at path and checks it against the command line and the
// trust policy, and makes its repository the default of --repo.
func readSyncLock(c *cli.Context, path string) (*repo.Lock, error) {
	reqs, err := requirements(c.Args().Slice())
	if err != nil {
		return nil, err
	}
	l, err := txn.ReadLock(path, reqs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("sync: no lockfile %s: 'pkg lock NAME...' writes one, or pass -f FILE", path)
	} else if err == nil {
		err = checkLockSigned(c, l, path)
	}
	if err != nil {
		return nil, err
	}
	useLockRepos(c, l, path)
	if rs, err := flagRepos(c); err == nil && len(rs) > 0 && len(l.Repos) == 0 {
		if src, err := fetch.NewSource(rs[0].URLs[0], fetch.Options{}); err == nil && src.URL() != l.Repo {
			note(c, "using the repository at %s (--repo or PKG_REPO) in place of %s, which %s records", src.URL(), l.Repo, path)
		}
	}
	if !c.Bool("frozen") {
		return l, nil
	}
	_, ix, err := openFetcher(c, c.Bool("dry-run"))
	if err == nil {
		err = txn.CheckFrozen(l, ix, path)
	}
	return l, err
}

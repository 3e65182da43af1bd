package main

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/repo"
)

func syncCommand() *cli.Command {
	return &cli.Command{
		Name:      "sync",
		Usage:     "make the root hold exactly the packages of a lockfile",
		ArgsUsage: "[NAME[@VERSION|CONSTRAINT]...]",
		Description: "sync installs what is missing, replaces what differs and removes what the lockfile\n" +
			"does not list, fetching each archive by the lockfile's URL and checking it against the\n" +
			"lockfile's size and sha256. Requirements given must be those the lockfile was made for.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Value: "pkg.lock", Usage: "lockfile to read"},
			&cli.BoolFlag{Name: "frozen", Usage: "fail unless the repository still resolves the lockfile's requirements to its packages"},
			&cli.BoolFlag{Name: "keep-extra", Usage: "keep installed packages the lockfile does not list"},
		},
		Action: syncAction,
	}
}

// syncAction checks the lockfile, compares it with the root and, when they differ, stages
// every package to install, then commits them and removes the extras together.
// Nothing but the lockfile and the database is read when they agree.
func syncAction(c *cli.Context) (err error) {
	path := c.String("file")
	l, err := repo.ReadLock(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("sync: no lockfile %s: 'pkg lock NAME...' writes one, or pass -f FILE", path)
	} else if err != nil {
		return err
	}
	if err := checkLockInputs(c, l, path); err != nil {
		return err
	}
	if err := checkLockSigned(c, l, path); err != nil {
		return err
	}
	if c.String("repo") == "" {
		if err := c.Set("repo", l.Repo); err != nil {
			return err
		}
	} else if src, err := fetch.NewSource(c.String("repo"), fetch.Options{}); err == nil && src.URL() != l.Repo {
		note(c, "using the repository at %s (--repo or PKG_REPO) in place of %s, which %s records", src.URL(), l.Repo, path)
	}
	if c.Bool("frozen") {
		if err := checkFrozen(c, l, path); err != nil {
			return err
		}
	}
	want, err := l.Order()
	if err != nil {
		return err
	}
	root, err := openRoot(c)
	if err != nil {
		return err
	}
	defer func() { closeRoot(root, err) }()
	plan, err := root.Plan(want)
	if err != nil {
		return err
	}
	if len(plan.Remove) > 0 && c.Bool("keep-extra") {
		note(c, "keeping %s, not in %s", strings.Join(plan.Remove, ", "), path)
		plan.Remove = nil
	}
	if len(plan.Remove) > 0 && !rootNamed(c) {
		// A project's lockfile synced into the user's own root would take their tools away.
		return fmt.Errorf("sync: %s does not list %s, installed in your default root %s; nothing was changed: pass --keep-extra to keep them, --root DIR for a root of the project's own, or --root %s to make this one hold exactly %s",
			path, strings.Join(plan.Remove, ", "), root.Dir(), root.Dir(), path)
	}
	if plan.Empty() {
		say(c, "nothing to do: root matches %s", path)
		return nil
	}
	return afterInstall(c, root, l.Requires, applyPlan(c, root, plan, l.Repo))
}

// checkLockInputs refuses requirements given on the command line unless they are the
// lockfile's.
func checkLockInputs(c *cli.Context, l *repo.Lock, path string) error {
	if c.NArg() == 0 {
		return nil
	}
	reqs, err := requirements(c.Args().Slice())
	if err != nil {
		return err
	}
	if repo.Inputs(reqs) != repo.Inputs(l.Requires) {
		return fmt.Errorf("%s is out of date: it locks %s, not %s (run 'pkg lock -o %s %s')", path,
			joinRequirements(l.Requires), joinRequirements(reqs), path, strings.Join(c.Args().Slice(), " "))
	}
	return nil
}

func joinRequirements(reqs []repo.Requirement) string {
	s := make([]string, len(reqs))
	for i, r := range reqs {
		s[i] = r.String()
	}
	return strings.Join(s, " ")
}

// checkFrozen refuses a lockfile that its requirements no longer resolve to.
func checkFrozen(c *cli.Context, l *repo.Lock, path string) error {
	f, ix, err := openFetcher(c)
	if err != nil {
		return err
	}
	if err := checkLockIndex(l, lockIndex(f.index), path); err != nil {
		return err
	}
	if err := l.Outdated(ix); err != nil {
		return fmt.Errorf("%s: %w (run 'pkg lock -o %s' to update it)", path, err, path)
	}
	return nil
}

// applyPlan installs, replaces and removes what plan says in one commit, fetching each
// archive from the repository the lockfile names unless --repo names another.
// The cache is opened under the root's lock, unlike in install: a prune takes no root lock,
// so this cannot deadlock, and a no-op sync needs no cache at all. A prune between the plan
// and here only means fetching again what it removed.
func applyPlan(c *cli.Context, root *install.Root, plan *install.Plan, lockRepo string) error {
	f := &fetcher{c: c}
	src, err := openSource(c, f.retrying)
	if err != nil {
		return err
	}
	cache, err := openCache(c)
	if err != nil {
		return err
	}
	for i, p := range plan.Install {
		if plan.Install[i], err = src.Relocate(p, lockRepo); err != nil {
			return err
		}
	}
	f.src = src
	f.useCache(cache)
	in := &installer{c: c, f: f, root: root, remove: plan.Remove, locked: true}
	return in.apply(plan.Install)
}

// checkLockSigned checks, when signatures are required (--require-signed, or a trusted
// key), that the lockfile says it was made from an index a key trusted here verified: sync
// reads no index. The lockfile's word is all there is, so this guards against a mistake (a
// lockfile made without the key), not against an edit. A lockfile that says nothing, as
// those from before pkg recorded it, is refused under --require-signed and warned about
// otherwise.
func checkLockSigned(c *cli.Context, l *repo.Lock, path string) error {
	policy, err := trustPolicy(c)
	if err != nil {
		return err
	}
	pin, err := lockPin(c, l)
	if err == nil && pin != nil {
		policy, err = pinPolicy(policy, *pin)
	}
	if err != nil || !policy.RequireSigned && len(policy.Keys) == 0 {
		return err
	}
	if l.Index == nil {
		if pin != nil {
			return fmt.Errorf("%s does not say it was made from a verified index, and root %s pinned repository %s%s: lock it again with the publisher's key",
				path, c.String("root"), pin.Name, pinnedKeys(*pin))
		}
		if policy.RequireSigned {
			return fmt.Errorf("%s does not say it was made from a verified index, and --require-signed needs that: lock it again with the publisher's key (pkg lock --trusted-key KEY)", path)
		}
		warn(c, "%s does not say it was made from a verified index: lock it again with the publisher's key to record it", path)
		return nil
	}
	for _, k := range policy.Keys {
		if slices.Contains(l.Index.Keys, k.ID()) && (k.Repo == "" || k.Repo == l.Index.Name) {
			return nil
		}
	}
	return fmt.Errorf("%s was made from an index of repository %s verified by key %s, none of which is trusted here: trust one of them too (--trusted-key), or lock again with a key trusted here",
		path, l.Index.Name, strings.Join(l.Index.Keys, ", "))
}

// lockPin returns the root's record of the repository sync installs from (--repo, or the
// lockfile's), or nil where there is none.
func lockPin(c *cli.Context, l *repo.Lock) (*db.Repo, error) {
	loc := c.String("repo")
	if loc == "" {
		loc = l.Repo
	}
	src, err := fetch.NewSource(loc, fetch.Options{})
	if err != nil {
		return nil, err
	}
	return rootPin(c, src.URL())
}

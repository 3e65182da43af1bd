package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"syscall"

	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/install"
	"pkg/repo"
)

func installCommand() *cli.Command {
	return &cli.Command{
		Name:      "install",
		Usage:     "install packages and their dependencies",
		ArgsUsage: "NAME[@VERSION|CONSTRAINT]...",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "reinstall",
			Usage: "install the named installed packages again, same version and archive (puts back what pkg verify reports)"}},
		Action: installAction,
	}
}

func installAction(c *cli.Context) (err error) {
	if err := needArgs(c, 1, "package name"); err != nil {
		return err
	}
	reqs, err := requirements(c.Args().Slice())
	if err != nil {
		return err
	}
	f, ix, err := openFetcher(c)
	if err != nil {
		return err
	}
	root, f, ix, err := openRootFor(c, f, ix)
	if err != nil {
		return err
	}
	defer func() { closeRoot(root, err) }()
	in := &installer{c: c, f: f, root: root, requested: reqs}
	if c.Bool("reinstall") {
		pkgs, err := installedAgain(root, ix, reqs)
		if err != nil {
			return err
		}
		in.reinstall = true
		return in.apply(pkgs)
	}
	recs, err := root.DB().List()
	if err != nil {
		return err
	}
	pkgs, err := ix.ResolveInstalled(installedPackages(recs), reqs)
	if err != nil {
		return f.about(err)
	}
	return afterInstall(c, root, reqs, in.run(pkgs, recs))
}

// installedAgain returns the packages the index has for the installed packages reqs names:
// the same version and archive, so that installing them again changes nothing but the files.
func installedAgain(root *install.Root, ix *repo.Index, reqs []repo.Requirement) ([]repo.Package, error) {
	pkgs := make([]repo.Package, 0, len(reqs))
	for _, r := range reqs {
		if len(r.Constraints) > 0 {
			return nil, usagef("install --reinstall: give names of installed packages, not %s", r)
		}
		if slices.ContainsFunc(pkgs, func(p repo.Package) bool { return p.Name == r.Name }) {
			continue // named twice
		}
		cur, err := root.DB().Get(r.Name)
		if errors.Is(err, db.ErrNotInstalled) {
			return nil, fmt.Errorf("reinstall %s: not installed (pkg install %s installs it)", r.Name, r.Name)
		} else if err != nil {
			return nil, err
		}
		p, err := ix.Lookup(repo.Requirement{Name: r.Name, Constraints: []repo.Constraint{{Op: "=", Version: cur.Version}}})
		if err != nil {
			return nil, fmt.Errorf("reinstall %s %s: %w", cur.Name, cur.Version, err)
		}
		if p.SHA256 != cur.SHA256 {
			return nil, fmt.Errorf("reinstall %s %s: the repository's archive (sha256 %s) is not the one installed (%s): the publisher replaced it, and a reinstall only puts back the archive installed; 'pkg upgrade %s' takes the repository's",
				cur.Name, cur.Version, p.SHA256, cur.SHA256, cur.Name)
		}
		// As installed: the entry may have been republished with other metadata for the
		// same archive (repo add --replace), which a reinstall does not take.
		p.Depends, p.Bin, p.Lib, p.Summary = cur.Depends, cur.Bin, cur.Lib, cur.Summary
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

func requirements(args []string) ([]repo.Requirement, error) {
	reqs := make([]repo.Requirement, len(args))
	for i, a := range args {
		r, err := repo.ParseRequirement(a)
		if err != nil {
			return nil, usagef("%v", err)
		}
		reqs[i] = r
	}
	return reqs, nil
}

// installer carries what installing resolved packages needs.
type installer struct {
	c         *cli.Context
	f         *fetcher
	root      *install.Root
	requested []repo.Requirement
	reinstall bool         // the packages are installed ones, installed again as they are
	noted     bool         // the copy fallback has been reported
	remove    []string     // packages to remove in the same commit (sync)
	recs      []db.Package // the root's records, read under its lock, or nil to read them
	locked    bool         // a sync: the lockfile wants every package it installs
}

// run fetches every package of pkgs that recs, the installed packages, do not hold as
// resolved, --jobs at once, stages each as soon as it is in the cache, and once all are
// staged commits them together; so a download that fails changes nothing in the root, and
// the root never holds a package without the dependencies installed with it.
func (in *installer) run(pkgs []repo.Package, recs []db.Package) error {
	in.recs = recs
	var todo []repo.Package
	for _, p := range pkgs {
		if isInstalled(recs, p) {
			if in.isRequested(p.Name) {
				say(in.c, "%s %s is already installed", p.Name, p.Version)
			}
			continue
		}
		todo = append(todo, p)
	}
	return in.apply(todo)
}

// apply records that the root accepted the index todo comes from, then fetches todo,
// --jobs at once, stages each as soon as it is in the cache, and once all are staged
// commits them, and removes in.remove, all or none.
func (in *installer) apply(todo []repo.Package) error {
	if err := in.c.Context.Err(); err != nil { // interrupted while waiting for the root
		return err
	}
	if err := in.f.accept(in.root); err != nil {
		return err
	}
	staged := make([]*install.Staged, len(todo))
	err := in.f.all(todo, func(ctx context.Context, i int, tar string) error {
		members, err := in.f.cache.Members(todo[i].SHA256)
		if err != nil {
			return fmt.Errorf("install %s %s: %w", todo[i].Name, todo[i].Version, err)
		}
		staged[i], err = in.root.Stage(ctx, tar, todo[i], members)
		return err
	})
	if err != nil {
		in.root.Discard(slices.DeleteFunc(staged, func(s *install.Staged) bool { return s == nil })...)
		return err
	}
	before := in.recs // for the versions of what is removed, and sayChanges
	if before == nil {
		if before, err = in.root.DB().List(); err != nil {
			in.root.Discard(staged...)
			return err
		}
	}
	results, err := in.root.Apply(staged, in.remove)
	saySalvaged(in.c, in.root)
	for _, res := range results {
		in.report(res)
	}
	if len(results) > 0 { // the per-package times are their staging: the commit is shared
		say(in.c, "committed %s in %s", count(len(results), "package"), dur(results[0].Commit))
	}
	var links *install.LinksError // committed all the same
	if err != nil && !errors.As(err, &links) {
		return err
	}
	for _, name := range in.remove {
		say(in.c, "removed %s", nameVersion(before, name))
	}
	sayChanges(in.c, in.root, before, func(name string) bool { return in.locked || in.isRequested(name) })
	if len(todo) > 0 {
		if err := in.f.cache.AddRoot(in.root.Dir()); err != nil { // so that a prune from another root keeps todo
			note(in.c, "%s; a cache prune from another root may remove what this one installed from", err)
		}
	}
	shas := make([]string, len(todo))
	for i, p := range todo {
		shas[i] = p.SHA256
	}
	// The fetches did not wait for the disk; now that the packages are installed, their
	// cache entries are worth making durable, so that a reboot (or a cache restored on
	// another machine) does not mean hashing all of their data again.
	in.f.cache.NoSync = in.c.Bool("no-sync")
	if err := in.f.cache.Settle(shas...); err != nil {
		note(in.c, "%s; cache entries left unsynced have all their data checked at their first use after a reboot", err)
	}
	if links != nil {
		return links
	}
	return nil
}

func (in *installer) isRequested(name string) bool {
	for _, r := range in.requested {
		if r.Name == name {
			return true
		}
	}
	return false
}

// noteCopy says, once per root and cache until that changes (tellOnce), why an install
// copies its data rather than share blocks with the cache.
func (in *installer) noteCopy(res *install.Result) {
	switch {
	case res.Method == install.Clone && res.Fallback == nil:
		tellOnce(in.c, "copy", "", nil)
		return
	case res.Fallback == nil || in.noted:
		return
	}
	in.noted = true
	how := "with copy_file_range"
	if res.Method == install.Copy {
		how = "through a buffer"
	}
	why := res.Fallback.Error()
	switch {
	case errors.Is(res.Fallback, syscall.EXDEV):
		why = fmt.Sprintf("the cache %s and the root %s are on different filesystems or mounts", in.c.String("cache"), in.c.String("root"))
	case errors.Is(res.Fallback, syscall.EOPNOTSUPP):
		why = fmt.Sprintf("the filesystem of %s cannot share blocks between files (XFS and btrfs can)", in.c.String("root"))
	}
	tellOnce(in.c, "copy", how+": "+why, func() bool {
		note(in.c, "%s: copying %s instead of sharing blocks", why, how)
		return !in.c.Bool("quiet")
	})
}

func (in *installer) report(res *install.Result) {
	in.noteCopy(res)
	what := "installed " + res.Name + " " + res.Version
	switch c := repo.CompareVersions(res.Version, res.Previous); {
	case in.reinstall || res.Again:
		what = "reinstalled " + res.Name + " " + res.Version
	case res.Previous == "":
	case c > 0:
		what = "upgraded " + res.Name + " " + res.Previous + " to " + res.Version
	case c < 0:
		what = "downgraded " + res.Name + " " + res.Previous + " to " + res.Version
	case in.locked: // the same version from another archive: the lockfile's, older or newer
		what = "replaced " + res.Name + " " + res.Version + " with the archive the lockfile names"
	default:
		what = "replaced " + res.Name + " " + res.Version + " with the archive the repository now has of it"
	}
	say(in.c, "%s: %s, %s (%s cloned, %s copied) in %s", what,
		count(res.Files, "file"), size(res.Bytes), size(res.Cloned), size(res.Copied), dur(res.Elapsed))
}

package main

import (
	"fmt"
	"io"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"

	"pkg/fetch"
	"pkg/install"
	"pkg/repo"
)

func installCommand() *cli.Command {
	return &cli.Command{
		Name:      "install",
		Usage:     "install packages and their dependencies",
		ArgsUsage: "NAME[@VERSION|CONSTRAINT]...",
		Action:    installAction,
	}
}

func installAction(c *cli.Context) error {
	if err := needArgs(c, 1, "package name"); err != nil {
		return err
	}
	reqs, err := requirements(c.Args().Slice())
	if err != nil {
		return err
	}
	src, err := openSource(c)
	if err != nil {
		return err
	}
	ix, err := src.Index(c.Context)
	if err != nil {
		return err
	}
	pkgs, err := ix.Resolve(reqs)
	if err != nil {
		return err
	}
	cache, err := fetch.OpenCache(c.String("cache"))
	if err != nil {
		return err
	}
	root, err := openRoot(c)
	if err != nil {
		return err
	}
	defer root.Close()
	in := &installer{c: c, src: src, cache: cache, root: root, requested: reqs}
	return in.run(pkgs)
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

// installer carries what installing one resolved package after another needs.
type installer struct {
	c         *cli.Context
	src       *fetch.Source
	cache     *fetch.Cache
	root      *install.Root
	requested []repo.Requirement
	noted     bool // the copy fallback has been reported
}

// run fetches and stages every package that is not installed as resolved, then commits them
// in dependency order, so a download that fails changes nothing in the root.
func (in *installer) run(pkgs []repo.Package) error {
	var todo []repo.Package
	for _, p := range pkgs {
		if cur, err := in.root.DB().Get(p.Name); err == nil && cur.Version == p.Version && cur.SHA256 == p.SHA256 {
			if in.isRequested(p.Name) {
				say(in.c, "%s %s is already installed", p.Name, p.Version)
			}
			continue
		}
		todo = append(todo, p)
	}
	var staged []*install.Staged
	for _, p := range todo {
		s, err := in.stage(p)
		if err != nil {
			in.root.Discard(staged...)
			return err
		}
		staged = append(staged, s)
	}
	results, err := in.root.Commit(staged...)
	for _, res := range results {
		in.report(res)
	}
	return err
}

// stage fetches p into the cache and builds its tree in staging.
func (in *installer) stage(p repo.Package) (*install.Staged, error) {
	tar, err := in.cache.Fetch(in.c.Context, in.src, p, progress(in.c, p))
	if err != nil {
		return nil, err
	}
	return in.root.Stage(tar, p)
}

func (in *installer) isRequested(name string) bool {
	for _, r := range in.requested {
		if r.Name == name {
			return true
		}
	}
	return false
}

func (in *installer) report(res *install.Result) {
	if res.Fallback != nil && !in.noted {
		note(in.c, "%v; copying with %s instead of sharing blocks", res.Fallback, res.Method)
		in.noted = true
	}
	verb := "installed"
	if res.Previous != "" {
		verb = "replaced " + res.Previous + " with"
	}
	say(in.c, "%s %s %s: %d files, %s (%s cloned, %s copied) in %s", verb, res.Name, res.Version,
		res.Files, size(res.Bytes), size(res.Cloned), size(res.Copied), dur(res.Elapsed))
}

// progress returns a progress bar for p's download when stdout is a terminal.
func progress(c *cli.Context, p repo.Package) io.Writer {
	if c.Bool("quiet") || !isTerminal(c.App.Writer) {
		return nil
	}
	return progressbar.DefaultBytes(p.Size, fmt.Sprintf("%s %s", p.Name, p.Version))
}

package main

import (
	"github.com/urfave/cli/v2"

	prog "pkg/internal/progress"
	"pkg/session"
)

func fetchCommand() *cli.Command {
	return &cli.Command{
		Name:      "fetch",
		Usage:     "download packages and their dependencies into the cache without installing",
		ArgsUsage: "NAME[@VERSION|CONSTRAINT]...",
		Before:    takes(1, -1, "package name"),
		Action: func(c *cli.Context) error {
			reqs, err := requirements(c.Args().Slice())
			if err != nil {
				return err
			}
			f, ix, err := sess(c).OpenFetcher(c.Context, false)
			if err != nil {
				return err
			}
			pkgs, err := ix.Resolve(reqs)
			if err != nil {
				return ix.About(err)
			}
			obs := f.Observer.(progress)
			obs.Verbose()
			return obs.During(pkgs, func() error { return f.Fetch(c.Context, pkgs, nil) })
		},
	}
}

// progress is the session's observer: progress.Observer, with the reports whose advice
// names pkg's commands and flags.
type progress struct {
	*prog.Observer
	c *cli.Context
}

var _ session.Observer = progress{}

func (o progress) LinksWrong(err error) {
	warn(o.c, "%s; once it can be changed, 'pkg verify' names the links still wrong", err)
}

func (o progress) NotKept(err error) { warn(o.c, "%s; --offline will not have it", err) }

// Unverified warns of an index used unverified, with a hint, under --quiet too, as it is
// about what pkg trusts; of an unsigned local directory it is only a note.
func (o progress) Unverified(err error, local bool) bool {
	if local {
		note(o.c, "%v; %s", err, hint(err, nil))
		return !o.c.Bool("quiet")
	}
	warn(o.c, "%v; %s", err, hint(err, nil))
	return true
}

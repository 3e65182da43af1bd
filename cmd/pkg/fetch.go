package main

import (
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	prog "pkg/internal/progress"
	"pkg/repo"
	"pkg/session"
	"pkg/txn"
)

func fetchCommand() *cli.Command {
	return &cli.Command{
		Name:      "fetch",
		Usage:     "download packages and their dependencies into the cache without installing",
		ArgsUsage: "NAME[@VERSION|CONSTRAINT]...",
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 1, "package name"); err != nil {
				return err
			}
			reqs, err := requirements(c.Args().Slice())
			if err != nil {
				return err
			}
			f, ix, err := openFetcher(c, false)
			if err != nil {
				return err
			}
			pkgs, err := ix.Resolve(reqs)
			if err != nil {
				return ix.About(err)
			}
			obs := f.Observer.(*progress)
			obs.verbose, obs.r = true, nil // made again, verbose: a Reporter keeps nothing between fetches
			return obs.during(pkgs, func() error { return f.Fetch(c.Context, pkgs, nil) })
		},
	}
}

// progress is the session's observer (session.Observer): it reports a fetch's downloads
// (progress.Reporter), made from the command's flags when first used, and words what the
// session tells.
type progress struct {
	c       *cli.Context
	verbose bool // also report packages already in the cache
	r       *prog.Reporter
}

var _ session.Observer = (*progress)(nil)

func (o *progress) rep() *prog.Reporter {
	if o.r == nil {
		o.r = prog.New(o.c.App.Writer, o.c.App.ErrWriter, prog.Options{Quiet: o.c.Bool("quiet"), Verbose: o.verbose,
			NotePrefix: "pkg: note: ", LockTimeout: o.c.Duration("lock-timeout")})
	}
	return o.r
}

func (o *progress) during(pkgs []repo.Package, fn func() error) error {
	return o.rep().During(pkgs, fn)
}
func (o *progress) Fetching(p repo.Package) io.Writer              { return o.rep().Fetching(p) }
func (o *progress) Fetched(ev txn.Fetched)                         { o.rep().Fetched(ev) }
func (o *progress) Waiting(p repo.Package, pids []int, again bool) { o.rep().Waiting(p, pids, again) }
func (o *progress) Refetching(p repo.Package, err error)           { o.rep().Refetching(p, err) }
func (o *progress) Retrying(err error, wait time.Duration, attempt, max int) {
	o.rep().Retrying(err, wait, attempt, max)
}
func (o *progress) Note(text string) { o.rep().Note("%s", text) }
func (o *progress) Warn(text string) { warn(o.c, "%s", text) }
func (o *progress) RootWaiting(holder string) {
	fmt.Fprintf(o.c.App.ErrWriter, "pkg: waiting for %s to finish with %s\n", holder, o.c.String("root"))
}
func (o *progress) LinksWrong(err error) {
	warn(o.c, "%s; once it can be changed, 'pkg verify' names the links still wrong", err)
}

func (o *progress) NotKept(err error) { warn(o.c, "%s; --offline will not have it", err) }

// Unverified warns of an index used unverified, with a hint, under --quiet too, as it is
// about what pkg trusts; of an unsigned local directory it is only a note.
func (o *progress) Unverified(err error, local bool) bool {
	if local {
		note(o.c, "%v; %s", err, hint(err, nil))
		return !o.c.Bool("quiet")
	}
	warn(o.c, "%v; %s", err, hint(err, nil))
	return true
}

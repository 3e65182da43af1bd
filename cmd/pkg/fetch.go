package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	prog "pkg/internal/progress"
	"pkg/repo"
	"pkg/session"
	"pkg/trust"
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

// IndexRead warns of an index the cache could not keep, and of one not verified, or
// verified but expired, with a hint for the first, once per root until that changes
// (tellOnce). It warns under --quiet too, as it is about what pkg trusts; an unsigned
// local directory is only a note: no one stands between it and pkg.
func (o *progress) IndexRead(ix *txn.Index) {
	c, res := o.c, ix.Trust
	if ix.NotKept != nil {
		warn(c, "%s; --offline will not have it", ix.NotKept)
	}
	u := res.Unverified()
	tellOnce(c, "index "+res.Location, res.Standing(), func() bool {
		switch {
		case res.Expired:
			warn(c, "repository %s: offline, using the last verified index (version %d), which expired at %s",
				res.Location, res.Version, res.Expires.UTC().Format(time.RFC3339))
		case u == nil:
		case errors.Is(u, trust.ErrUsedUnsigned) && strings.HasPrefix(res.Location, "file://"):
			note(c, "%v; %s", u, hint(u, nil))
			return !c.Bool("quiet")
		default:
			warn(c, "%v; %s", u, hint(u, nil))
		}
		return true
	})
}

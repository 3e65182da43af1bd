package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/urfave/cli/v2"

	"pkg/internal/shell"
	"pkg/repo"
	"pkg/report"
	"pkg/session"
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
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "pkg.lock", Usage: "lockfile to write", TakesFile: true},
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
	reqs, err := requirements(c, c.Args().Slice())
	platforms, perr := repo.ParsePlatforms(c.StringSlice("platform"))
	switch {
	case err != nil:
		return err
	case perr != nil:
		return usagef("lock: --platform: %v", perr)
	}
	if c.NArg() == 0 {
		reqs = old.Requires
	}
	l, err := sess(c).Lock(c.Context, session.Request{Requires: reqs, Lock: old, LockPath: path, LockRepos: lockRepos(c), Platforms: platforms})
	if ue := (*txn.UnresolvedError)(nil); c.NArg() == 0 && errors.As(err, &ue) {
		return fmt.Errorf("%w; these are the requirements %s records (%s): to change them, name the ones to lock, %s",
			err, path, repo.JoinRequirements(reqs), cmdlineOf(c).carry("'pkg lock -o "+shell.Quote(path)+" NAME...'", false))
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

func syncCommand() *cli.Command {
	return &cli.Command{
		Name:      "sync",
		Usage:     "make the root hold exactly the packages of a lockfile",
		ArgsUsage: "[NAME[@VERSION|CONSTRAINT]...]",
		Description: "sync installs what is missing, replaces what differs and removes what the lockfile\n" +
			"does not list, fetching each archive by the lockfile's URL and checking it against the\n" +
			"lockfile's size and sha256. Requirements given must be those the lockfile was made for.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Value: "pkg.lock", Usage: "lockfile to read", TakesFile: true},
			&cli.BoolFlag{Name: "frozen", Usage: "fail unless the repository still resolves the lockfile's requirements to its packages"},
			&cli.BoolFlag{Name: "keep-extra", Usage: "keep installed packages the lockfile does not list, and the requests of those it lists only as another's dependency"},
		}, planFlags()...),
		Before: planning(0, -1, ""),
		Action: syncAction,
	}
}

// syncAction makes the root hold exactly the packages of the lockfile (session.Sync).
// Nothing but the lockfile and the database is read when they agree.
func syncAction(c *cli.Context) error {
	path := c.String("file")
	l, err := readSyncLock(c, path)
	if err != nil {
		return err
	}
	p, err := plan(c, session.Request{Op: session.Sync, Lock: l, LockPath: path, LockRepos: lockRepos(c),
		KeepExtra: c.Bool("keep-extra"), Frozen: c.Bool("frozen")})
	if ee := (*session.ExtraError)(nil); errors.As(err, &ee) {
		return fmt.Errorf("%w: pass --keep-extra to keep them, --root DIR for a root of the project's own, or --root %s to make this one hold exactly %s", err, ee.Root, path)
	}
	if p == nil {
		return syncError(c, path, "", l, err)
	}
	if len(p.Changes) == 0 && len(p.Unchanged) == 0 {
		say(c, "nothing to do: root matches %s", path)
		return p.Close()
	}
	return syncError(c, path, "", l, applyRecorded(c, p))
}

// syncError returns err, of a sync of the lockfile at path or a run of the package run
// from it (pkg run --lock; "" for a sync), as an offlineSyncError, a goneSyncError or a
// sizeError where the lockfile is what to advise by. l is the lockfile as read, nil where
// the caller has none: it is read again where the advice needs it.
func syncError(c *cli.Context, path, run string, l *repo.Lock, err error) error {
	if errors.Is(err, session.ErrGone) && lockRepos(c) {
		if l == nil {
			l, _ = repo.ReadLock(path)
		}
		// A --repo in the place of one of several repositories names it.
		return &goneSyncError{Path: path, Several: l != nil && len(l.Repos) > 0, Run: run, error: err}
	}
	return lockSize(path, offlineSync(path, run, err))
}

// sizeError is the refusal of an archive whose size is declared wrong (a
// *session.SizeError), with what the command knows of it: Lock, the lockfile that
// declares the size ("" where an index does), and Root, that the command was to change a
// root, which the refusal left as it was.
type sizeError struct {
	Lock string
	Root bool
	error
}

func (e *sizeError) Unwrap() error { return e.error }

// lockSize returns err, of a command that took its packages from the lockfile at path,
// with that lockfile as what declares a size found wrong (sized).
func lockSize(path string, err error) error {
	return sized(err, func(se *sizeError) { se.Lock = path })
}

// rootKept returns err, of a command that was to change a root, with the root said to be
// as it was where an archive's size was found wrong (sized).
func rootKept(err error) error {
	return sized(err, func(se *sizeError) { se.Root = true })
}

// sized returns err, with its *sizeError (one made where it holds a *session.SizeError
// alone) set by set; any other err as it is.
func sized(err error, set func(*sizeError)) error {
	se := (*sizeError)(nil)
	if !errors.As(err, &se) {
		if !errors.As(err, new(*session.SizeError)) {
			return err
		}
		se = &sizeError{error: err}
		err = se
	}
	set(se)
	return err
}

// goneSyncError is a sync's archive its lockfile's repository does not have, at the
// lockfile at Path's record of it (no --repo given): the repository may have moved, which
// a sync, reading no index, cannot tell from an archive removed. Several says the
// lockfile records several repositories.
type goneSyncError struct {
	Path    string
	Several bool
	Run     string // the package of a run of the lockfile (pkg run --lock), "" for a sync
	error
}

func (e *goneSyncError) Unwrap() error { return e.error }

// offlineSyncError is an offline sync's or run's refusal of archives the cache lacks or
// holds damaged: the lockfile at Path pins what to fetch, where 'pkg fetch NAME' takes the
// index's.
type offlineSyncError struct {
	Path string
	Run  string // the package of a run of the lockfile (pkg run --lock), "" for a sync
	error
}

func (e *offlineSyncError) Unwrap() error { return e.error }

// offlineSync returns err, of a sync or a run of package run (pkg run --lock), as an
// offlineSyncError where it is an offline refusal of an
// archive the cache lacks or holds damaged.
func offlineSync(path, run string, err error) error {
	if nc := (*txn.NotCachedError)(nil); damagedOffline(err) || errors.As(err, &nc) {
		return &offlineSyncError{Path: path, Run: run, error: err}
	}
	return err
}

// readSyncLock reads the lockfile at path and checks it against the command line, and
// says where --repo takes the place of the one repository it records.
func readSyncLock(c *cli.Context, path string) (*repo.Lock, error) {
	reqs, err := requirements(c, c.Args().Slice())
	if err != nil {
		return nil, err
	}
	l, err := repo.ReadLockFor(path, reqs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("sync: no lockfile %s: %s writes one, or pass -f FILE", path, cmdlineOf(c).carry("'pkg lock NAME...'", false))
	} else if err != nil {
		return nil, err
	}
	if rs, err := flagRepos(c); err == nil && len(rs) > 0 && len(l.Repos) == 0 {
		if url, err := session.SourceURL(rs[0].URLs[0]); err == nil && url != l.Repo {
			note(c, "using the repository at %s (--repo or PKG_REPO) in place of %s, which %s records", url, l.Repo, path)
		}
	}
	return l, nil
}

// lockRepos reports whether the repositories of a lockfile are those a lock or sync uses:
// unless --repo or PKG_REPO says otherwise.
func lockRepos(c *cli.Context) bool { return !c.IsSet("repo") && os.Getenv("PKG_REPO") == "" }

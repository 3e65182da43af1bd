package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"pkg/internal/units"
	"pkg/repo"
	"pkg/session"
)

func mirrorCommand() *cli.Command {
	return &cli.Command{
		Name:      "mirror",
		Usage:     "write a directory a web server serves as a by-digest mirror: archives by sha256, indexes as published",
		ArgsUsage: "[--lock FILE | NAME[@VERSION|CONSTRAINT]...] DIR",
		Description: "mirror writes every archive of a lockfile (or of the packages named, with their\n" +
			"dependencies) as published, verified, to DIR/sha256/<hex>, and each repository's signed\n" +
			"index and signature, byte for byte, to DIR/<repository>/. Serve DIR, then point\n" +
			"--digest-mirror (or digest-mirrors in the configuration) at it.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "lock", Usage: "mirror the packages of this lockfile, for every platform it records", TakesFile: true},
			&cli.StringSliceFlag{Name: "platform", Usage: "with NAME...: for these platforms, GOOS-GOARCH (default: this machine's, where the repository names platforms)"},
		},
		Before: takes(1, -1, "directory"),
		Action: mirrorAction,
	}
}

func mirrorAction(c *cli.Context) error {
	args := c.Args().Slice()
	// DIR is made absolute so that the paths of its errors, absolute as session.PathOf wants
	// them, fall under it.
	dir, err := filepath.Abs(args[len(args)-1])
	if err != nil {
		return err
	}
	r, err := mirrorRequest(c, args[:len(args)-1])
	if err != nil {
		return err
	}
	m, err := sess(c).Mirror(c.Context, r, dir)
	if err != nil {
		return &mirrorDirError{dir, err}
	}
	var idx []string
	for _, n := range m.Indexes {
		idx = append(idx, filepath.Join(dir, n)+"/")
	}
	say(c, "wrote %s (%s) to %s, %d there already; indexes in %s",
		units.Count(m.Wrote, "archive"), units.Size(m.Bytes), filepath.Join(dir, "sha256")+"/", m.Kept, strings.Join(idx, ", "))
	return nil
}

// mirrorDirError is a failure of pkg mirror into dir (absolute), whose hints name dir where the
// failing path is in it, rather than --root or --cache.
type mirrorDirError struct {
	dir string
	error
}

func (e *mirrorDirError) Unwrap() error { return e.error }

// mirrorDirHint is the advice for a mirror's directory that cannot be written.
func mirrorDirHint(me *mirrorDirError) string {
	dir, p := me.dir, session.PathOf(me.error)
	if p == "" || p != dir && !strings.HasPrefix(p, dir+"/") {
		return ""
	}
	switch {
	case errors.Is(me.error, syscall.ENOSPC):
		return fmt.Sprintf("the filesystem holding the mirror directory %s is full (of data or of inodes): free space there, or mirror into a directory on another filesystem", dir)
	case errors.Is(me.error, syscall.EDQUOT):
		return fmt.Sprintf("your disk quota on the filesystem holding the mirror directory %s is used up: free space there, or mirror into a directory on another filesystem", dir)
	case errors.Is(me.error, syscall.EROFS):
		return fmt.Sprintf("the mirror directory %s is on a read-only filesystem: remount it read-write, or mirror into a directory on another filesystem", dir)
	case errors.Is(me.error, fs.ErrPermission):
		return fmt.Sprintf("you may not write in the mirror directory %s: mirror into a directory you can write", dir)
	}
	return ""
}

// mirrorRequest is what pkg mirror mirrors: the lockfile of --lock, or one made now of the
// packages named.
func mirrorRequest(c *cli.Context, names []string) (session.Request, error) {
	path := c.String("lock")
	switch {
	case path != "" && len(names) > 0:
		return session.Request{}, usagef("mirror: --lock or package names, not both")
	case path == "" && len(names) == 0:
		return session.Request{}, usagef("mirror: name packages or a lockfile (--lock FILE), then the directory")
	case path != "" && c.IsSet("platform"):
		return session.Request{}, usagef("mirror: --platform goes with package names: a lockfile's platforms are its own")
	case path != "":
		l, err := repo.ReadLock(path)
		return session.Request{Lock: l, LockPath: path, LockRepos: lockRepos(c)}, err
	}
	reqs, err := requirements(c, names)
	if err != nil {
		return session.Request{}, err
	}
	platforms, err := repo.ParsePlatforms(c.StringSlice("platform"))
	if err != nil {
		return session.Request{}, usagef("mirror: --platform: %v", err)
	}
	l, err := sess(c).Lock(c.Context, session.Request{Requires: reqs, Platforms: platforms})
	return session.Request{Lock: l}, err
}

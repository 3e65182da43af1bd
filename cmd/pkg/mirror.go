package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
	dir := args[len(args)-1]
	r, err := mirrorRequest(c, args[:len(args)-1])
	if err != nil {
		return err
	}
	m, err := sess(c).Mirror(c.Context, r, dir)
	if err != nil && r.LockPath != "" {
		err = lockSize(r.LockPath, err)
	}
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

// mirrorDirError is a failure of pkg mirror into dir (as given), whose hints name dir where
// the failing path is in it, rather than --root or --cache.
type mirrorDirError struct {
	dir string
	error
}

func (e *mirrorDirError) Unwrap() error { return e.error }

// mirrorDirHint is the advice for a mirror's directory that cannot be written.
func mirrorDirHint(me *mirrorDirError) string {
	dir := me.dir
	if !inDir(me.error, dir) {
		return ""
	}
	switch {
	case errors.Is(me.error, syscall.ENOSPC):
		return fmt.Sprintf("the filesystem holding the mirror directory %s is full (of data or of inodes): free space there, or mirror into a directory on another filesystem", dir)
	case errors.Is(me.error, syscall.EDQUOT):
		return fmt.Sprintf("your disk quota on the filesystem holding the mirror directory %s is used up: free space there, or mirror into a directory on another filesystem", dir)
	case errors.Is(me.error, syscall.EROFS):
		return fmt.Sprintf("the mirror directory %s is on a read-only filesystem: remount it read-write, or mirror into a directory on another filesystem", dir)
	case session.PathDenied(me.error, dir):
		return fmt.Sprintf("you may not write in the mirror directory %s: mirror into a directory you can write", dir)
	}
	return ""
}

// inDir reports whether err is about a path in dir or dir itself (a *fs.PathError's, or
// either of a rename's *os.LinkError), each made absolute: the mirror's paths are dir's, as
// given, relative or not.
func inDir(err error, dir string) bool {
	var paths []string
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		paths = []string{pe.Path}
	case errors.As(err, &le):
		paths = []string{le.Old, le.New}
	}
	d, derr := filepath.Abs(dir)
	return derr == nil && slices.ContainsFunc(paths, func(p string) bool {
		p, perr := filepath.Abs(p)
		return perr == nil && (p == d || strings.HasPrefix(p, d+"/"))
	})
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

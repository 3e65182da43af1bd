package main

import (
	"os"
	"path/filepath"
	"syscall"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"pkg/cmd/pkg/internal/cliusage"
	"pkg/publish"
	"pkg/repo"
	"pkg/report"
)

// entryFlags are repo add's flags that describe the one archive added.
var entryFlags = []string{"name", "version", "depends", "provides", "conflicts", "replaces", "bin", "lib", "env", "summary", "platform"}

// repoAddArgs is repo add's Before: REPO_DIR ARCHIVE..., which takes the flags of one
// archive's entry with one archive alone, or REPO_DIR alone with --from, which takes none.
func repoAddArgs(c *cli.Context) error {
	if !c.IsSet("from") {
		for _, f := range []string{"lock", "npm-cache"} {
			if c.IsSet(f) {
				return usagef("repo add: --%s goes with --from", f)
			}
		}
		if c.NArg() < 2 {
			return want(2, "REPO_DIR ARCHIVE...")(c)
		}
		for _, f := range entryFlags {
			if c.IsSet(f) && c.NArg() > 2 {
				return usagef("repo add: --%s describes one archive, and %d are given: add the archive it describes alone, with --%s, and the others together, each described by its .deb's control file or npm package.json", f, c.NArg()-1, f)
			}
		}
		return nil
	}
	for _, f := range entryFlags {
		if c.IsSet(f) {
			return usagef("repo add: --%s describes one archive: with --from, each package's package.json describes it", f)
		}
	}
	return cliusage.All(takes(0, 1, ""), want(1, "REPO_DIR (with --from)"))(c)
}

// repoImport adds every package of the package-lock.json --from names to a repository
// directory (publish.ImportNPMLock) and writes the lockfile of its project.
func repoImport(c *cli.Context) error {
	dir, from := c.Args().Get(0), c.String("from")
	out := c.String("lock")
	if !c.IsSet("lock") {
		out = filepath.Join(filepath.Dir(from), "pkg.lock")
	}
	cache := c.String("npm-cache")
	if !c.IsSet("npm-cache") {
		cache = publish.NPMCache()
	}
	if err := lockWritable(out); err != nil {
		return err
	}
	signer, keys, err := newSigner(c, "")
	if err != nil {
		return err
	}
	res, err := publish.ImportNPMLock(c.Context, dir, from, publish.NPMImport{Cache: cache, Registry: publish.NPMRegistry(), Offline: c.Bool("offline"), Replace: c.Bool("replace"), Jobs: c.Int("jobs"), Signer: signer})
	if err == nil {
		err = repo.WriteLock(out, res.Lock)
	}
	if err != nil {
		return err
	}
	lines, notes := report.ImportedText(dir, from, out, res)
	for _, p := range res.New {
		tellAll(c, warn, report.AbsentWarnings(p, res.Absent[p.Key()]))
	}
	tellAll(c, note, notes)
	tellAll(c, say, lines)
	tellAll(c, warn, report.LeftWarnings(dir, res.Dropped))
	sayIndex(c, dir, res.Written, res.Meta, signer, keys)
	return nil
}

// lockWritable refuses, before the repository changes, a lockfile path the import could
// not write at its end (a missing or read-only directory, a directory at the path): the
// import would otherwise leave the repository changed and no lockfile.
func lockWritable(path string) error {
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		return &os.PathError{Op: "repo add: write lockfile", Path: path, Err: syscall.EISDIR}
	}
	if err := unix.Access(filepath.Dir(path), unix.W_OK|unix.X_OK); err != nil {
		return &os.PathError{Op: "repo add: write lockfile", Path: path, Err: err}
	}
	return nil
}

package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/internal/cliusage"
	"pkg/internal/xdg"
)

// The root and the cache: their defaults, and opening them for a command.

// defaultDirs treats an empty --root or --cache (PKG_ROOT= in a script, say) as unset:
// otherwise pkg would make its root or cache in the current directory.
func defaultDirs(c *cli.Context) error {
	for name, def := range map[string]string{"root": defaultRoot(), "cache": defaultCache()} {
		if c.String(name) == "" {
			if err := c.Set(name, def); err != nil {
				return err
			}
			c.App.Metadata["default "+name] = true
		}
		// Said once here, not as each later open of a path under it would say it.
		if info, err := os.Stat(c.String(name)); err == nil && !info.IsDir() {
			return globalUsagef("--%s %s is not a directory", name, c.String(name))
		}
	}
	return nil
}

// openCache opens the cache, for the rest of the command: run closes it, which lets other
// processes remove entries again (fetch.OpenCache).
func openCache(c *cli.Context) (*fetch.Cache, error) { return openCacheFor(c, false) }

// openCacheFor opens the cache as openCache does, or, for a dry run, so that nothing in it
// changes (fetch.OpenCacheReadOnly).
func openCacheFor(c *cli.Context, dry bool) (*fetch.Cache, error) {
	open := fetch.OpenCache
	if dry {
		open = fetch.OpenCacheReadOnly
	}
	cache, err := open(c.String("cache"))
	if err == nil {
		caches, _ := c.App.Metadata["caches"].([]*fetch.Cache)
		c.App.Metadata["caches"] = append(caches, cache)
	}
	return cache, err
}

func closeCaches(app *cli.App) {
	caches, _ := app.Metadata["caches"].([]*fetch.Cache)
	for _, c := range caches {
		c.Close()
	}
}

// rootNamed reports whether the user named the root (--root or PKG_ROOT, not empty)
// rather than leaving it at the default.
func rootNamed(c *cli.Context) bool {
	return c.IsSet("root") && c.App.Metadata["default root"] != true
}

func defaultRoot() string  { return xdg.Dir("XDG_DATA_HOME", ".local/share") }
func defaultCache() string { return xdg.Dir("XDG_CACHE_HOME", ".cache") }

func openRoot(c *cli.Context) (*install.Root, error) {
	r, err := install.Open(c.Context, c.String("root"), rootOptions(c))
	if err != nil {
		return r, err
	}
	heldRoot(c, r)
	if r.Links() != nil {
		warn(c, "%s; once it can be changed, 'pkg verify' names the links still wrong", r.Links())
	}
	for _, n := range r.Notes() {
		if n.Warn {
			warn(c, "%s", n.Text)
		} else {
			note(c, "%s", n.Text)
		}
	}
	return r, nil
}

// closeRoot closes root after a command that may have made it, abandoning it if the
// command failed: a first install or sync that failed leaves no root.
func closeRoot(root *install.Root, err error) {
	if err != nil {
		root.Abandon()
	} else {
		root.Close()
	}
}

// rootExists refuses, for a command that only works on what is installed (remove, verify,
// upgrade, cache prune), a root where nothing was ever installed: a mistyped --root must
// not pass as an empty root, nor be created.
func rootExists(c *cli.Context) error {
	if err := install.Exists(c.String("root")); err != nil {
		return fmt.Errorf("%w: nothing was ever installed there", err)
	}
	return nil
}

// viewRoot calls fn with the root's database, without waiting for a command that is
// changing the root: fn then sees what was installed before that command.
func viewRoot(c *cli.Context, fn func(d *db.DB) error) error {
	busy := func(holder string) { note(c, "%s", install.BusyText(holder, c.String("root"))) }
	return install.View(c.String("root"), rootOptions(c), busy, fn)
}

// peekRoot calls fn with the root's database as viewRoot does, silently, and not at all
// where there is no root yet.
func peekRoot(c *cli.Context, fn func(d *db.DB) error) error {
	err := install.View(c.String("root"), rootOptions(c), nil, fn)
	if errors.Is(err, install.ErrNoRoot) {
		return nil
	}
	return err
}

func rootOptions(c *cli.Context) install.Options {
	return install.Options{
		NoSync:      c.Bool("no-sync"),
		LockTimeout: c.Duration("lock-timeout"),
		Owner:       strings.Join(cliusage.WithoutCredentials(os.Args), " "), // others can read it
		Waiting: func(holder string) {
			fmt.Fprintf(c.App.ErrWriter, "pkg: waiting for %s to finish with %s\n", holder, c.String("root"))
		},
	}
}

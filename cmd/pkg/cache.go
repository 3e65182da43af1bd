package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"pkg/fetch"
	"pkg/internal/units"
	"pkg/txn"
)

func cacheCommand() *cli.Command {
	return &cli.Command{
		Name:  "cache",
		Usage: "show or empty the cache of converted packages",
		Subcommands: []*cli.Command{{
			Name:   "list",
			Usage:  "list the cached packages: entry, package, size, last use",
			Action: cacheListAction,
		}, {
			Name:  "clean",
			Usage: "remove every cached package",
			Action: func(c *cli.Context) error {
				if err := maxArgs(c, 0); err != nil {
					return err
				}
				cache, err := removingCache(c)
				if cache == nil {
					return err
				}
				return cacheRemove(c, cache, func(fetch.Entry) bool { return false }, "")
			},
		}, {
			Name:   "prune",
			Usage:  "remove the cached packages no installed package uses",
			Action: cachePruneAction,
		}},
	}
}

func cacheListAction(c *cli.Context) error {
	if err := maxArgs(c, 0); err != nil {
		return err
	}
	if cacheMissing(c) {
		return nil
	}
	cache, err := openCache(c)
	if err != nil {
		return err
	}
	es, err := cache.List()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	var bad []error
	for _, e := range es {
		what := e.Name + " " + e.Version
		if e.Err != nil {
			what = "unknown package"
			bad = append(bad, e.Err)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.SHA256[:min(16, len(e.SHA256))], what, units.Size(e.Size),
			e.Used.Local().Format("2006-01-02 15:04"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	switch {
	case len(bad) > 0:
		return fmt.Errorf("cache list: cannot read which package each of %s is (%v): the cache's files must be readable by whoever uses it; 'pkg cache clean' as their owner removes them",
			units.Count(len(bad), "cached archive"), bad[0])
	case len(es) == 0:
		note(c, "nothing is cached in %s", c.String("cache"))
	}
	return nil
}

func cachePruneAction(c *cli.Context) error {
	if err := maxArgs(c, 0); err != nil {
		return err
	}
	if err := rootExists(c); err != nil {
		return err
	}
	// Once no other process uses the cache, what every root installed is in its database.
	// The roots' own locks are not needed, so a command that waits for the cache while it
	// holds one cannot hold this one up.
	cache, err := removingCache(c)
	if cache == nil {
		return err
	}
	used, forgot, err := txn.Used(cache, c.String("root"), rootOptions(c))
	for _, dir := range forgot {
		note(c, "forgot root %s, which installed from this cache and is gone", dir)
	}
	if err != nil {
		return err
	}
	return cacheRemove(c, cache, func(e fetch.Entry) bool { return used[e.SHA256] }, " no installed package uses")
}

// removingCache opens the cache to remove entries, as its only user, saying so if it must
// wait for others; it returns nil where there is no cache (cacheMissing notes it).
func removingCache(c *cli.Context) (*fetch.Cache, error) {
	if cacheMissing(c) {
		return nil, nil
	}
	cache, err := openCache(c)
	if err != nil {
		return nil, err
	}
	err = cache.Exclusive(c.Context, func(pids []int) {
		who := ""
		if len(pids) > 0 {
			who = ": " + processes(pids)
		}
		note(c, "waiting for the other pkg commands using the cache %s to finish%s", c.String("cache"), who)
	})
	if err != nil {
		return nil, err
	}
	return cache, nil
}

// cacheRemove removes the entries keep refuses and says how many and how much.
func cacheRemove(c *cli.Context, cache *fetch.Cache, keep func(fetch.Entry) bool, why string) error {
	removed, err := cache.Remove(keep)
	var n int64
	for _, e := range removed {
		n += e.Size
	}
	if err == nil || len(removed) > 0 { // what was removed before the error, if anything
		unfinished := ""
		if u := cache.RemoveUnfinished(); u > 0 {
			unfinished = ", and " + units.Size(u) + " that killed downloads left"
		}
		say(c, "removed %s%s, %s%s", units.Count(len(removed), "cached package"), why, units.Size(n), unfinished)
	}
	return err
}

// cacheMissing reports, with a note, that the cache directory does not exist: the cache
// commands then have nothing to show or remove, and make no directory.
func cacheMissing(c *cli.Context) bool {
	dir := c.String("cache")
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	note(c, "nothing is cached: no cache at %s", dir)
	return true
}

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
				t, err := cache.Trim(fetch.Limits{}, func(fetch.Entry) bool { return false })
				sayRemoved(c, cache, t, err, "")
				return err
			},
		}, {
			Name:  "prune",
			Usage: "remove the cached packages no installed package uses, within limits",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "older-than", Usage: "remove only those unused for longer than `DURATION` (30d, 12h; 0: all)"},
				&cli.StringFlag{Name: "max-size", Usage: "remove the least recently used until the cache takes at most `SIZE` of disk (10GiB, 500MB; 0: all)"},
			},
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
	default:
		note(c, "%s, %s of disk (a block several share counted once)", units.Count(len(es), "cached package"), units.Size(cache.DiskUsage(es)))
	}
	return nil
}

func cachePruneAction(c *cli.Context) error {
	if err := maxArgs(c, 0); err != nil {
		return err
	}
	l, err := cacheLimits(c)
	if err != nil {
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
	t, forgot, err := txn.Prune(cache, c.String("root"), rootOptions(c), l)
	for _, dir := range forgot {
		note(c, "forgot root %s, which installed from this cache and is gone", dir)
	}
	why := " no installed package uses"
	if l.OlderThan > 0 {
		why += " and unused for " + units.Roughly(l.OlderThan)
	}
	if l.MaxSize > 0 {
		why += ", the least recently used first"
	}
	sayRemoved(c, cache, t, err, why)
	if err == nil && l.MaxSize > 0 && t.Size > l.MaxSize {
		note(c, "the cache takes %s, over its limit of %s: the rest is what installed packages use", units.Size(t.Size), units.Size(l.MaxSize))
	}
	return err
}

// cacheLimits returns the limits of cache prune: each flag given, else the configuration's.
// A flag of 0 lifts both limits: every entry no root uses goes.
func cacheLimits(c *cli.Context) (fetch.Limits, error) {
	cfg, err := loadConfig(c)
	if err != nil {
		return fetch.Limits{}, err
	}
	l := fetch.Limits{OlderThan: cfg.Cache.OlderThan, MaxSize: cfg.Cache.MaxSize}
	if c.IsSet("older-than") {
		d, err := units.ParseDuration(c.String("older-than"))
		if err != nil {
			return l, usagef("cache prune --older-than: %v", err)
		}
		l.OlderThan = d
	}
	if c.IsSet("max-size") {
		n, err := units.ParseSize(c.String("max-size"))
		if err != nil {
			return l, usagef("cache prune --max-size: %v", err)
		}
		l.MaxSize = n
	}
	if c.IsSet("older-than") && l.OlderThan == 0 || c.IsSet("max-size") && l.MaxSize == 0 {
		return fetch.Limits{}, nil
	}
	return l, nil
}

// growing are the commands that may add entries to the cache, after which autoPrune runs;
// not run, which becomes its command (execve) once its root is ready.
var growing = map[string]bool{"install": true, "upgrade": true, "sync": true, "fetch": true}

// autoPrune prunes the cache the command used, when the configuration sets a limit and a
// prune is due (txn.AutoPrune), saying what it removed, or why it could not, in one line.
// c is the app's context, after the command, which has closed its root.
func autoPrune(c *cli.Context, command string) {
	caches, _ := c.App.Metadata["caches"].([]*fetch.Cache)
	if !growing[command] || len(caches) == 0 || caches[0].ReadOnly {
		return
	}
	cfg, err := loadConfig(c)
	if err != nil {
		return // the command reading the configuration says so
	}
	l := fetch.Limits{OlderThan: cfg.Cache.OlderThan, MaxSize: cfg.Cache.MaxSize}
	t, _, done, err := txn.AutoPrune(caches[0], c.String("root"), rootOptions(c), l)
	switch {
	case err != nil:
		note(c, "the cache was not pruned: %v", err)
	case done && len(t.Removed) > 0:
		note(c, "pruned the cache to its configured limits: removed %s no installed package uses, %s; it takes %s",
			units.Count(len(t.Removed), "cached package"), units.Size(t.Freed), units.Size(t.Size))
	}
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

// sayRemoved says how many entries t removed and how much disk that freed, with the
// leftovers of killed downloads it removes too, unless err came before any removal.
func sayRemoved(c *cli.Context, cache *fetch.Cache, t fetch.Trimmed, err error, why string) {
	if err != nil && len(t.Removed) == 0 {
		return
	}
	unfinished := ""
	if u := cache.RemoveUnfinished(); u > 0 {
		unfinished = ", and " + units.Size(u) + " that killed downloads left"
	}
	say(c, "removed %s%s, %s%s", units.Count(len(t.Removed), "cached package"), why, units.Size(t.Freed), unfinished)
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

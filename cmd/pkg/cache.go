package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/urfave/cli/v2"

	"pkg/fetch"
	prog "pkg/internal/progress"
	"pkg/internal/units"
	"pkg/report"
	"pkg/runner"
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
			Name:   "clean",
			Usage:  "remove every cached package",
			Action: func(c *cli.Context) error { return trimCache(c, false) },
		}, {
			Name:  "prune",
			Usage: "remove the cached packages no installed package uses, within limits",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "older-than", Usage: "remove only those unused for longer than `DURATION` (30d, 12h; 0: all)"},
				&cli.StringFlag{Name: "max-size", Usage: "remove the least recently used until the cache takes at most `SIZE` of disk (10GiB, 500MB; 0: all)"},
			},
			Action: func(c *cli.Context) error { return trimCache(c, true) },
		}},
	}
}

func cacheListAction(c *cli.Context) error {
	if err := maxArgs(c, 0); err != nil || cacheMissing(c) {
		return err
	}
	cache, err := openCache(c)
	if err != nil {
		return err
	}
	es, err := cache.List()
	if err != nil {
		return err
	}
	bad, err := report.WriteCache(c.App.Writer, es)
	switch {
	case err != nil:
		return err
	case len(bad) > 0:
		return fmt.Errorf("cache list: cannot read which package each of %s is (%v): the cache's files must be readable by whoever uses it; 'pkg cache clean' as their owner removes them",
			units.Count(len(bad), "cached archive"), bad[0])
	case len(es) == 0:
		note(c, "nothing is cached in %s", c.String("cache"))
	default:
		note(c, "%s", report.CacheText(len(es), cache.DiskUsage(es)))
	}
	return nil
}

// trimCache removes every entry (cache clean) or, pruning, those no root uses within the
// limits (txn.Prune).
func trimCache(c *cli.Context, prune bool) error {
	if err := maxArgs(c, 0); err != nil {
		return err
	}
	var l fetch.Limits
	if prune {
		var err error
		if l, err = cacheLimits(c); err != nil {
			return err
		}
		if err := rootExists(c); err != nil {
			return err
		}
	}
	// The roots' locks are not needed, so a command that waits for the cache while it
	// holds one cannot hold this one up.
	cache, err := removingCache(c)
	if cache == nil {
		return err
	}
	n, err := runner.Prune(cache, l)
	if n > 0 {
		say(c, "removed %s no command runs from", units.Count(n, "run root"))
	}
	if err != nil {
		return err
	}
	var t fetch.Trimmed
	if prune {
		var forgot []string
		t, forgot, err = txn.Prune(cache, c.String("root"), rootOptions(c), l)
		for _, dir := range forgot {
			note(c, "forgot root %s, which installed from this cache and is gone", dir)
		}
	} else {
		t, err = cache.Trim(l, func(fetch.Entry) bool { return false })
	}
	if err == nil || len(t.Removed) > 0 { // an error before any removal is all there is to say
		say(c, "%s", report.TrimmedText(t, prune, l, cache.RemoveUnfinished()))
	}
	if s := report.OverLimitText(t, l); err == nil && s != "" {
		note(c, "%s", s)
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
		if l.OlderThan, err = units.ParseDuration(c.String("older-than")); err != nil {
			return l, usagef("cache prune --older-than: %v", err)
		}
	}
	if c.IsSet("max-size") {
		if l.MaxSize, err = units.ParseSize(c.String("max-size")); err != nil {
			return l, usagef("cache prune --max-size: %v", err)
		}
	}
	if c.IsSet("older-than") && l.OlderThan == 0 || c.IsSet("max-size") && l.MaxSize == 0 {
		return fetch.Limits{}, nil
	}
	return l, nil
}

// growing are the commands that may add entries to the cache, after which autoPrune runs;
// not run, which becomes its command (execve) once its root is ready.
var growing = map[string]bool{"install": true, "upgrade": true, "sync": true, "fetch": true}

// autoPrune prunes the cache the command used when a prune is due (txn.AutoPrune), saying
// what it removed, or why it could not, in one line. c is the app's context, after the
// command, which has closed its root.
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
	if err != nil {
		note(c, "the cache was not pruned: %v", err)
	} else if s := report.AutoPrunedText(t); done && s != "" {
		note(c, "%s", s)
	}
	if done && l.OlderThan > 0 { // their entries go at the next prune
		if n, err := runner.Prune(caches[0], l); err != nil {
			note(c, "the run roots were not pruned: %v", err)
		} else if n > 0 {
			note(c, "removed %s unused for %s", units.Count(n, "run root"), units.Duration(l.OlderThan))
		}
	}
}

// removingCache opens the cache to remove entries, as its only user, saying so if it must
// wait for others; it returns nil where there is no cache (cacheMissing notes it).
func removingCache(c *cli.Context) (*fetch.Cache, error) {
	if cacheMissing(c) {
		return nil, nil
	}
	cache, err := openCache(c)
	if err == nil {
		err = cache.Exclusive(c.Context, func(pids []int) {
			who := ""
			if len(pids) > 0 {
				who = ": " + prog.Processes(pids)
			}
			note(c, "waiting for the other pkg commands using the cache %s to finish%s", c.String("cache"), who)
		})
	}
	if err != nil {
		return nil, err
	}
	return cache, nil
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

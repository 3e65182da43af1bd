package main

import (
	"errors"
	"io/fs"

	"github.com/urfave/cli/v2"

	"pkg/internal/units"
	"pkg/report"
	"pkg/session"
)

func cacheCommand() *cli.Command {
	return &cli.Command{
		Name:  "cache",
		Usage: "show or empty the cache of converted packages",
		Subcommands: []*cli.Command{noArgs(&cli.Command{
			Name:   "list",
			Usage:  "list the cached packages: entry, package, size, last use",
			Action: cacheListAction,
		}), noArgs(&cli.Command{
			Name:   "clean",
			Usage:  "remove every cached package",
			Action: func(c *cli.Context) error { return trimCache(c, false) },
		}), noArgs(&cli.Command{
			Name:  "prune",
			Usage: "remove the cached packages no installed package uses, within limits",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "older-than", Usage: "remove only those unused for longer than `DURATION` (30d, 12h; 0: all)"},
				&cli.StringFlag{Name: "max-size", Usage: "remove the least recently used until the cache takes at most `SIZE` of disk (10GiB, 500MB; 0: all)"},
			},
			Action: func(c *cli.Context) error { return trimCache(c, true) },
		})},
	}
}

func cacheListAction(c *cli.Context) error {
	l, err := sess(c).Upkeep().List(c.Context)
	if l == nil {
		return err
	}
	bad, err := report.WriteCache(c.App.Writer, l.Entries)
	switch {
	case err != nil:
		return err
	case len(bad) > 0:
		text, damaged := report.UnknownText(bad)
		switch l := cmdlineOf(c); {
		case damaged:
			text += l.carry(": damaged: an install of each fetches it again, and 'pkg cache clean' removes it now", false)
		case errors.Is(bad[0], fs.ErrPermission):
			text += l.carry(": the cache's files must be readable by whoever uses it; 'pkg cache clean' as their owner removes them", false)
		}
		return errors.New("cache list: " + text)
	case len(l.Entries) == 0:
		note(c, "nothing is cached in %s", c.String("cache"))
	default:
		note(c, "%s", report.CacheText(len(l.Entries), l.Disk))
	}
	return nil
}

// trimCache removes every entry (cache clean) or, pruning, those no root uses within the
// limits (session.Upkeep.Trim). A prune refuses a root named by --root or PKG_ROOT where
// nothing was ever installed, a mistyped one; the default root, if missing, uses nothing.
func trimCache(c *cli.Context, prune bool) error {
	var l session.Limits
	if prune {
		var err error
		if l, err = cacheLimits(c); err != nil {
			return err
		}
		if s := sess(c); !s.DefaultRoot {
			if err := s.RootExists(); err != nil {
				return err
			}
		}
	}
	t, err := sess(c).Upkeep().Trim(c.Context, prune, l)
	if t == nil {
		return err
	}
	if t.RunRoots > 0 {
		say(c, "removed %s no command runs from", units.Count(t.RunRoots, "run root"))
	}
	if err == nil || len(t.Removed) > 0 { // an error before any removal is all there is to say
		say(c, "%s", report.TrimmedText(t.Trimmed, prune, l, t.Unfinished))
	}
	if s := report.OverLimitText(t.Trimmed, l); err == nil && s != "" {
		note(c, "%s", s)
	}
	return err
}

// cacheLimits returns the limits of cache prune: each flag given, else the configuration's
// (session.Upkeep.Limits).
func cacheLimits(c *cli.Context) (session.Limits, error) {
	given := make(map[string]string)
	for _, name := range []string{"older-than", "max-size"} {
		if c.IsSet(name) {
			given[name] = c.String(name)
		}
	}
	l, err := sess(c).Upkeep().Limits(given)
	if le := (*session.LimitError)(nil); errors.As(err, &le) {
		return l, usagef("cache prune --%s: %v", le.Name, le.Err)
	}
	return l, err
}

// growing are the commands that may add entries to the cache, after which run prunes it
// when due (session.Upkeep.AutoPrune); not run, which becomes its command (execve) once its root
// is ready.
var growing = map[string]bool{"install": true, "upgrade": true, "sync": true, "fetch": true}

package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/internal/shell"
	"pkg/internal/termtext"
	"pkg/internal/units"
	"pkg/report"
	"pkg/session"
)

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "check installed files against what was installed: type, mode, size, content",
		ArgsUsage: "[NAME...]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "full", Usage: "read and hash every file, also those that still share their blocks with the cache"},
			&cli.BoolFlag{Name: "repair", Usage: "first record again the packages in pkgs/ from their trees and the cache, in a new database, where it is damaged (a sound one is kept)"},
			jsonFlag("verify"),
		},
		BashComplete: completeInstalled,
		Before:       rootExists,
		Action:       verifyAction,
	}
}

// verifyAction prints one line per problem on stdout and fails when there is any.
func verifyAction(c *cli.Context) error {
	names := unique(c.Args().Slice())
	if c.Bool("repair") {
		if err := repair(c); err != nil {
			return err
		}
	}
	all, problems, err := sess(c).Verify(c.Context, names, c.Bool("full"))
	var keys []string
	if err == nil {
		keys, err = session.Keys("verify", names, all)
	}
	if err != nil {
		return nameUsage(err)
	}
	v := report.VerifyOf(all, keys, problems)
	if err := show(c, v, v.WriteText); err != nil {
		return err
	}
	if len(problems) == 0 {
		if !c.Bool("json") { // the JSON says it
			say(c, "%s", v.Text())
		}
		return nil
	}
	reinstall, foreign, lacking, incomplete, damaged := report.Repair(problems)
	var advice []string
	if len(damaged) > 0 {
		a, fetched := damagedAdvice(c, damaged)
		advice = append(advice, a)
		reinstall = slices.DeleteFunc(reinstall, func(k string) bool { return slices.Contains(fetched, k) })
	}
	reinstall = slices.DeleteFunc(reinstall, func(k string) bool { return slices.Contains(incomplete, k) })
	uncached := sess(c).Uncached(c.Context, all, slices.DeleteFunc(slices.Clone(reinstall), func(k string) bool { return slices.Contains(damaged, k) }))
	if len(uncached) > 0 {
		a, fetched := uncachedAdvice(c, uncached)
		advice = append(advice, a)
		reinstall = slices.DeleteFunc(reinstall, func(k string) bool { return slices.Contains(fetched, k) })
	}
	if len(incomplete) > 0 {
		a := describeAdvice(c, incomplete)
		lacking = slices.DeleteFunc(lacking, func(k string) bool { return slices.Contains(incomplete, k) })
		if len(reinstall) > 0 {
			a += "; then " + repairAdvice(c, reinstall, foreign, lacking)
		}
		advice = append(advice, a)
	} else if len(reinstall) > 0 {
		advice = append(advice, repairAdvice(c, reinstall, foreign, lacking))
	}
	// The reinstall of a damaged or missing entry fetches: not --offline, which refuses it.
	return fmt.Errorf("verify: %s; %s", v.Text(), cmdlineOf(c).carry(strings.Join(advice, "; "), len(damaged) > 0 || len(uncached) > 0))
}

// uncachedAdvice says that the cache no longer holds the archives of the packages keys,
// whose reinstall fetches them (fetchAdvice).
func uncachedAdvice(c *cli.Context, keys []string) (advice string, fetched []string) {
	it, archive := "it", "the archive of "+keys[0]
	if len(keys) > 1 {
		it, archive = "them", "the archives of "+units.List(keys, 0)
	}
	return fetchAdvice(c, "the cache does not hold "+archive+" (never fetched into it, pruned, or found damaged and removed): a reinstall fetches "+it+" again", it, keys)
}

// damagedAdvice says that the packages keys were installed from damaged cache entries
// (install.ErrCacheDamaged), whose reinstall checks them whole and fetches them again
// (fetchAdvice).
func damagedAdvice(c *cli.Context, keys []string) (advice string, fetched []string) {
	them := strings.Join(keys, " ")
	if len(keys) == 1 {
		return fetchAdvice(c, "the cache's copy of "+them+" is damaged, not a file you changed: a reinstall checks it whole and fetches it again", "it", keys)
	}
	return fetchAdvice(c, "the cache's copies of "+them+" are damaged, not files you changed: a reinstall checks them whole and fetches them again", "them", keys)
}

// fetchAdvice ends advice, about the packages keys (it or them) whose reinstall fetches:
// where no repository is in effect, from which to fetch them, with the reinstall from one,
// returning keys, which the advice of a reinstall from the cache must leave out.
func fetchAdvice(c *cli.Context, advice, it string, keys []string) (string, []string) {
	if !noRepository(c) {
		return advice, nil
	}
	return advice + fmt.Sprintf(", from a repository that offers %s: 'pkg --repo URL install --reinstall %s'", it, strings.Join(keys, " ")), keys
}

// noRepository reports whether no repository is in effect, or none is known (the
// configuration unreadable).
func noRepository(c *cli.Context) bool {
	rs, err := sess(c).Repositories()
	return err != nil || len(rs) == 0
}

// describeAdvice says what records the packages keys, which a repair recorded without
// their entries (install.ErrIncomplete), with their dependencies, commands and libraries:
// a sync of a lockfile, or a reinstall from a repository, not from the cache alone.
func describeAdvice(c *cli.Context, keys []string) string {
	them, install, from := strings.Join(keys, " "), "pkg install", ""
	if noRepository(c) {
		install, from = "pkg --repo URL install", " from a repository that offers them"
	}
	return fmt.Sprintf("'pkg sync -f LOCKFILE' of the lockfile the root was synced from, if it was, records %s again with their dependencies, commands and libraries (offline too, from the cache), else '%s --reinstall %s'%s", them, install, them, from)
}

// repairAdvice says what puts back what verify found: after moving the files not pkg's
// out of the way (foreign), a reinstall of the packages whose files differ or that lack a
// dependency (report.Repair), which installs what those of lacking lack.
func repairAdvice(c *cli.Context, reinstall, foreign, lacking []string) string {
	first := ""
	if len(foreign) > 0 {
		first = "move " + units.List(foreign, 0) + " away (not pkg's to replace), then "
	}
	// Where no repository is in effect, or none is known (the configuration unreadable), the
	// archives are the cache's alone. One in effect that does not offer the package (a root
	// synced from another repository's lockfile) still gets the online advice: verify reads
	// no index, so it cannot tell, and that reinstall's refusal names what it lacks.
	cmd := "pkg install --reinstall"
	switch rs, err := sess(c).Repositories(); {
	case err != nil:
		cmd = "pkg --offline install --reinstall"
	case len(rs) == 0 && len(lacking) > 0:
		// The cache holds the installed packages' archives, not those of what they lack.
		rest := slices.DeleteFunc(slices.Clone(reinstall), func(k string) bool { return slices.Contains(lacking, k) })
		advice := first + reinstallAdvice("pkg --repo URL install --reinstall", lacking, lacking) + ", from a repository that offers them"
		if len(rest) > 0 {
			advice += "; with no repository in effect, " + reinstallAdvice("pkg --offline install --reinstall", rest, nil)
		}
		return advice
	case len(rs) == 0:
		first += "with no repository in effect, "
		cmd = "pkg --offline install --reinstall"
	}
	return first + reinstallAdvice(cmd, reinstall, lacking)
}

// reinstallAdvice says that cmd of the packages keys restores them, installing the
// dependencies those of lacking lack.
func reinstallAdvice(cmd string, keys, lacking []string) string {
	s := fmt.Sprintf("'%s %s' restores what was installed (keeping what you changed in .pkg/saved)", cmd, strings.Join(keys, " "))
	switch len(lacking) {
	case 0:
	case 1:
		s += ", installing the dependencies " + lacking[0] + " lacks"
	default:
		s += ", installing the dependencies " + strings.Join(lacking, ", ") + " lack"
	}
	return s
}

// repair rebuilds the root's database (session.Repair) and says what it did: on stdout,
// or with --json, whose document stdout holds alone, as a note; a repair refused, with
// --json, as verify's document of the refusal.
func repair(c *cli.Context) error {
	b, err := sess(c).Repair(c.Context)
	if b == nil {
		if c.Bool("json") {
			if werr := report.Write(c.App.Writer, report.VerifyRefused(err)); werr != nil {
				return werr
			}
		}
		return goneRepair(c, err)
	}
	tell := say
	if c.Bool("json") {
		tell = note
	}
	if b.Unrecorded {
		tell(c, "nothing to repair: no package was ever recorded in %s (its first change was cut short, and is undone)", b.Root)
		return err
	}
	if b.Sound {
		tell(c, "the database is not damaged: kept it, and recorded again from its file lists which of its %d packages own the prefix's paths", len(b.Recorded))
		return err
	}
	if b.Kept != "" {
		note(c, "the old database is kept as %s", termtext.Quote(b.Kept))
	}
	if len(b.Recorded) == 0 {
		tell(c, "recorded no package again: pkgs/ holds no tree")
	} else {
		tell(c, "recorded %s again from their trees: %s", units.Count(len(b.Recorded), "package"), strings.Join(b.Recorded, ", "))
	}
	var asked, args []string // the packages gone that the user asked for, and the requirements they did by
	for _, g := range b.Gone {
		depends := ""
		switch len(g.By) {
		case 0:
		case 1:
			depends = ", and " + g.By[0] + " depends on it"
		default:
			depends = ", and " + strings.Join(g.By, ", ") + " depend on it"
		}
		warn(c, "%s %s is not recorded again: its tree %s is gone%s", g.Package, g.Version, g.Tree, depends)
		if g.Requested != nil {
			asked, args = append(asked, g.Package+" "+g.Version), append(args, shell.Quote(g.Requested.String()))
		}
	}
	for _, s := range b.Saved {
		for _, l := range report.SalvageText(s, b.Root) {
			warn(c, "%s", l)
		}
	}
	if len(b.BareKeys) > 0 {
		advise(c, "%s", describeAdvice(c, b.BareKeys))
	}
	if len(asked) > 0 { // their requests went with their records: nothing else will say they were asked for
		them := "them"
		if len(asked) == 1 {
			them = "it"
		}
		advise(c, "you asked for %s: 'pkg install %s' installs %s again, as asked for", units.List(asked, 0), strings.Join(args, " "), them)
	}
	if !b.Salvaged {
		warn(c, "what you asked for and the repositories' pins could not be read from the old database: every package no other needs, each npm package lib/node_modules/NAME links to, and each of packages needing only each other where none is so linked counts as asked for, and a signed repository's key must be trusted again (pkg trust add)")
	}
	return err
}

// goneRepairError is a repair refused for packages whose trees are gone
// (*session.GoneError), Offline where the reinstall that puts them back takes their
// archives from the cache alone: no repository is in effect, or the configuration that
// says which cannot be read (as repairAdvice has it).
type goneRepairError struct {
	Offline bool
	error
}

func (e *goneRepairError) Unwrap() error { return e.error }

// goneRepair returns err, of a repair, as a *goneRepairError where it holds a
// *session.GoneError; any other err as it is.
func goneRepair(c *cli.Context, err error) error {
	if !errors.As(err, new(*session.GoneError)) {
		return err
	}
	rs, rerr := sess(c).Repositories()
	return &goneRepairError{Offline: rerr != nil || len(rs) == 0, error: err}
}

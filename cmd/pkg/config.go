package main

import (
	"errors"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/cmd/pkg/internal/cliusage"
	prog "pkg/cmd/pkg/internal/progress"
	"pkg/config"
	"pkg/internal/xdg"
	"pkg/notice"
	"pkg/report"
	"pkg/session"
	"pkg/trust"
	"pkg/txn"
)

// sess returns the command's session (session.New), made of the flags when first used;
// run closes it.
func sess(c *cli.Context) *session.Session {
	if s, ok := c.App.Metadata["session"].(*session.Session); ok {
		return s
	}
	o := session.Options{Root: c.String("root"), Cache: c.String("cache"), NoRepo: errNoRepo,
		RequireSigned: c.Bool("require-signed"), Offline: c.Bool("offline"), NoSync: c.Bool("no-sync"),
		DryRun: c.Bool("dry-run"), Jobs: c.Int("jobs"), LockTimeout: c.Duration("lock-timeout"),
		Owner: strings.Join(cliusage.WithoutCredentials(os.Args), " "), // others can read it
		Path:  os.Getenv("PATH"), Quiet: c.Bool("quiet"), Context: c.Context}
	o.DefaultRoot = !c.IsSet("root") || c.App.Metadata["default root"] == true // not named by --root or PKG_ROOT
	o.Repos, o.Invalid.Repos = flagRepos(c)
	o.DigestMirrors = c.StringSlice("digest-mirror")
	flag, err := trust.ParseKeySource("--trusted-key", c.StringSlice("trusted-key")...)
	if err != nil {
		o.Invalid.Keys = globalUsagef("%v", err)
	}
	env, err := trust.ParseKeySource("PKG_TRUSTED_KEYS", os.Getenv("PKG_TRUSTED_KEYS"))
	if o.Keys = []trust.KeySource{flag, env}; err != nil && o.Invalid.Keys == nil {
		o.Invalid.Keys = err
	}
	if o.Jobs < 1 {
		o.Invalid.Jobs = globalUsagef("--jobs must be at least 1")
	}
	obs := prog.NewObserver(c.App.Writer, c.App.ErrWriter, "pkg", c.String("root"),
		prog.Options{Quiet: c.Bool("quiet"), LockTimeout: c.Duration("lock-timeout")})
	s := session.New(o, progress{obs, c})
	c.App.Metadata["session"], c.App.Metadata["observer"] = s, obs
	return s
}

// observer returns the observer of the command's session (sess).
func observer(c *cli.Context) *prog.Display {
	sess(c)
	return c.App.Metadata["observer"].(*prog.Display)
}

// errNoRepo is the error of a command that needs a repository and has none.
var errNoRepo = globalUsagef("no repository: pass --repo, set PKG_REPO or configure one (docs/config.md)")

// flagRepos returns the repositories of --repo, or else of PKG_REPO (session.GivenRepos);
// an empty --repo drops the ones before it, and PKG_REPO.
func flagRepos(c *cli.Context) ([]config.Repo, error) {
	values, from := c.StringSlice("repo"), "--repo"
	if !c.IsSet("repo") && os.Getenv("PKG_REPO") != "" { // --repo= overrides it with none
		values, from = []string{os.Getenv("PKG_REPO")}, "PKG_REPO"
	}
	rs, err := session.GivenRepos(from, values...)
	if err != nil {
		return nil, globalUsagef("%v", err)
	}
	return rs, nil
}

// defaultDirs treats an empty --root or --cache (PKG_ROOT= in a script, say) as unset:
// otherwise pkg would make its root or cache in the current directory. Where there is no
// default (no home), it refuses a command that opens them.
func defaultDirs(c *cli.Context) error {
	for _, d := range []struct{ name, def, xdg, env string }{
		{"root", defaultRoot(), "XDG_DATA_HOME", "PKG_ROOT"}, {"cache", defaultCache(), "XDG_CACHE_HOME", "PKG_CACHE"},
	} {
		name := d.name
		if c.String(name) == "" && d.def == "" {
			if root, cache := opens(c.Args().Slice()); name == "root" && !root || name == "cache" && !cache {
				continue
			}
			return globalUsagef("no %s given and no default: HOME is not set, nor %s to an absolute path; set HOME, or pass --%s or set %s", name, d.xdg, name, d.env)
		}
		if c.String(name) == "" {
			if err := c.Set(name, d.def); err != nil {
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

// opens reports whether the command of args opens the root and the cache: help of any
// command (--help, -h) opens neither, nor do completion and the repository directory's
// commands; cache list and clean open the cache alone.
func opens(args []string) (root, cache bool) {
	if slices.ContainsFunc(args, func(a string) bool { return a == "--help" || a == "-h" }) {
		return false, false
	}
	if len(args) > 0 && (args[0] == "help" || args[0] == "h" || args[0] == "completion") {
		return false, false
	}
	switch strings.Join(args[:min(len(args), 2)], " ") {
	case "", "repo", "repo add", "repo remove", "repo push", "repo keygen", "repo sign", "trust":
		return false, false
	case "cache", "cache list", "cache clean":
		return false, true
	}
	return true, true
}

func defaultRoot() string  { return xdg.Dir("XDG_DATA_HOME", ".local/share") }
func defaultCache() string { return xdg.Dir("XDG_CACHE_HOME", ".cache") }

// progress is the session's observer: progress.Display, with the reports whose advice
// names pkg's commands and flags, and the notices as report words them.
type progress struct {
	*prog.Display
	c *cli.Context
}

var _ txn.Observer = progress{}

// Notice prints report's words for n as a warning, or as a note unless --quiet.
func (o progress) Notice(n notice.Notice) {
	if n.Warning() {
		o.Warn(report.NoticeText(n))
	} else {
		o.Note(report.NoticeText(n))
	}
}

// LinksWrong warns of links a root's start could not make, saying what makes them.
func (o progress) LinksWrong(err error) {
	l := cmdlineOf(o.c)
	if le := (*session.LinksError)(nil); errors.As(err, &le) && le.Prefix {
		warn(o.c, "%s; %s", err, l.carry(linksHint(le), false))
		return
	}
	warn(o.c, "%s; %s", err, l.carry("once it can be changed, 'pkg verify' names the links still wrong", false))
}

// RunWaiting says, as a note, that the process holder is making the root of the same run.
func (o progress) RunWaiting(holder string) {
	note(o.c, "waiting for %s to finish making the root of this run", holder)
}

func (o progress) NotKept(err error) { warn(o.c, "%s; --offline will not have it", err) }

// Unverified warns of an index used unverified, with a hint; of an unsigned local
// directory it is only a note. Under --quiet it says neither, nor counts it as said, so
// that the next command not quiet says it.
func (o progress) Unverified(err error, local bool) bool {
	if local {
		note(o.c, "%v; %s", err, hint(err, cmdlineOf(o.c)))
	} else {
		warn(o.c, "%v; %s", err, hint(err, cmdlineOf(o.c)))
	}
	return !o.c.Bool("quiet")
}

// Command pkg installs packages from a repository into a root, sharing file data with its
// cache by reflink where the filesystem allows.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/internal/units"
	"pkg/internal/xdg"
	"pkg/repo"
)

// usageError marks an error in how pkg was called; main exits 2 for it.
type usageError struct {
	msg    string
	global bool // about a global flag: 'pkg help' lists those, not the command's help
}

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{msg: fmt.Sprintf(format, args...)} }

// globalUsagef is usagef for a mistake in the global flags.
func globalUsagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), global: true}
}

func main() {
	// net/http logs what it cannot report to its caller (a server sending more than it
	// declared) through the log package: raw bytes, unprefixed, in the middle of pkg's output.
	log.SetOutput(io.Discard)
	if os.Getenv("GOGC") == "" {
		// The heap is mostly member lists that live for one command: collecting at half the
		// default growth keeps an 80,000-file install's peak RSS at 55 MiB rather than 70,
		// for a few more short collections.
		debug.SetGCPercent(50)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// Near the limit the collector runs as often as it must (at most half the CPU): for
		// an archive at tarutil's limits, fetch peaks at 169 MiB RSS, not 197, and install at
		// 611, not 651 (CASES=max bench/names.sh, with and without GOMEMLIMIT=off).
		debug.SetMemoryLimit(memoryLimit)
	}
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// memoryLimit is the soft limit of the Go heap (runtime/debug.SetMemoryLimit).
const memoryLimit = 160 << 20 // 160 MiB

// run is main without the exit, so tests can call it.
func run(args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	var dirs []string // the root and the cache, once known
	app.Before = func(c *cli.Context) error {
		err := defaultDirs(c)
		dirs = []string{c.String("root"), c.String("cache")}
		return err
	}
	used := "" // the command run, as "cache list", once known
	track(app.Commands, "", &used)
	unknown, help, guess := "", "pkg help", ""
	app.CommandNotFound = func(c *cli.Context, name string) {
		unknown, guess = name, commandGuess(name, c.App.Commands)
		if c.Command != nil && c.Command.Name != "" && c.Command.Name != c.App.Name { // a subcommand of c.Command's
			help = "pkg " + c.Command.Name + " help"
			guess = commandGuess(name, c.Command.Subcommands)
		}
	}
	ctx, stop := interruptible()
	defer stop()
	args = flagsFirst(app, args)
	err := checkArgs(app, args)
	if err == nil {
		err = app.RunContext(ctx, args)
	}
	closeCaches(app)
	var ue *usageError
	var fe *flagError
	switch {
	case unknown != "":
		fmt.Fprintf(stderr, "pkg: unknown command %q%s\npkg: hint: run '%s' for the list\n", unknown, guess, help)
		return 2
	case err == nil && ctx.Err() != nil: // the signal came once nothing could stop it
		fmt.Fprintln(stderr, "pkg: interrupted too late to stop: the command completed")
		return 0
	case err == nil:
		return 0
	case errors.Is(err, context.Canceled): // cut short by the signal
		fmt.Fprintln(stderr, "pkg: interrupted")
		return 130
	case errors.As(err, &fe):
		fmt.Fprintf(stderr, "pkg: %s\npkg: hint: %s\n", err, flagHint(fe))
		return 2
	case errors.As(err, &ue):
		usage := "pkg help"
		if used != "" && !ue.global {
			usage = "pkg " + used + " --help"
		}
		fmt.Fprintf(stderr, "pkg: %s\npkg: hint: run '%s' for usage\n", err, usage)
		return 2
	default:
		fmt.Fprintf(stderr, "pkg: %s\n", err)
		if h := hint(err, dirs); h != "" {
			fmt.Fprintf(stderr, "pkg: hint: %s\n", h)
		}
		return 1
	}
}

// interruptible returns a context that the first SIGINT or SIGTERM cancels: downloads stop
// and remove what they wrote, and a command not yet committing changes nothing. A second
// signal kills pkg at once, which the commit protocol makes as safe as a crash.
func interruptible() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:           "pkg",
		Usage:          "install packages copy-on-write",
		Version:        version(),
		Writer:         stdout,
		ErrWriter:      stderr,
		ExitErrHandler: func(*cli.Context, error) {}, // main owns exit codes, so deferred cleanup runs
		OnUsageError:   onUsageError,
		Metadata:       map[string]any{}, // what a command records for run: defaultDirs, openCache
		Flags:          globalFlags(),
		// A value is one value: "--depends 'lib>=1,<2'" is one constraint, not two flags.
		DisableSliceFlagSeparator: true,
		Commands: []*cli.Command{
			installCommand(), removeCommand(), listCommand(), filesCommand(), infoCommand(),
			searchCommand(), fetchCommand(), cacheCommand(), repoCommand(), verifyCommand(),
			lockCommand(), syncCommand(), upgradeCommand(), envCommand(), trustCommand(),
			outdatedCommand(), whyCommand(), autoremoveCommand(), completionCommand(),
		},
		EnableBashCompletion: true, // pkg completion's scripts ask for what comes next
	}
	return app
}

// commandGuess returns `; did you mean "install"?` for a mistyped command name among cmds,
// or `; did you mean "cache clean"?` for the name of a subcommand of one of them; else "".
func commandGuess(name string, cmds []*cli.Command) string {
	var names []string
	for _, c := range cmds {
		names = append(names, c.Name)
		for _, sub := range c.Subcommands {
			if sub.Name == name {
				return fmt.Sprintf("; did you mean %q?", c.Name+" "+sub.Name)
			}
		}
	}
	return repo.DidYouMean(name, names)
}

// onUsageError marks what urfave/cli's flag parsing refuses as a usage error, in its own
// words: checkArgs has refused, in pkg's, all but malformed flags such as "---x".
func onUsageError(_ *cli.Context, err error, _ bool) error {
	return &usageError{msg: err.Error()}
}

// track makes every command of cmds, under the name prefix, report flag errors as usage
// errors and set *used to its name once it runs or its flags fail.
func track(cmds []*cli.Command, prefix string, used *string) {
	for _, c := range cmds {
		name := strings.TrimSpace(prefix + " " + c.Name)
		c.OnUsageError = func(ctx *cli.Context, err error, sub bool) error {
			*used = name
			return onUsageError(ctx, err, sub)
		}
		before := c.Before
		c.Before = func(ctx *cli.Context) error {
			*used = name
			if before != nil {
				return before(ctx)
			}
			return nil
		}
		track(c.Subcommands, name, used)
	}
}

// version describes the build: the commit it was built from, when the go command recorded
// one, and the Go release.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", ""
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value[:min(len(s.Value), 12)]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "+changes"
		}
	}
	if rev == "" {
		rev = info.Main.Version
	}
	return rev + dirty + " (" + info.GoVersion + ")"
}

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
func openCache(c *cli.Context) (*fetch.Cache, error) {
	cache, err := fetch.OpenCache(c.String("cache"))
	if err == nil {
		caches, _ := c.App.Metadata["caches"].([]*fetch.Cache)
		c.App.Metadata["caches"] = append(caches, cache)
	}
	return cache, err
}

// openCacheFor opens the cache as openCache does, or, for a dry run, so that nothing in it
// changes: it keeps no index read, and a cache that does not exist yet is read as an empty
// one in a temporary directory, removed when pkg ends.
func openCacheFor(c *cli.Context, dry bool) (*fetch.Cache, error) {
	if !dry {
		return openCache(c)
	}
	dir := c.String("cache")
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		tmp, err := os.MkdirTemp("", "pkg-dry-run-")
		if err != nil {
			return nil, err
		}
		c.App.Metadata["temporary cache"] = tmp
		dir = tmp
	}
	cache, err := fetch.OpenCache(dir)
	if err == nil {
		cache.ReadOnly = true
		caches, _ := c.App.Metadata["caches"].([]*fetch.Cache)
		c.App.Metadata["caches"] = append(caches, cache)
	}
	return cache, err
}

// closeCaches closes the caches the command opened.
func closeCaches(app *cli.App) {
	caches, _ := app.Metadata["caches"].([]*fetch.Cache)
	for _, c := range caches {
		c.Close()
	}
	if tmp, ok := app.Metadata["temporary cache"].(string); ok {
		os.RemoveAll(tmp)
	}
}

// rootNamed reports whether the user named the root (--root or PKG_ROOT, not empty)
// rather than leaving it at the default.
func rootNamed(c *cli.Context) bool {
	return c.IsSet("root") && c.App.Metadata["default root"] != true
}

func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "root", EnvVars: []string{"PKG_ROOT"}, Value: defaultRoot(), Usage: "install root"},
		&cli.StringFlag{Name: "cache", EnvVars: []string{"PKG_CACHE"}, Value: defaultCache(), Usage: "cache directory"},
		&cli.StringFlag{Name: "repo", EnvVars: []string{"PKG_REPO"}, Usage: "repository: a directory, file:// or http(s):// URL"},
		&cli.BoolFlag{Name: "no-sync", Usage: "skip the sync before each commit (throwaway machines only)"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only errors"},
		&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: defaultJobs(), Usage: "packages to fetch at once"},
		&cli.BoolFlag{Name: "offline", EnvVars: []string{"PKG_OFFLINE"}, Usage: "use only the cache: no network, no repository"},
		&cli.DurationFlag{Name: "lock-timeout", Value: 5 * time.Minute, Usage: "how long to wait for another pkg process to finish with the root (0: for ever)"},
		&cli.StringSliceFlag{Name: "trusted-key", Usage: "trust a publisher's key, [REPO=]pkg-ed25519:..., and require every repository to verify with a trusted key (repeatable; also PKG_TRUSTED_KEYS, and 'pkg trust add' for the root)"},
		&cli.BoolFlag{Name: "require-signed", EnvVars: []string{"PKG_REQUIRE_SIGNED"}, Usage: "refuse a repository no trusted key verifies"},
	}
}

func defaultRoot() string  { return xdg.Dir("XDG_DATA_HOME", ".local/share") }
func defaultCache() string { return xdg.Dir("XDG_CACHE_HOME", ".cache") }

func openRoot(c *cli.Context) (*install.Root, error) {
	r, err := install.Open(c.Context, c.String("root"), rootOptions(c))
	if err == nil {
		heldRoot(c, r)
	}
	if err == nil && r.Links() != nil {
		warn(c, "%s; once it can be changed, 'pkg verify' names the links still wrong", r.Links())
	}
	if err == nil && r.Recovered() != "" {
		note(c, "an earlier pkg command was cut short: %s", r.Recovered())
	}
	if err == nil && r.Leftovers() != nil {
		warn(c, "could not delete what an earlier command left behind (the root is as recorded; delete it by hand): %s", r.Leftovers())
	}
	var st unix.Stat_t
	if err == nil && os.Geteuid() == 0 && unix.Stat(r.Dir(), &st) == nil && st.Uid != 0 {
		note(c, "running as root in %s, which belongs to uid %d: what pkg installs there belongs to root, and that user cannot remove it; run pkg as that user", r.Dir(), st.Uid)
	}
	return r, err
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
	busy := func(holder string) {
		if holder == "" {
			note(c, "a pkg command did not finish changing %s (it was cut short, or failed); the next one that locks it undoes that change, and this is what was installed before it", c.String("root"))
			return
		}
		note(c, "%s is changing %s; this is what was installed before it started", holder, c.String("root"))
	}
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
		Owner:       strings.Join(withoutCredentials(os.Args), " "), // others can read it
		Waiting: func(holder string) {
			fmt.Fprintf(c.App.ErrWriter, "pkg: waiting for %s to finish with %s\n", holder, c.String("root"))
		},
	}
}

// openSource opens --repo. retrying announces each new attempt after a failed request or
// download; nil prints a note.
func openSource(c *cli.Context, retrying func(err error, wait time.Duration, attempt, max int)) (*fetch.Source, error) {
	o, err := sourceOptions(c, retrying)
	if err != nil {
		return nil, err
	}
	return fetch.NewSource(c.String("repo"), o)
}

// sourceOptions are the options of a source of --repo under the flags' trust policy.
func sourceOptions(c *cli.Context, retrying func(err error, wait time.Duration, attempt, max int)) (fetch.Options, error) {
	if c.String("repo") == "" {
		return fetch.Options{}, globalUsagef("no repository: pass --repo or set PKG_REPO")
	}
	if c.Int("jobs") < 1 {
		return fetch.Options{}, globalUsagef("--jobs must be at least 1")
	}
	policy, err := trustPolicy(c)
	if err != nil {
		return fetch.Options{}, err
	}
	if retrying == nil {
		retrying = func(err error, wait time.Duration, attempt, max int) { noteRetry(c, nil, err, wait, attempt, max) }
	}
	return fetch.Options{Offline: c.Bool("offline"), Trust: policy, Retrying: retrying}, nil
}

// noteRetry says, unless --quiet, that a request or download is tried again and why: above
// the progress bars bs when they are drawn.
func noteRetry(c *cli.Context, bs *bars, err error, wait time.Duration, attempt, max int) {
	noteAbove(c, bs, "%s; trying again in %s (attempt %d of %d)", err, units.Duration(wait), attempt, max)
}

// noteAbove prints a note unless --quiet: above the bars bs, if not nil, else to stderr.
func noteAbove(c *cli.Context, bs *bars, format string, args ...any) {
	line := "pkg: note: " + fmt.Sprintf(format, args...)
	switch {
	case c.Bool("quiet"):
	case bs != nil:
		bs.print(line)
	default:
		fmt.Fprintln(c.App.ErrWriter, line)
	}
}

// defaultJobs is how many packages pkg fetches at once unless told: one download keeps
// most of two cores busy (decompressing, and hashing while aligning), so more only help
// while downloads wait for the network; past four they mostly share one server.
func defaultJobs() int { return min(4, 2*runtime.GOMAXPROCS(0)) }

// say prints a line to stdout unless --quiet.
func say(c *cli.Context, format string, args ...any) {
	if !c.Bool("quiet") {
		fmt.Fprintf(c.App.Writer, format+"\n", args...)
	}
}

// note prints an advisory line to stderr unless --quiet.
func note(c *cli.Context, format string, args ...any) {
	if !c.Bool("quiet") {
		fmt.Fprintf(c.App.ErrWriter, "pkg: note: "+format+"\n", args...)
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Command pkg installs packages from a repository into a root, sharing file data with its
// cache by reflink where the filesystem allows.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"pkg/fetch"
	"pkg/install"
	"pkg/internal/buildinfo"
	"pkg/internal/cliusage"
	prog "pkg/internal/progress"
)

func main() {
	if install.RunTrashChild() { // started by a command of this binary to delete removed trees
		return
	}
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
		// an archive at tarutil's limits, fetch peaks at 169 MiB RSS, not 197 (CASES=max
		// bench/names.sh, with and without GOMEMLIMIT=off); install at 235 MiB.
		debug.SetMemoryLimit(memoryLimit)
	}
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// memoryLimit is the soft limit of the Go heap (runtime/debug.SetMemoryLimit).
const memoryLimit = 160 << 20 // 160 MiB

// run is main without the exit, so tests can call it.
func run(args []string, stdout, stderr io.Writer) int {
	// The app's context, once known, for autoPrune.
	var global *cli.Context
	app := newApp(stdout, stderr)
	var dirs []string // the root and the cache, once known
	app.Before = func(c *cli.Context) error {
		global = c
		err := defaultDirs(c)
		dirs = []string{c.String("root"), c.String("cache")}
		return err
	}
	used := "" // the command run, as "cache list", once known
	cliusage.Track(app.Commands, &used)
	unknown, help, guess := "", "pkg help", ""
	app.CommandNotFound = func(c *cli.Context, name string) {
		unknown, guess = name, cliusage.Guess(name, c.App.Commands)
		if c.Command != nil && c.Command.Name != "" && c.Command.Name != c.App.Name { // a subcommand of c.Command's
			help = "pkg " + c.Command.Name + " help"
			guess = cliusage.Guess(name, c.Command.Subcommands)
		}
	}
	ctx, stop := interruptible()
	defer stop()
	args = cliusage.FlagsFirst(app, args)
	err := cliusage.Check(app, args, map[string]string{"expires": "a duration in hours, minutes or seconds, such as 720h for 30 days"})
	if err == nil {
		err = app.RunContext(ctx, args)
	}
	if err == nil && ctx.Err() == nil && global != nil {
		autoPrune(global, used)
	}
	closeCaches(app)
	var ue *cliusage.UsageError
	var fe *cliusage.FlagError
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
		if used != "" && !ue.Global {
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
		Version:        buildinfo.Version(),
		Writer:         stdout,
		ErrWriter:      stderr,
		ExitErrHandler: func(*cli.Context, error) {}, // main owns exit codes, so deferred cleanup runs
		OnUsageError:   cliusage.OnUsageError,
		Metadata:       map[string]any{}, // what a command records for run: defaultDirs, openCache
		Flags:          globalFlags(),
		// A value is one value: "--depends 'lib>=1,<2'" is one constraint, not two flags.
		DisableSliceFlagSeparator: true,
		Commands: []*cli.Command{
			installCommand(), removeCommand(), listCommand(), filesCommand(), infoCommand(),
			searchCommand(), fetchCommand(), cacheCommand(), repoCommand(), verifyCommand(),
			lockCommand(), syncCommand(), upgradeCommand(), envCommand(), trustCommand(),
			outdatedCommand(), whyCommand(), autoremoveCommand(), completionCommand(), runCommand(),
		},
		EnableBashCompletion: true, // pkg completion's scripts ask for what comes next
	}
	return app
}

func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "root", EnvVars: []string{"PKG_ROOT"}, Value: defaultRoot(), Usage: "install root"},
		&cli.StringFlag{Name: "cache", EnvVars: []string{"PKG_CACHE"}, Value: defaultCache(), Usage: "cache directory"},
		&cli.StringSliceFlag{Name: "repo", Usage: "repository, [NAME=]LOCATION: a directory, file:// or http(s):// URL (repeatable, highest priority first, before the configured ones; also PKG_REPO, one)"},
		&cli.BoolFlag{Name: "no-sync", Usage: "skip the sync before each commit (throwaway machines only)"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only errors"},
		&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: defaultJobs(), Usage: "packages to fetch at once"},
		&cli.BoolFlag{Name: "offline", EnvVars: []string{"PKG_OFFLINE"}, Usage: "use only the cache: no network, no repository"},
		&cli.DurationFlag{Name: "lock-timeout", Value: 5 * time.Minute, Usage: "how long to wait for another pkg process to finish with the root (0: for ever)"},
		&cli.StringSliceFlag{Name: "trusted-key", Usage: "trust a publisher's key, [REPO=]pkg-ed25519:..., and require every repository to verify with a trusted key (repeatable; also PKG_TRUSTED_KEYS, and 'pkg trust add' for the root)"},
		&cli.BoolFlag{Name: "require-signed", EnvVars: []string{"PKG_REQUIRE_SIGNED"}, Usage: "refuse a repository no trusted key verifies"},
	}
}

// openSource opens the first repository in effect (repositories). retrying announces
// each new attempt after a failed request or download; nil prints a note.
func openSource(c *cli.Context, retrying func(err error, wait time.Duration, attempt, max int)) (*fetch.Source, error) {
	rs, err := repositories(c)
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, errNoRepo
	}
	src, _, err := repoSource(c, rs[0], retrying)
	return src, err
}

// errNoRepo is the error of a command that needs a repository and has none.
var errNoRepo = globalUsagef("no repository: pass --repo, set PKG_REPO or configure one (docs/config.md)")

// sourceOptions are the options of a source under the flags' trust policy.
func sourceOptions(c *cli.Context, retrying func(err error, wait time.Duration, attempt, max int)) (fetch.Options, error) {
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
	return fetch.Options{Offline: c.Bool("offline"), Trust: policy, Retrying: retrying, Failover: func(to string, why error) { noteFailover(c, to, why) }}, nil
}

// noteFailover says, unless --quiet, that the mirror to served a request the mirrors
// before it failed, and why they did.
func noteFailover(c *cli.Context, to string, why error) {
	(&progress{c: c}).rep().Note("%v; using %s", why, to)
}

// noteRetry says, unless --quiet, that a request or download is tried again and why: above
// the progress bars of r when it is not nil.
func noteRetry(c *cli.Context, r *prog.Reporter, err error, wait time.Duration, attempt, max int) {
	if r == nil {
		r = (&progress{c: c}).rep()
	}
	r.Retrying(err, wait, attempt, max)
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

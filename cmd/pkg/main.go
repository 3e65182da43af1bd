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
	"runtime/debug"
	"time"

	"github.com/urfave/cli/v2"

	"pkg/cmd/pkg/internal/cliusage"
	"pkg/cmd/pkg/internal/early"
	"pkg/internal/buildinfo"
	"pkg/internal/process"
	"pkg/internal/termtext"
	"pkg/session"
)

func main() {
	// net/http logs what it cannot report to its caller (a server sending more than it
	// declared) through the log package: raw bytes, unprefixed, in the middle of pkg's output.
	log.SetOutput(io.Discard)
	process.TuneHeap()
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// run is main without the exit, so tests can call it. Everything it prints goes through
// termtext.Safe: names, versions, summaries, URLs, paths and causes come from
// repositories, lockfiles and other users, and their escapes must not reach a terminal.
func run(args []string, stdout, stderr io.Writer) int {
	stdout, stderr = termtext.NewWriter(stdout), termtext.NewWriter(stderr)
	if early.IsVersion(args) { // the binary answers it from early's initializer where it can
		io.WriteString(stdout, early.Line(version()))
		return 0
	}
	app := newApp(stdout, stderr)
	var line *cmdline // what advice carries of the command line, once parsed
	app.Before = func(c *cli.Context) error {
		line = givenGlobals(c)
		c.App.Metadata["cmdline"] = line
		err := defaultDirs(c)
		line.dirs = []string{c.String("root"), c.String("cache")}
		return err
	}
	recordCommands(app.Commands)
	ctx, stop := process.Interruptible(early.Caught())
	defer stop()
	used, err := cliusage.Run(ctx, app, args, cliusage.Options{
		Wants:        map[string]string{"expires": "a duration in hours, minutes or seconds, such as 720h for 30 days"},
		CommandLines: []string{"run"}, // pkg run NAME ARGS...: ARGS are the command's
	})
	if s, ok := app.Metadata["session"].(*session.Session); ok {
		err = notCachedNoRepo(s, err)
		if err == nil && ctx.Err() == nil && growing[used] {
			s.Upkeep().AutoPrune()
		}
		s.Close()
	}
	if h, ok := cliusage.Hint(app, used, err); ok {
		return fail(stderr, 2, err, h)
	}
	switch {
	case err == nil && ctx.Err() != nil: // the signal came once nothing could stop it
		fmt.Fprintln(stderr, "pkg: interrupted too late to stop: the command completed")
		return 0
	case err == nil:
		return 0
	case errors.Is(err, context.Canceled): // cut short by the signal
		fmt.Fprintln(stderr, "pkg: interrupted")
		return 130
	}
	return fail(stderr, 1, err, hint(err, line))
}

// version is pkg's version from runtime/debug's copy of the build record, in memory: every
// command's app carries it. Only early's gate, which must not wait for runtime/debug's
// imports, reads the binary (buildinfo.Version).
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		return buildinfo.FromText(info.GoVersion, info.String())
	}
	return "unknown"
}

// fail prints err and its hint, if not "", and returns the exit code.
func fail(w io.Writer, code int, err error, hint string) int {
	fmt.Fprintf(w, "pkg: %s\n", err)
	if hint != "" {
		fmt.Fprintf(w, "pkg: hint: %s\n", hint)
	}
	return code
}

func newApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:           "pkg",
		Usage:          "install packages copy-on-write",
		Version:        version(),
		Writer:         stdout,
		ErrWriter:      stderr,
		ExitErrHandler: func(*cli.Context, error) {}, // main owns exit codes, so deferred cleanup runs
		OnUsageError:   cliusage.OnUsageError,
		Metadata:       map[string]any{}, // what a command records for run: defaultDirs, sess
		Flags:          globalFlags(),
		// A value is one value: "--depends 'lib>=1,<2'" is one constraint, not two flags.
		DisableSliceFlagSeparator: true,
		Commands: []*cli.Command{
			installCommand(), removeCommand(), listCommand(), filesCommand(), infoCommand(),
			searchCommand(), fetchCommand(), cacheCommand(), repoCommand(), verifyCommand(),
			lockCommand(), syncCommand(), upgradeCommand(), envCommand(), trustCommand(),
			outdatedCommand(), whyCommand(), autoremoveCommand(), completionCommand(), runCommand(),
			mirrorCommand(),
		},
		EnableBashCompletion: true, // pkg completion's scripts ask for what comes next
	}
}

func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "root", EnvVars: []string{"PKG_ROOT"}, Value: defaultRoot(), Usage: "install root", TakesFile: true},
		&cli.StringFlag{Name: "cache", EnvVars: []string{"PKG_CACHE"}, Value: defaultCache(), Usage: "cache directory", TakesFile: true},
		&cli.StringSliceFlag{Name: "repo", Usage: "repository, [NAME=]LOCATION: a directory, file:// or http(s):// URL, or oci://HOST/NAME[:TAG] of a registry (repeatable, highest priority first, before the configured ones; also PKG_REPO, one)"},
		&cli.StringSliceFlag{Name: "digest-mirror", Usage: "ask this location first for every archive, by sha256 (LOCATION/sha256/<hex>), before the URL its index names (repeatable, in order; before the configured digest-mirrors)"},
		&cli.BoolFlag{Name: "no-sync", Usage: "skip the sync before each commit (throwaway machines only)"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only errors and the results asked for: no progress, notes or warnings"},
		&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: session.DefaultJobs(), Usage: "packages to fetch at once"},
		&cli.BoolFlag{Name: "offline", EnvVars: []string{"PKG_OFFLINE"}, Usage: "use only the cache: no network, no repository"},
		&cli.DurationFlag{Name: "lock-timeout", Value: 5 * time.Minute, Usage: "how long to wait for another pkg process to finish with the root (0: for ever)"},
		&cli.StringSliceFlag{Name: "trusted-key", Usage: "trust a publisher's key, [REPO=]pkg-ed25519:..., and require every repository to verify with a trusted key (repeatable; also PKG_TRUSTED_KEYS, and 'pkg trust add' for the root)"},
		&cli.BoolFlag{Name: "require-signed", EnvVars: []string{"PKG_REQUIRE_SIGNED"}, Usage: "refuse a repository no trusted key verifies"},
	}
}

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

// warn prints a warning to stderr unless --quiet, which prints only errors.
func warn(c *cli.Context, format string, args ...any) {
	if !c.Bool("quiet") {
		fmt.Fprintf(c.App.ErrWriter, "pkg: warning: "+format+"\n", args...)
	}
}

// advise prints what to do about a warning to stderr, as the hint of an error is printed,
// unless --quiet, which leaves out the warning.
func advise(c *cli.Context, format string, args ...any) {
	if !c.Bool("quiet") {
		fmt.Fprintf(c.App.ErrWriter, "pkg: hint: %s\n", cmdlineOf(c).carry(fmt.Sprintf(format, args...), false))
	}
}

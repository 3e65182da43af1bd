// Package cliusage checks how a urfave/cli v2 command line is written: it moves flags
// ahead of arguments and global flags ahead of the command (FlagsFirst), checks every flag
// and the environment variables flags read (Check), counts a command's arguments and
// guesses mistyped commands, all with typed errors (*UsageError, *FlagError) in place of
// the flag package's bare strings. It knows no command of its own.
package cliusage

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/internal/termtext"
	"pkg/repo"
)

// A UsageError is a mistake in how a command was called.
type UsageError struct {
	Msg    string
	Global bool // about a global flag: the app's help lists those, not the command's
}

func (e *UsageError) Error() string { return e.Msg }

// Errorf returns a *UsageError.
func Errorf(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// OnUsageError, as a cli.OnUsageErrorFunc, makes what urfave/cli's flag parsing refuses a
// *UsageError, in its own words: Check has refused, in its own, all but malformed flags
// such as "---x".
func OnUsageError(_ *cli.Context, err error, _ bool) error {
	return &UsageError{Msg: err.Error()}
}

// Track makes every command of cmds report flag errors as usage errors and set *used to
// its name, as "cache list", once it runs or its flags fail.
func Track(cmds []*cli.Command, used *string) { track(cmds, "", used) }

func track(cmds []*cli.Command, prefix string, used *string) {
	for _, c := range cmds {
		name := strings.TrimSpace(prefix + " " + c.Name)
		c.OnUsageError = func(ctx *cli.Context, err error, sub bool) error {
			*used = name
			return OnUsageError(ctx, err, sub)
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

// Guess returns `; did you mean "install"?` for a mistyped command name among cmds, or
// `; did you mean "cache clean"?` for the name of a subcommand of one of them; else "".
func Guess(name string, cmds []*cli.Command) string {
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

// NeedArgs returns a usage error unless the command got at least min arguments.
func NeedArgs(c *cli.Context, min int, what string) error {
	if c.NArg() < min {
		return Errorf("%s: missing %s", c.Command.Name, what)
	}
	return nil
}

// MaxArgs returns a usage error naming the arguments past the first max.
func MaxArgs(c *cli.Context, max int) error {
	if c.NArg() <= max {
		return nil
	}
	var extra []string
	for _, a := range c.Args().Slice()[max:] {
		extra = append(extra, strconv.Quote(a))
	}
	noun, want := "argument", "no arguments"
	if len(extra) > 1 {
		noun += "s"
	}
	if c.Command.ArgsUsage != "" {
		want = c.Command.ArgsUsage
	}
	name := commandName(c)
	return Errorf("%s: unexpected %s %s (%s takes %s)", name, noun, strings.Join(extra, " "), name, want)
}

// commandName is the command as typed after the app's name: "files", "cache list".
func commandName(c *cli.Context) string {
	var names []string
	for _, x := range c.Lineage() {
		if x.Command != nil && x.Command.Name != "" && x.Command.Name != x.App.Name {
			names = append(names, x.Command.Name)
		}
	}
	slices.Reverse(names)
	return strings.Join(names, " ")
}

// WithoutCredentials returns args with the user information removed from any URL in them,
// as in https://user:token@host/, --repo=NAME=URL or NAME=URL, for others to read.
func WithoutCredentials(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = termtext.WithoutCredentials(a)
	}
	return out
}

package cliusage

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"pkg/repo"
)

// A FlagError is a flag Check refuses before urfave/cli parses the arguments. Check reads
// the flags itself because the errors of the flag package urfave/cli parses with are bare
// strings (flag.FlagSet.failf returns errors.New(msg), src/flag/flag.go), and so are
// urfave/cli's for an environment variable it cannot parse (fmt.Errorf with %s in
// BoolFlag.Apply, flag_bool.go:118 of urfave/cli v2.27.7): neither can be told apart
// without reading its text.
type FlagError struct {
	Flag    string // as typed, without "=value": "--jobs", "-j"
	Command string // "cache list"; "" for a global flag
	Problem string // "unknown flag", "needs a value", "invalid value"
	Value   string // the invalid value
	Want    string // what the flag takes: "a whole number"
	Near    []string
	Env     string // the environment variable the value came from
}

func (e *FlagError) Error() string {
	switch {
	case e.Env != "":
		return fmt.Sprintf("environment variable %s=%q is not %s", e.Env, e.Value, e.Want)
	case e.Problem == "unknown flag" && len(e.Near) > 0:
		return fmt.Sprintf("unknown flag %s; did you mean --%s?", e.Flag, strings.Join(e.Near, " or --"))
	case e.Problem == "unknown flag":
		return "unknown flag " + e.Flag
	case e.Problem == "needs a value":
		return "flag " + e.Flag + " needs a value"
	case e.Want != "":
		return fmt.Sprintf("invalid value %q for %s: %s", e.Value, e.Flag, e.Want)
	}
	return fmt.Sprintf("invalid value %q for %s", e.Value, e.Flag)
}

// Check checks the flags in args, as FlagsFirst ordered them, and the environment
// variables of the flags of the command they run. wants says, by flag name, what a flag
// whose value is refused takes, where its type alone says too little.
func Check(app *cli.App, args []string, wants map[string]string) error {
	if completing(app, args) {
		return nil // an unfinished command line, being completed (checkShellCompleteFlag in urfave/cli's help.go)
	}
	flags, cmds, command := app.Flags, app.Commands, ""
	if err := checkEnv(flags, wants); err != nil {
		return err
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return nil
		case a == "-" || !strings.HasPrefix(a, "-"):
			next := findCommand(cmds, a)
			if next == nil {
				return nil // an argument: urfave/cli parses no flags after it
			}
			flags, cmds, command = next.Flags, next.Subcommands, strings.TrimSpace(command+" "+next.Name)
			if err := checkEnv(flags, wants); err != nil {
				return err
			}
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		typed, _, _ := strings.Cut(a, "=")
		if slices.Contains([]string{"h", "help", "v", "version"}, name) {
			continue
		}
		f := lookupFlag(flags, name)
		if f == nil {
			return &FlagError{Flag: typed, Command: command, Problem: "unknown flag", Near: similarFlags(app, flags, name)}
		}
		_, isBool := f.(*cli.BoolFlag)
		switch {
		case isBool && !hasValue:
			continue
		case !hasValue && i+1 >= len(args):
			return &FlagError{Flag: typed, Command: command, Problem: "needs a value"}
		case !hasValue:
			i++
			value = args[i]
		}
		if want := badValue(f, value, wants); want != "" {
			return &FlagError{Flag: typed, Command: command, Problem: "invalid value", Value: value, Want: want}
		}
	}
	return nil
}

// checkEnv checks the values of the environment variables flags read.
func checkEnv(flags []cli.Flag, wants map[string]string) error {
	for _, f := range flags {
		ev, ok := f.(interface{ GetEnvVars() []string })
		if !ok {
			continue
		}
		for _, env := range ev.GetEnvVars() {
			if v := os.Getenv(env); v != "" {
				if want := badValue(f, v, wants); want != "" {
					return &FlagError{Flag: "--" + f.Names()[0], Problem: "invalid value", Value: v, Want: want, Env: env}
				}
			}
		}
	}
	return nil
}

// badValue says what f takes if value is not that, or "" if value is valid, parsing it
// as the flag package does.
func badValue(f cli.Flag, value string, wants map[string]string) string {
	switch f := f.(type) {
	case *cli.BoolFlag:
		if _, err := strconv.ParseBool(value); err != nil {
			return "a boolean"
		}
	case *cli.IntFlag:
		if _, err := strconv.ParseInt(value, 0, strconv.IntSize); err != nil {
			return "a whole number"
		}
	case *cli.DurationFlag:
		if _, err := time.ParseDuration(value); err != nil {
			if w := wants[f.Name]; w != "" {
				return w
			}
			return "a duration with its unit, such as 30s or 5m"
		}
	}
	return ""
}

func lookupFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

// similarFlags returns the long flags near name among the command's flags and the app's.
func similarFlags(app *cli.App, flags []cli.Flag, name string) []string {
	var names []string
	for _, f := range append(slices.Clip(app.Flags), flags...) {
		if !slices.Contains(names, f.Names()[0]) {
			names = append(names, f.Names()[0])
		}
	}
	return repo.Similar(name, names)
}

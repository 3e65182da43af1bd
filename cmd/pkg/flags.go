package main

import (
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"pkg/repo"
)

// A flagError is a flag pkg refuses before urfave/cli parses the arguments. pkg checks the
// flags itself because the errors of the flag package urfave/cli parses with are bare
// strings (flag.FlagSet.failf returns errors.New(msg), src/flag/flag.go), and so are
// urfave/cli's for an environment variable it cannot parse (fmt.Errorf with %s in
// BoolFlag.Apply, flag_bool.go:118 of urfave/cli v2.27.7): neither can be told apart
// without reading its text.
type flagError struct {
	flag    string // as typed, without "=value": "--jobs", "-j"
	command string // "cache list"; "" for a global flag
	problem string // "unknown flag", "needs a value", "invalid value"
	value   string // the invalid value
	want    string // what the flag takes: "a whole number"
	near    []string
	env     string // the environment variable the value came from
}

func (e *flagError) Error() string {
	switch {
	case e.env != "":
		return fmt.Sprintf("environment variable %s=%q is not %s", e.env, e.value, e.want)
	case e.problem == "unknown flag" && len(e.near) > 0:
		return fmt.Sprintf("unknown flag %s; did you mean --%s?", e.flag, strings.Join(e.near, " or --"))
	case e.problem == "unknown flag":
		return "unknown flag " + e.flag
	case e.problem == "needs a value":
		return "flag " + e.flag + " needs a value"
	case e.want != "":
		return fmt.Sprintf("invalid value %q for %s: %s", e.value, e.flag, e.want)
	}
	return fmt.Sprintf("invalid value %q for %s", e.value, e.flag)
}

// checkArgs checks the flags in args, as flagsFirst ordered them, and the environment
// variables of the flags of the command they run.
func checkArgs(app *cli.App, args []string) error {
	if app.EnableBashCompletion && len(args) > 1 && args[len(args)-1] == "--generate-bash-completion" {
		return nil // an unfinished command line, being completed (checkShellCompleteFlag in urfave/cli's help.go)
	}
	flags, cmds, command := app.Flags, app.Commands, ""
	if err := checkEnv(flags); err != nil {
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
			if err := checkEnv(flags); err != nil {
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
			return &flagError{flag: typed, command: command, problem: "unknown flag", near: similarFlags(app, flags, name)}
		}
		_, isBool := f.(*cli.BoolFlag)
		switch {
		case isBool && !hasValue:
			continue
		case !hasValue && i+1 >= len(args):
			return &flagError{flag: typed, command: command, problem: "needs a value"}
		case !hasValue:
			i++
			value = args[i]
		}
		if want := badValue(f, value); want != "" {
			return &flagError{flag: typed, command: command, problem: "invalid value", value: value, want: want}
		}
	}
	return nil
}

// checkEnv checks the values of the environment variables flags read.
func checkEnv(flags []cli.Flag) error {
	for _, f := range flags {
		ev, ok := f.(interface{ GetEnvVars() []string })
		if !ok {
			continue
		}
		for _, env := range ev.GetEnvVars() {
			if v := os.Getenv(env); v != "" {
				if want := badValue(f, v); want != "" {
					return &flagError{flag: "--" + f.Names()[0], problem: "invalid value", value: v, want: want, env: env}
				}
			}
		}
	}
	return nil
}

// badValue says what f takes if value is not that, or "" if value is valid, parsing it
// as the flag package does.
func badValue(f cli.Flag, value string) string {
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
			if f.Name == "expires" {
				return "a duration in hours, minutes or seconds, such as 720h for 30 days"
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

// similarFlags returns the long flags near name among the command's flags and pkg's.
func similarFlags(app *cli.App, flags []cli.Flag, name string) []string {
	var names []string
	for _, f := range append(slices.Clip(app.Flags), flags...) {
		if !slices.Contains(names, f.Names()[0]) {
			names = append(names, f.Names()[0])
		}
	}
	return repo.Similar(name, names)
}

// withoutCredentials returns args with the user information removed from any URL in them,
// as in https://user:token@host/.
func withoutCredentials(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		flag, v, isFlag := strings.Cut(a, "=")
		if !isFlag || !strings.HasPrefix(flag, "-") {
			v = a
		}
		if u, err := url.Parse(v); err == nil && u.User != nil {
			u.User = nil
			out[i] = strings.TrimSuffix(a, v) + u.String()
		}
	}
	return out
}

package cliusage

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/internal/units"
)

// Args is a command's Before that refuses fewer than min arguments, naming what is
// missing (NeedArgs), and more than max (MaxArgs); max < 0 takes any number.
func Args(min, max int, what string) cli.BeforeFunc {
	return func(c *cli.Context) error {
		if err := NeedArgs(c, min, what); err != nil || max < 0 {
			return err
		}
		return MaxArgs(c, max)
	}
}

// Want is a command's Before that refuses any number of arguments but n, saying what it
// wants: "repo remove: want REPO_DIR NAME[=VERSION], got 1 argument".
func Want(n int, what string) cli.BeforeFunc {
	return func(c *cli.Context) error {
		if c.NArg() != n {
			return Errorf("%s: want %s, got %s", commandName(c), what, units.Count(c.NArg(), "argument"))
		}
		return nil
	}
}

// All is a command's Before that runs checks in order, returning the first error.
func All(checks ...cli.BeforeFunc) cli.BeforeFunc {
	return func(c *cli.Context) error {
		for _, check := range checks {
			if err := check(c); err != nil {
				return err
			}
		}
		return nil
	}
}

// CompleteFlags is a command's BashComplete that offers its flags after a "-", else
// nothing, so that the shell completes file names.
var CompleteFlags = Complete(func(*cli.Context) []string { return nil })

// Complete is a command's BashComplete that offers its flags after a "-", nothing for a
// flag's value, so that the shell completes file names, else the words names returns. The
// word completed is read from os.Args, as urfave/cli's own completion reads it
// (cli.DefaultCompleteWithFlags): a flag cut short fails to parse. A whole flag there is
// the word before the one completed ("remove -n <TAB>", "sync -f <TAB>"), as the scripts
// pass the word completed only when it starts with "-".
func Complete(names func(c *cli.Context) []string) cli.BashCompleteFunc {
	return func(c *cli.Context) {
		var last string
		if n := len(os.Args); n > 2 {
			last = os.Args[n-2]
		}
		f := spelled(c.Command, last)
		_, isBool := f.(*cli.BoolFlag)
		switch {
		case f == nil && strings.HasPrefix(last, "-"):
			cli.DefaultCompleteWithFlags(c.Command)(c)
			return
		case f != nil && !isBool:
			return
		}
		w := bufio.NewWriter(c.App.Writer) // an index may offer 10^5 names: one write, not one each
		for _, name := range names(c) {
			fmt.Fprintln(w, name)
		}
		w.Flush()
	}
}

// spelled returns the flag of cmd that arg spells whole, as urfave/cli's completion
// spells it: "-n", "--dry-run"; nil for none.
func spelled(cmd *cli.Command, arg string) cli.Flag {
	for _, f := range cmd.Flags {
		for _, name := range f.Names() {
			if arg == strings.Repeat("-", min(len(name), 2))+name {
				return f
			}
		}
	}
	return nil
}

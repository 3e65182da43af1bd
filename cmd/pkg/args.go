package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/repo"
)

// needArgs returns a usage error unless the command got at least min arguments.
func needArgs(c *cli.Context, min int, what string) error {
	if c.NArg() < min {
		return usagef("%s: missing %s", c.Command.Name, what)
	}
	return nil
}

// oneArg returns the command's one argument, what, or a usage error for none or more.
func oneArg(c *cli.Context, what string) (string, error) {
	if err := needArgs(c, 1, what); err != nil {
		return "", err
	}
	return c.Args().First(), maxArgs(c, 1)
}

// maxArgs returns a usage error naming the arguments past the first max.
func maxArgs(c *cli.Context, max int) error {
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
	return usagef("%s: unexpected %s %s (%s takes %s)", name, noun, strings.Join(extra, " "), name, want)
}

// commandName is the command as typed after "pkg": "files", "cache list".
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

// unique returns names without repeats, each where it first appears.
func unique(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// installedNames refuses, as a usage error of the command op, an argument that cannot
// name an installed package: a name with a version or constraint, or no name at all.
func installedNames(op string, names []string) error {
	for _, n := range names {
		if r, err := repo.ParseRequirement(n); err == nil && len(r.Constraints) > 0 {
			tip := ""
			if op == "upgrade" {
				tip = fmt.Sprintf(" ('pkg install %s' installs the version it names)", n)
			}
			return usagef("%s takes names of installed packages, not %s%s", op, n, tip)
		}
		if !repo.ValidName(n) && !repo.ValidName(strings.ToLower(n)) { // "Hello" gets a did-you-mean
			return usagef("%s: %q is not a package name", op, n)
		}
	}
	return nil
}

// needInstalled returns the error of the command op for the first of names that
// installed lacks, or nil; a usage error for what installedNames refuses.
func needInstalled(op string, names []string, installed []db.Package) error {
	if err := installedNames(op, names); err != nil {
		return err
	}
	for _, n := range names {
		if !slices.ContainsFunc(installed, func(p db.Package) bool { return p.Name == n }) {
			return notInstalled(op, n, installed)
		}
	}
	return nil
}

// notInstalled is the error of the command op for name, which installed lacks.
func notInstalled(op, name string, installed []db.Package) error {
	tip := didYouMean(name, installed)
	if tip == "" && (op == "info" || op == "files") { // a question about a package: the repository may have it
		tip = fmt.Sprintf(" (try 'pkg search %s')", name)
	}
	return fmt.Errorf("%s %s: not installed%s", op, name, tip)
}

// didYouMean offers the installed packages whose names are close to name, a name not
// installed, as repo.DidYouMean does.
func didYouMean(name string, installed []db.Package) string {
	names := make([]string, len(installed))
	for i, p := range installed {
		names[i] = p.Name
	}
	return repo.DidYouMean(name, names)
}

// flagsFirst moves a command's flags ahead of its arguments, and global flags written after
// the command ahead of the command: users write "pkg repo add DIR FILE --name N" and "pkg
// install x --offline". urfave/cli/v2 has no option for either: it parses each level with
// the standard library's flag.FlagSet (parse.go), which stops at the first argument, and
// reads the global flags only before the command's name.
func flagsFirst(app *cli.App, args []string) []string {
	if args[len(args)-1] == "--generate-bash-completion" { // urfave/cli wants it last; nothing runs
		return args
	}
	i, cmds := 1, app.Commands
	var cmd *cli.Command
walk:
	for i < len(args) {
		a := args[i]
		switch {
		case a == "--":
			return args
		case strings.HasPrefix(a, "-") && cmd != nil && !defines(cmd.Flags, a) && defines(app.Flags, a):
			break walk // a global flag after the command: moved below
		case strings.HasPrefix(a, "-") && cmd != nil: // the command's own flag, before its arguments
			i += 1 + takesValue(cmd.Flags, a)
			continue
		case strings.HasPrefix(a, "-"):
			i += 1 + takesValue(app.Flags, a)
			continue
		}
		next := findCommand(cmds, a)
		if next == nil {
			break
		}
		cmd, cmds = next, next.Subcommands
		i++
	}
	if cmd == nil || i >= len(args) {
		return args
	}
	var globals, flags, rest []string
	for j := i; j < len(args); j++ {
		a := args[j]
		switch {
		case a == "--":
			rest = append(rest, args[j:]...)
			j = len(args)
		case a == "-h" || a == "--help": // the command's help, whatever else is there
			return append(slices.Clip(args[:i]), a)
		case strings.HasPrefix(a, "-") && len(a) > 1 && !defines(cmd.Flags, a) && defines(app.Flags, a):
			// a global flag after the command ("pkg install x --offline"): it goes before it
			n := takesValue(app.Flags, a)
			if j+n >= len(args) { // its value is missing: alone, it is refused as such
				return []string{args[0], a}
			}
			globals = append(globals, args[j:j+1+n]...)
			j += n
		case strings.HasPrefix(a, "-") && len(a) > 1:
			n := takesValue(cmd.Flags, a)
			if j+n >= len(args) { // its value is missing: it must not take an argument's place
				return append(slices.Clip(args[:i]), a)
			}
			flags = append(flags, args[j:j+1+n]...)
			j += n
		default:
			rest = append(rest, a)
		}
	}
	out := append(append([]string{args[0]}, globals...), args[1:i]...)
	return append(append(out, flags...), rest...)
}

// defines reports whether the flag token a names one of flags.
func defines(flags []cli.Flag, a string) bool {
	name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return true
		}
	}
	return false
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// takesValue returns 1 if the flag token a needs the next argument as its value.
func takesValue(flags []cli.Flag, a string) int {
	name := strings.TrimLeft(a, "-")
	if strings.Contains(name, "=") {
		return 0
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			if _, ok := f.(*cli.BoolFlag); ok {
				return 0
			}
			return 1
		}
	}
	return 0
}

package cliusage

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// FlagsFirst moves a command's flags ahead of its arguments, and global flags written after
// the command ahead of the command: users write "app add DIR FILE --name N" and "app
// install x --offline". urfave/cli/v2 has no option for either: it parses each level with
// the standard library's flag.FlagSet (parse.go), which stops at the first argument, and
// reads the global flags only before the command's name. For the commands lines names
// ("run", "cache list"), whose arguments after the first are a command line of its own,
// the flags end at that first argument: what follows it stays where it is.
func FlagsFirst(app *cli.App, args []string, lines []string) []string {
	if args[len(args)-1] == "--generate-bash-completion" { // urfave/cli wants it last; nothing runs
		return args
	}
	i, cmds, name := 1, app.Commands, ""
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
		cmd, cmds, name = next, next.Subcommands, strings.TrimSpace(name+" "+next.Name)
		i++
	}
	if cmd == nil || i >= len(args) {
		return args
	}
	line := slices.Contains(lines, name)
	var globals, flags, rest []string
	for j := i; j < len(args); j++ {
		a := args[j]
		switch {
		case a == "--" || line && !strings.HasPrefix(a, "-"): // the flags end here
			rest = append(rest, args[j:]...)
			j = len(args)
		case a == "-h" || a == "--help": // the command's help, whatever else is there
			return append(slices.Clip(args[:i]), a)
		case strings.HasPrefix(a, "-") && len(a) > 1 && !defines(cmd.Flags, a) && defines(app.Flags, a):
			// a global flag after the command ("app install x --offline"): it goes before it
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

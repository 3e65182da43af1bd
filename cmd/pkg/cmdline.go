package main

import (
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/internal/shell"
)

// carried are the global options a pkg command line in advice carries as the user gave
// them: those that say which root, cache and repositories are meant, and which of them
// are trusted; not those of output or speed (--quiet, --jobs).
var carried = []string{"root", "cache", "repo", "digest-mirror", "offline", "trusted-key", "require-signed"}

// meaningful are, by command, its options that change what it does, carried into a
// command line in advice that runs that command again.
var meaningful = map[string][]string{"sync": {"frozen", "keep-extra", "dry-run"}, "run": {"lock", "with", "cmd"}}

// A cmdline is what a pkg command line in advice takes of the one the user typed: the
// global options of carried given on it, and the options of meaningful of the command run.
// The environment's (PKG_ROOT, PKG_OFFLINE) are not carried: they still hold in the shell
// the advice is pasted into.
type cmdline struct {
	globals [][2]string // flag and value ("" for a boolean), quoted for a POSIX shell
	command string      // the command run, as "sync"
	options []string    // of meaningful, as "--frozen"
	dirs    []string    // the root and the cache in effect, given or not
	app     *cli.App    // whose commands and global options advice names
}

// givenGlobals returns the cmdline of c, the app's context, before defaultDirs sets the
// root and the cache it leaves empty: an empty --root means the default, as none does.
func givenGlobals(c *cli.Context) *cmdline {
	l := &cmdline{app: c.App}
	for _, f := range c.App.Flags {
		name := f.Names()[0]
		if !slices.Contains(carried, name) || !given(c, f) {
			continue
		}
		switch f.(type) {
		case *cli.BoolFlag:
			if c.Bool(name) {
				l.globals = append(l.globals, [2]string{"--" + name, ""})
			}
		case *cli.StringSliceFlag:
			for _, v := range c.StringSlice(name) {
				if v != "" { // an empty --repo adds no repository
					l.globals = append(l.globals, [2]string{"--" + name, shell.Quote(v)})
				}
			}
		default:
			if v := c.String(name); v != "" {
				l.globals = append(l.globals, [2]string{"--" + name, shell.Quote(v)})
			}
		}
	}
	return l
}

// given reports whether f was given on c's command line. urfave/cli counts a value from
// the environment as set too: one the same as the environment's is left to it.
func given(c *cli.Context, f cli.Flag) bool {
	name := f.Names()[0]
	if !slices.Contains(c.LocalFlagNames(), name) {
		return false
	}
	env := ""
	if ef, ok := f.(interface{ GetEnvVars() []string }); ok && len(ef.GetEnvVars()) > 0 {
		env = ef.GetEnvVars()[0]
	}
	v, set := os.LookupEnv(env)
	if env == "" || !set {
		return true
	}
	if _, ok := f.(*cli.BoolFlag); ok {
		b, err := strconv.ParseBool(v)
		return err != nil || b != c.Bool(name)
	}
	return v != c.String(name)
}

// commandOptions records on l the command c runs and its options of meaningful given.
func (l *cmdline) commandOptions(c *cli.Context) {
	l.command = c.Command.Name
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		if !slices.Contains(meaningful[l.command], name) {
			continue
		}
		switch f.(type) {
		case *cli.BoolFlag:
			if c.Bool(name) {
				l.options = append(l.options, "--"+name)
			}
		case *cli.StringSliceFlag:
			for _, v := range c.StringSlice(name) {
				l.options = append(l.options, "--"+name+" "+shell.Quote(v))
			}
		default:
			if v := c.String(name); v != "" {
				l.options = append(l.options, "--"+name+" "+shell.Quote(v))
			}
		}
	}
}

// recordCommands makes each command of cmds that has options of meaningful record them,
// and its name, on the app's cmdline before it runs.
func recordCommands(cmds []*cli.Command) {
	for _, cmd := range cmds {
		if meaningful[cmd.Name] == nil {
			continue
		}
		before := cmd.Before
		cmd.Before = func(c *cli.Context) error {
			if l := cmdlineOf(c); l != nil {
				l.commandOptions(c)
			}
			if before != nil {
				return before(c)
			}
			return nil
		}
	}
}

// cmdlineOf returns the cmdline the app of c recorded, nil where none was.
func cmdlineOf(c *cli.Context) *cmdline {
	l, _ := c.App.Metadata["cmdline"].(*cmdline)
	return l
}

// carry returns text, advice, with each pkg command line in it, written 'pkg ...' in
// single quotes, carrying l's global options after pkg, and, where it runs the command
// the user ran, that command's options of meaningful after its name. An option the line
// gives itself keeps its own value alone; online leaves --offline out, for advice to run
// online. text is advice alone: a line in it is found by its "'pkg ", so text that comes
// from outside, such as a location, is worded around what carry returns, or is the value
// of a global option a line in it gives before its command. A nil l carries nothing.
func (l *cmdline) carry(text string, online bool) string {
	if l == nil {
		return text
	}
	var b strings.Builder
	for {
		i := strings.Index(text, "'pkg ")
		if i < 0 {
			break
		}
		i += len("'pkg")
		b.WriteString(text[:i])
		text = text[i:]
		own, command, at := l.lineStart(text)
		if command == "" { // 'pkg --version', not a command about a root
			continue
		}
		for _, g := range l.globals {
			if slices.Contains(own, g[0]) || online && g[0] == "--offline" {
				continue
			}
			b.WriteString(" " + strings.TrimSpace(g[0]+" "+g[1]))
		}
		b.WriteString(text[:at]) // the line's own options, whose values are never read as lines
		text = text[at:]
		if command != l.command {
			continue
		}
		for _, o := range l.options {
			if !givesOption(text, o) {
				b.WriteString(" " + o)
			}
		}
	}
	b.WriteString(text)
	return b.String()
}

// givesOption reports whether the command line at the start of text (up to the next pkg
// command line in it) gives the option o, a flag and its value if it takes one, whole:
// "--with a" is not given by "--with ab".
func givesOption(text, o string) bool {
	if next := strings.Index(text, "'pkg "); next >= 0 {
		text = text[:next]
	}
	for i := 0; ; {
		j := strings.Index(text[i:], " "+o)
		if j < 0 {
			return false
		}
		end := i + j + 1 + len(o)
		if end == len(text) || text[end] == ' ' || text[end] == '\'' {
			return true
		}
		i = end
	}
}

// lineStart reads the start of a command line in advice, what follows its "pkg": the
// global options it gives, its command, and the offset just past the command's name, or
// a command of "" where it names none of pkg's.
func (l *cmdline) lineStart(text string) (own []string, command string, at int) {
	flags := l.app.Flags
	for at < len(text) {
		rest := strings.TrimLeft(text[at:], " ")
		at = len(text) - len(rest)
		word, _, _ := strings.Cut(rest, " ")
		word, _, _ = strings.Cut(word, "'") // the line's end: 'pkg verify':
		at += len(word)
		if !strings.HasPrefix(word, "--") {
			if l.app.Command(word) == nil {
				return nil, "", 0
			}
			return own, word, at
		}
		name, _, hasValue := strings.Cut(word, "=")
		i := slices.IndexFunc(flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), name[2:]) })
		if i < 0 {
			return nil, "", 0
		}
		own = append(own, name)
		if _, ok := flags[i].(*cli.BoolFlag); !ok && !hasValue { // its value, one word in advice
			rest := strings.TrimLeft(text[at:], " ")
			at = len(text) - len(rest) + valueLen(rest)
		}
	}
	return nil, "", 0
}

// valueLen returns the length of the word text starts with, one shell.Quote may have
// quoted.
func valueLen(text string) int {
	if !strings.HasPrefix(text, "'") {
		n, _, _ := strings.Cut(text, " ")
		return len(n)
	}
	for i := 1; i < len(text); i++ {
		if text[i] != '\'' {
			continue
		}
		if !strings.HasPrefix(text[i:], `'\''`) {
			return i + 1
		}
		i += len(`'\''`) - 1
	}
	return len(text)
}

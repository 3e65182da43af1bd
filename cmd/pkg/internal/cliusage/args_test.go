package cliusage

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestBefore runs commands whose Before checks the count of their arguments, the action
// running only when the count is right.
func TestBefore(t *testing.T) {
	for _, tt := range []struct {
		before     cli.BeforeFunc
		args, want string // want "": the action runs
	}{
		{Args(1, -1, "name"), "app c", "c: missing name"},
		{Args(1, -1, "name"), "app c a b c", ""},
		{Args(0, 1, ""), "app c", ""},
		{Args(0, 1, ""), "app c a b", `c: unexpected argument "b" (c takes A)`},
		{Args(1, 1, "name"), "app c a", ""},
		{Want(2, "DIR NAME"), "app c a", "c: want DIR NAME, got 1 argument"},
		{Want(2, "DIR NAME"), "app c a b c", "c: want DIR NAME, got 3 arguments"},
		{Want(2, "DIR NAME"), "app c a b", ""},
		{All(Args(0, 2, ""), Want(2, "DIR NAME")), "app c a b c", `c: unexpected argument "c" (c takes A)`},
		{All(Args(0, 2, ""), Want(2, "DIR NAME")), "app c a", "c: want DIR NAME, got 1 argument"},
	} {
		ran := false
		app := &cli.App{Name: "app", ExitErrHandler: func(*cli.Context, error) {}, Commands: []*cli.Command{{
			Name: "c", ArgsUsage: "A", Before: tt.before,
			Action: func(*cli.Context) error { ran = true; return nil },
		}}}
		err := app.Run(strings.Fields(tt.args))
		var ue *UsageError
		switch {
		case tt.want == "" && (err != nil || !ran):
			t.Errorf("%s: %v, ran %v; want the action to run", tt.args, err, ran)
		case tt.want != "" && (!errors.As(err, &ue) || err.Error() != tt.want || ran):
			t.Errorf("%s: %v, ran %v; want %q", tt.args, err, ran, tt.want)
		}
	}
}

// TestComplete completes a command's argument with the words given, and a word that
// starts with "-" with its flags.
func TestComplete(t *testing.T) {
	for _, tt := range []struct{ args, want string }{
		{"app c --generate-bash-completion", "hello\nlibgreet\n"},
		{"app c --a --generate-bash-completion", "--all\n"},
		{"app c --all --generate-bash-completion", "hello\nlibgreet\n"}, // the word after a whole boolean flag
		{"app c -f --generate-bash-completion", ""},                     // a flag's value: the shell completes file names
		{"app c --file --generate-bash-completion", ""},
		{"app c --f --generate-bash-completion", "--file\n--frozen\n"},
	} {
		var out strings.Builder
		app := &cli.App{Name: "app", Writer: &out, EnableBashCompletion: true, Commands: []*cli.Command{{
			Name: "c", Flags: []cli.Flag{&cli.BoolFlag{Name: "all"}, &cli.StringFlag{Name: "file", Aliases: []string{"f"}}, &cli.BoolFlag{Name: "frozen"}},
			BashComplete: Complete(func(*cli.Context) []string { return []string{"hello", "libgreet"} }),
		}}}
		args := strings.Fields(tt.args)
		old := os.Args
		os.Args = args
		err := app.Run(args)
		os.Args = old
		if err != nil || out.String() != tt.want {
			t.Errorf("%s: %v, %q, want %q", tt.args, err, out.String(), tt.want)
		}
	}
}

package cliusage

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestRun checks what Run returns and the advice Hint gives for it: a mistyped command, a
// flag refused, a usage error of a command or of the global flags, a command that needs a
// subcommand given none, and other errors.
func TestRun(t *testing.T) {
	failed := errors.New("failed")
	for _, tt := range []struct {
		in, used string
		action   error // the command's
		err      string
		hint     string // "" for not a usage mistake
	}{
		{"app instal", "", nil, `unknown command "instal"; did you mean "install"?`, "run 'app help' for the list"},
		{"app install --bogus", "", nil, "unknown flag --bogus", "run 'app install --help' for usage"},
		{"app install --jobs x", "", nil, `invalid value "x" for --jobs: a whole number`, "run 'app install --help' for usage"},
		{"app install x", "install", Errorf("install: bad x"), "install: bad x", "run 'app install --help' for usage"},
		{"app install x", "install", &UsageError{Msg: "bad --root", Global: true}, "bad --root", "run 'app help' for usage"},
		{"app install x", "install", failed, "failed", ""},
		{"app install x", "install", nil, "<nil>", ""},
		{"app run x -e y --bogus", "run", nil, "<nil>", ""},
		{"app run --bogus x", "", nil, "unknown flag --bogus", "run 'app run --help' for usage"},
		{"app cache", "cache", nil, "cache: missing subcommand: clean", "run 'app cache --help' for usage"},
		{"app cache nope", "cache", nil, `unknown command "nope"`, "run 'app cache help' for the list"},
		{"app cache clean", "cache clean", nil, "<nil>", ""},
	} {
		app := testApp()
		app.Writer, app.ErrWriter = io.Discard, io.Discard
		for _, c := range app.Commands {
			if len(c.Subcommands) == 0 {
				c.Action = func(*cli.Context) error { return tt.action }
			}
		}
		used, err := Run(context.Background(), app, strings.Fields(tt.in), Options{CommandLines: []string{"run"}})
		hint, ok := Hint(app, used, err)
		if used != tt.used || errString(err) != tt.err || hint != tt.hint || ok != (tt.hint != "") {
			t.Errorf("%s: %q, %v, hint %q %v; want %q, %s, %q", tt.in, used, err, hint, ok, tt.used, tt.err, tt.hint)
		}
	}
}

// TestRunCompleteAfterDashes asks for completions after "--": urfave/cli takes the request
// for an argument there, so a command would run; Run runs none and offers nothing.
func TestRunCompleteAfterDashes(t *testing.T) {
	for _, in := range []string{
		"app install -- --generate-bash-completion",
		"app install x -- --generate-bash-completion",
		"app run x -- --generate-bash-completion",
		"app -- --generate-bash-completion",
	} {
		app := testApp()
		app.EnableBashCompletion = true
		var out strings.Builder
		app.Writer, app.ErrWriter = &out, &out
		ran := false
		app.Action = func(*cli.Context) error { ran = true; return nil }
		for _, c := range app.Commands {
			c.Action = app.Action
		}
		_, err := Run(context.Background(), app, strings.Fields(in), Options{CommandLines: []string{"run"}})
		if err != nil || ran || out.String() != "" {
			t.Errorf("%s: %v, ran %v, printed %q; want nothing run or printed", in, err, ran, out.String())
		}
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestHintEnv: a value of an environment variable refused is advised by what it takes.
func TestHintEnv(t *testing.T) {
	app := testApp()
	for _, tt := range []struct {
		fe   FlagError
		want string
	}{
		{FlagError{Env: "APP_OFFLINE", Want: "a boolean"}, "set it to 1 or 0 (true and false work too), or unset it"},
		{FlagError{Env: "APP_JOBS", Want: "a whole number"}, "set it to a whole number, or unset it"},
		{FlagError{Flag: "--root"}, "run 'app help' for usage"},
	} {
		if got, ok := Hint(app, "install", &tt.fe); got != tt.want || !ok {
			t.Errorf("Hint(%+v) = %q, %v; want %q", tt.fe, got, ok, tt.want)
		}
	}
}

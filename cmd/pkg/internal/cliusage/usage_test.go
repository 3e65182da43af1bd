package cliusage

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func testApp() *cli.App {
	return &cli.App{
		Name:  "app",
		Flags: []cli.Flag{&cli.StringFlag{Name: "root"}, &cli.BoolFlag{Name: "offline", EnvVars: []string{"APP_OFFLINE"}}},
		Commands: []*cli.Command{
			{Name: "install", Flags: []cli.Flag{&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}}, &cli.IntFlag{Name: "jobs"}}},
			{Name: "cache", Subcommands: []*cli.Command{{Name: "clean", Flags: []cli.Flag{&cli.DurationFlag{Name: "older"}}}}},
			{Name: "run", Flags: []cli.Flag{&cli.StringFlag{Name: "cmd"}, &cli.BoolFlag{Name: "refresh"}}},
		},
	}
}

func TestFlagsFirst(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"app install x --dry-run", "app install --dry-run x"},
		{"app install x --offline", "app --offline install x"},
		{"app install x --jobs 3 y", "app install --jobs 3 x y"},
		{"app --root r install x --root s", "app --root s --root r install x"},
		{"app cache clean --older 1h", "app cache clean --older 1h"},
		{"app install x -- --dry-run", "app install x -- --dry-run"},
		{"app install x --help", "app install --help"},
		{"app install x --jobs", "app install --jobs"},
		{"app install x --root", "app --root"},
		{"app nothing --x", "app nothing --x"},
		// run's arguments after NAME are a command line: its flags end at NAME
		{"app run --cmd c x -e y", "app run --cmd c x -e y"},
		{"app run x --version", "app run x --version"},
		{"app run x --help", "app run x --help"},
		{"app run x a --offline --root r --refresh", "app run x a --offline --root r --refresh"},
		{"app run x -- a", "app run x -- a"},
		{"app run x --root", "app run x --root"},
		{"app run --refresh x --cmd", "app run --refresh x --cmd"},
		{"app run --offline x -q", "app --offline run x -q"},
		{"app --root r run --root s x --root t", "app --root s --root r run x --root t"},
		{"app run --cmd", "app run --cmd"},
		{"app run --help", "app run --help"},
		{"app run -- x -e", "app run -- x -e"},
	} {
		if got := strings.Join(FlagsFirst(testApp(), strings.Fields(tt.in), []string{"run"}), " "); got != tt.want {
			t.Errorf("FlagsFirst(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestCheck(t *testing.T) {
	wants := map[string]string{"older": "a duration such as 1h"}
	for _, tt := range []struct {
		args, env string
		want      *FlagError // nil: no error
	}{
		{args: "app install --dry-run --jobs 3 x"},
		{args: "app install --jbos 3", want: &FlagError{Flag: "--jbos", Command: "install", Problem: "unknown flag", Near: []string{"jobs"}}},
		{args: "app install --jobs", want: &FlagError{Flag: "--jobs", Command: "install", Problem: "needs a value"}},
		{args: "app install --jobs=many", want: &FlagError{Flag: "--jobs", Command: "install", Problem: "invalid value", Value: "many", Want: "a whole number"}},
		{args: "app cache clean --older 3", want: &FlagError{Flag: "--older", Command: "cache clean", Problem: "invalid value", Value: "3", Want: "a duration such as 1h"}},
		{args: "app install x --jbos", env: "maybe", want: &FlagError{Flag: "--offline", Problem: "invalid value", Value: "maybe", Want: "a boolean", Env: "APP_OFFLINE"}},
		{args: "app install x --jbos"}, // flags after an argument are urfave/cli's to refuse
	} {
		t.Setenv("APP_OFFLINE", tt.env)
		err := Check(testApp(), strings.Fields(tt.args), wants)
		var fe *FlagError
		switch {
		case tt.want == nil && err != nil:
			t.Errorf("Check(%s): %v", tt.args, err)
		case tt.want == nil:
		case !errors.As(err, &fe):
			t.Errorf("Check(%s): %v, want a *FlagError", tt.args, err)
		case fe.Flag != tt.want.Flag || fe.Command != tt.want.Command || fe.Problem != tt.want.Problem || fe.Value != tt.want.Value ||
			fe.Want != tt.want.Want || fe.Env != tt.want.Env || !slices.Equal(fe.Near, tt.want.Near):
			t.Errorf("Check(%s) = %#v, want %#v", tt.args, fe, tt.want)
		}
	}
}

// TestArgs runs a command of one argument (Args) with none, one and two, and a mistyped command.
func TestArgs(t *testing.T) {
	for _, tt := range []struct{ args, want string }{
		{"app show", "show: missing name"},
		{"app show a", ""},
		{"app show a b", `show: unexpected argument "b" (show takes NAME)`},
	} {
		app := &cli.App{Name: "app", ExitErrHandler: func(*cli.Context, error) {}, Commands: []*cli.Command{{
			Name: "show", ArgsUsage: "NAME",
			Before: Args(1, 1, "name"), Action: func(*cli.Context) error { return nil },
		}}}
		err := app.Run(strings.Fields(tt.args))
		var ue *UsageError
		if tt.want == "" && err != nil || tt.want != "" && (!errors.As(err, &ue) || err.Error() != tt.want) {
			t.Errorf("%s: %v, want %q", tt.args, err, tt.want)
		}
	}
	cmds := testApp().Commands
	if got := Guess("instal", cmds); got != `; did you mean "install"?` {
		t.Errorf("Guess(instal) = %q", got)
	}
	if got := Guess("clean", cmds); got != `; did you mean "cache clean"?` {
		t.Errorf("Guess(clean) = %q", got)
	}
}

func TestWithoutCredentials(t *testing.T) {
	got := strings.Join(WithoutCredentials([]string{"pkg", "--repo", "https://u:tok@h/p/", "--repo=http://tok@h/",
		"--repo", "team=http://u:tok@h/t/", "--repo=ops=oci://u:tok@r/ops/tools", "install", "a@1"}), " ")
	if want := "pkg --repo https://h/p/ --repo=http://h/ --repo team=http://h/t/ --repo=ops=oci://r/ops/tools install a@1"; got != want {
		t.Errorf("WithoutCredentials = %q, want %q", got, want)
	}
}

package cliusage

import (
	"io"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestUnknown(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want UnknownError // Name "" for none
	}{
		{"app instal", UnknownError{"instal", `; did you mean "install"?`, "app help"}},
		{"app clean", UnknownError{"clean", `; did you mean "cache clean"?`, "app help"}},
		{"app cache clen", UnknownError{"clen", `; did you mean "clean"?`, "app cache help"}},
		{"app install", UnknownError{}},
	} {
		app := testApp()
		app.Writer, app.ErrWriter = io.Discard, io.Discard
		app.Commands[0].Action = func(*cli.Context) error { return nil }
		var got *UnknownError
		Unknown(app, &got)
		app.Run(strings.Fields(tt.in))
		if got == nil {
			got = &UnknownError{}
		}
		if *got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.in, *got, tt.want)
		}
	}
}

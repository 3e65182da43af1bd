package cliusage

import (
	"strings"
	"testing"
)

// TestFishCompletion: no file names before the first command and after a command with
// subcommands, until one of them.
func TestFishCompletion(t *testing.T) {
	script, err := FishCompletion(testApp())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\ncomplete -c app -n '__fish_app_no_subcommand' -f\n",
		"\ncomplete -c app -n '__fish_seen_subcommand_from cache; and not __fish_seen_subcommand_from clean' -f\n",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("want %q in\n%s", want, script)
		}
	}
	if n := strings.Count(script, "' -f\n"); n != 2 {
		t.Errorf("%d lines offer no file names, want 2:\n%s", n, script)
	}
}

package main

import (
	"testing"

	"pkg/repo"
)

// TestVerbHints checks the advice the hint table gives for the typed errors of the verbs'
// libraries, which name no command.
func TestVerbHints(t *testing.T) {
	given, err := repo.ParseRequirements([]string{"app", "tool>=2"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&repo.InputsError{Path: "ci.lock", Given: given}, "run 'pkg lock -o ci.lock app tool>=2' to lock these requirements"},
	} {
		if got := hint(tt.err, nil); got != tt.want {
			t.Errorf("hint(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

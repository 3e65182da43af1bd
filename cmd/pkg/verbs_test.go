package main

import (
	"testing"

	"pkg/repo"
)

// TestVerbHints checks the advice the hint table gives for the typed errors of the verbs'
// libraries, which name no command.
func TestVerbHints(t *testing.T) {
	reqs := func(s ...string) []repo.Requirement {
		reqs, err := repo.ParseRequirements(s)
		if err != nil {
			t.Fatal(err)
		}
		return reqs
	}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&repo.InputsError{Path: "ci.lock", Given: reqs("app", "tool>=2")}, "'pkg lock -o ci.lock app 'tool>=2'' locks the requirements it records with those given, then 'pkg sync -f ci.lock' syncs them; 'pkg sync -f ci.lock' alone syncs what it locks now"},
		// The recorded requirements are kept: a lock of the names given alone would drop them.
		{&repo.InputsError{Path: "ci.lock", Locks: reqs("chalk", "debug", "tool<1.5"), Given: reqs("jq", "tool>=2")}, "'pkg lock -o ci.lock chalk debug jq 'tool>=2'' locks the requirements it records with those given, then 'pkg sync -f ci.lock' syncs them; 'pkg sync -f ci.lock' alone syncs what it locks now"},
		{&repo.InputsError{Path: "my ci.lock", Locks: reqs("chalk", "debug", "jq"), Given: reqs("jq")}, "'pkg sync -f 'my ci.lock'' with no names syncs what it locks"},
	} {
		if got := hint(tt.err, nil); got != tt.want {
			t.Errorf("hint(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

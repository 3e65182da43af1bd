package session_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"pkg/pkgtest/testrepo"
	"pkg/repo"
	"pkg/session"
)

// An install as a command runs it: a session of what the command was given, a request,
// its plan, and the plan applied, which gives the root up; then the session closed.
func Example() {
	base, err := os.MkdirTemp("", "session-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(base)
	dir := filepath.Join(base, "repo")
	if _, err := testrepo.Publish(dir, base, "hello", "1"); err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", base) // no configuration of the user's
	repos, err := session.GivenRepos("example", dir)
	if err != nil {
		panic(err)
	}
	s := session.New(session.Options{Root: filepath.Join(base, "root"), Cache: filepath.Join(base, "cache"), Repos: repos, Jobs: 2}, nil)
	defer s.Close()

	ctx := context.Background()
	plan, err := s.Plan(ctx, session.Request{Op: session.Install, Requires: []repo.Requirement{{Name: "hello"}}})
	if err != nil {
		panic(err)
	}
	for _, c := range plan.Changes {
		fmt.Printf("%s %s %s: %s\n", c.Action, c.Name, c.Version, c.Why)
	}
	out, err := plan.Apply(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Printf("installed %s %s\n", out.Results[0].Name, out.Results[0].Version)
	// Output:
	// install hello 1: requested
	// installed hello 1
}

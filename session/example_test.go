package session_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"pkg/config"
	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/repo"
	"pkg/session"
	"pkg/txn"
)

// An install as a command runs it: a session of what the command was given, the change's
// flow (read the indexes, the root's records, plan, apply), and the session closed.
func ExampleSession_Change() {
	base, err := os.MkdirTemp("", "session-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(base)
	dir := filepath.Join(base, "repo")
	if err := publish(dir, base, "hello", "1"); err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", base) // no configuration of the user's

	obs := &recorder{}
	s := session.New(session.Options{
		Root:  filepath.Join(base, "root"),
		Cache: filepath.Join(base, "cache"),
		Repos: []config.Repo{{Name: "demo", URLs: []string{dir}}},
		Jobs:  2,
	}, obs)
	defer s.Close()

	recs := func(d *db.DB) ([]db.Package, error) { recs, _, err := txn.ReadInstalled(d); return recs, err }
	plan := func(root string, ix *txn.Index, recs []db.Package, cache *fetch.Cache) (*txn.Plan, error) {
		return txn.InstallPlan(root, ix, recs, []repo.Requirement{{Name: "hello"}}, cache)
	}
	show := func(p *txn.Plan, _ *fetch.Cache) error { return nil } // for a dry run
	do := func(root *install.Root, p *txn.Plan, f *txn.Fetcher) error {
		out, err := p.Apply(context.Background(), root, f)
		if err == nil {
			fmt.Printf("installed %s %s\n", out.Results[0].Name, out.Results[0].Version)
		}
		return err
	}
	if err := s.Change(context.Background(), recs, plan, show, do); err != nil {
		panic(err)
	}
	for _, line := range obs.lines { // what the observer was told
		fmt.Println(strings.Replace(line, base, "BASE", 1))
	}
	// Output:
	// installed hello 1
	// unverified (local true): repository file://BASE/repo/ is not signed; pkg cannot tell whether its packages are the publisher's
}

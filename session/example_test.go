package session_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"pkg/config"
	"pkg/fetch"
	"pkg/pkgtest/testrepo"
	"pkg/repo"
	"pkg/session"
	"pkg/trust"
)

// A root trusts a publisher's key, for one repository's name, in its trusted-keys file;
// trusting it again for any repository replaces that entry.
func ExampleSession_Trust() {
	base, err := os.MkdirTemp("", "session-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(base)
	os.Setenv("XDG_CONFIG_HOME", base) // no configuration of the user's
	k, err := trust.GenerateKey()
	if err != nil {
		panic(err)
	}
	s := session.New(session.Options{Root: filepath.Join(base, "root"), Cache: filepath.Join(base, "cache")}, &recorder{})
	defer s.Close()
	bound := k.Public()
	bound.Repo = "demo"
	dir, replaced, err := s.Trust(context.Background(), bound)
	fmt.Println(strings.TrimPrefix(dir, base), len(replaced), err)
	_, replaced, err = s.Trust(context.Background(), k.Public())
	fmt.Println(len(replaced), replaced[0].Repo, err)
	sources, _, err := s.Trusted()
	root := sources[len(sources)-1] // the root's trusted-keys file, after the keys given
	fmt.Println(len(root.Keys), root.Keys[0].Repo == "", err)
	// Output:
	// /root 0 <nil>
	// 1 demo <nil>
	// 1 true <nil>
}

// A prune of the cache: the limits given (by their names in the configuration's [cache]),
// else the configured ones, and what it removed.
func ExampleUpkeep_Trim() {
	base, err := os.MkdirTemp("", "session-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(base)
	os.Setenv("XDG_CONFIG_HOME", base) // no configuration of the user's
	dir := filepath.Join(base, "repo")
	if _, err := testrepo.Publish(dir, base, "hello", "1"); err != nil {
		panic(err)
	}
	o := session.Options{Root: filepath.Join(base, "root"), Cache: filepath.Join(base, "cache"),
		Repos: []config.Repo{{Name: "demo", URLs: []string{dir}}}, Jobs: 1}
	// One command fetches hello, cached and installed nowhere. A session holds the caches it
	// opened until Close, and a prune waits for every other holder, so each command's
	// session is closed before the next.
	fetcher := session.New(o, &recorder{})
	if err := fetcher.Fetch(context.Background(), []repo.Requirement{{Name: "hello"}}); err != nil {
		panic(err)
	}
	fetcher.Close()

	s := session.New(o, &recorder{})
	defer func() { s.Close() }()
	l, err := s.Upkeep().Limits(map[string]string{"older-than": "30d"})
	fmt.Println(l.OlderThan, err)
	t, err := s.Upkeep().Trim(context.Background(), true, l)
	fmt.Println(len(t.Removed), err) // used a moment ago
	s.Close()
	s = session.New(o, &recorder{}) // the next command's: no limits, so all no root uses goes
	t, err = s.Upkeep().Trim(context.Background(), true, fetch.Limits{})
	fmt.Println(len(t.Removed), t.Removed[0].Name, err)
	// Output:
	// 720h0m0s <nil>
	// 0 <nil>
	// 1 hello <nil>
}

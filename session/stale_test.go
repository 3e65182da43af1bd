package session_test

import (
	"path/filepath"
	"testing"

	"pkg/config"
	"pkg/install"
	"pkg/pin"
	"pkg/session"
	"pkg/trust"
)

// TestStale: a record of the repository made in the root after its index was read, as
// another command accepting a newer index (or removing a key from the pins) makes, makes
// that index stale.
func TestStale(t *testing.T) {
	base := t.TempDir()
	dir, root := filepath.Join(base, "repo"), filepath.Join(base, "root")
	publish(t, dir, "hello", "1")
	s, _ := newSession(t, session.Options{Root: root, Cache: filepath.Join(base, "cache"), Repos: []config.Repo{{Name: "r", URLs: []string{dir}}}}, "")
	_, ix, err := session.OpenFetcher(s, t.Context(), false)
	if err != nil {
		t.Fatal(err)
	}
	r, err := install.Open(t.Context(), root, install.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if stale, err := session.Stale(ix, r); err != nil || stale {
		t.Fatalf("Stale with no record: %v, %v", stale, err)
	}
	k, err := trust.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	key := k.Public()
	res := trust.Result{Record: trust.Record{Location: ix.Source.URL(), Name: "r", Version: 1, SHA256: "s"},
		KeyID: key.ID(), KeyIDs: []string{key.ID()}, Keys: []trust.PublicKey{key}, Trusted: []string{key.ID()}}
	if err := pin.Accept(r.DB(), res); err != nil {
		t.Fatal(err)
	}
	if stale, err := session.Stale(ix, r); err != nil || !stale {
		t.Errorf("Stale once a record was made: %v, %v; want stale", stale, err)
	}
}

package txn_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"pkg/fetch"
	"pkg/install"
	"pkg/pin"
	"pkg/trust"
	"pkg/txn"
)

func newKey(t *testing.T) trust.PublicKey {
	t.Helper()
	k, err := trust.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k.Public()
}

// verified is the Result of an index of repository name at loc, version v, that key verified.
func verified(loc, name string, v uint64, sha string, key trust.PublicKey) trust.Result {
	return trust.Result{Record: trust.Record{Location: loc, Name: name, Version: v, SHA256: sha},
		KeyID: key.ID(), KeyIDs: []string{key.ID()}, Keys: []trust.PublicKey{key}, Trusted: []string{key.ID()}}
}

func openRoot(t *testing.T) *install.Root {
	t.Helper()
	root, err := install.Open(context.Background(), filepath.Join(t.TempDir(), "root"), install.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root
}

// TestUnpin: a pinned root takes only an index a key trusted for the repository verifies,
// and removing a key from the pins changes the root's record (session's TestStale: which
// makes an index read before stale).
func TestUnpin(t *testing.T) {
	w := newWorld(t)
	addPackage(t, w.repo, "hello", "1")
	root := openRoot(t)
	k := newKey(t)
	ix := w.index(root.Dir())
	loc := ix.Source.URL()
	if err := pin.Accept(root.DB(), verified(loc, "r", 1, "s", k)); err != nil {
		t.Fatal(err)
	}
	// Pinned, the root takes only an index a key trusted for the repository verifies.
	_, err := txn.ReadIndex(context.Background(), w.cache, root.Dir(), install.Options{}, w.repo, fetch.Options{})
	if pe := (*trust.PinnedError)(nil); !errors.As(err, &pe) || !errors.Is(err, trust.ErrUnsigned) || pe.Repo != loc || pe.Root != root.Dir() {
		t.Errorf("ReadIndex of the unsigned repository once pinned: %v; want a *trust.PinnedError of the root of an unsigned index", err)
	}
	changed, err := pin.Unpin(root.DB(), k.ID())
	if err != nil || len(changed) != 1 || len(changed[0].Keys) != 0 {
		t.Errorf("Unpin: %v, %v; want the one record, with no key", changed, err)
	}
}

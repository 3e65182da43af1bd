package txn_test

import (
	"context"
	"errors"
	"testing"

	"pkg/fetch"
	"pkg/install"
	"pkg/pin"
	"pkg/pkgtest/testrepo"
	"pkg/trust"
	"pkg/txn"
)

// TestUnpin: a pinned root takes only an index a key trusted for the repository verifies,
// and removing a key from the pins changes the root's record (session's TestStale: which
// makes an index read before stale).
func TestUnpin(t *testing.T) {
	w := newWorld(t)
	addPackage(t, w.repo, "hello", "1")
	root := openRoot(t)
	k := testrepo.Key(t)
	ix := w.index(root.Dir())
	loc := ix.Source.URL()
	if err := pin.Accept(root.DB(), testrepo.Verified(loc, "r", 1, "s", k)); err != nil {
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

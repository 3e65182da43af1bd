package txn_test

import (
	"errors"
	"strings"
	"testing"

	"pkg/pin"
	"pkg/repo"
	"pkg/txn"
)

// TestLock locks requirements against an index, and refuses what would replace a lockfile
// made from a signed index with one from an unverified or older index.
func TestLock(t *testing.T) {
	w := newWorld(t)
	hello := addPackage(t, w.repo, "hello", "1")
	ix := w.index("")
	l, err := txn.Lock(nil, ix, []repo.Requirement{{Name: "hello"}}, "pkg.lock", nil)
	if err != nil || len(l.Packages) != 1 || l.Packages[0].SHA256 != hello.SHA256 || l.Index != nil || l.Repo != ix.Source.URL() {
		t.Fatalf("Lock: %+v, %v; want hello from %s, no index recorded (unsigned)", l, err, ix.Source.URL())
	}
	if !strings.HasPrefix(l.Packages[0].Archive, "file://") {
		t.Errorf("locked archive %q, want a URL", l.Packages[0].Archive)
	}
	_, err = txn.Lock(nil, ix, []repo.Requirement{{Name: "nope"}}, "pkg.lock", nil)
	ue, me := (*txn.UnresolvedError)(nil), (*repo.MissingError)(nil)
	if !errors.As(err, &ue) || !errors.As(err, &me) || me.Name != "nope" || !strings.Contains(err.Error(), ix.Source.URL()) {
		t.Errorf("Lock of a package the index lacks: %v; want an *UnresolvedError naming the repository", err)
	}
	signed := &repo.Lock{Index: &repo.LockIndex{Name: "r", Version: 2, Keys: []string{"0123456789abcdef"}}}
	if _, err := txn.Lock(signed, ix, []repo.Requirement{{Name: "hello"}}, "pkg.lock", nil); !errors.Is(err, pin.ErrLockNotVerified) {
		t.Errorf("Lock over a lockfile of a signed index, unverified: %v", err)
	}
}

package pin_test

import (
	"errors"
	"testing"

	"pkg/pin"
	"pkg/repo"
	"pkg/trust"
)

// TestCheckLockIndex refuses to replace a lockfile made from a signed index with one from
// an older index of the repository, or an unverified one.
func TestCheckLockIndex(t *testing.T) {
	signed := &repo.Lock{Index: &repo.LockIndex{Name: "r", Version: 2, Keys: []string{"0123456789abcdef"}}}
	if x := pin.LockIndex(trust.Result{Record: trust.Record{Name: "r", Version: 1}}); x != nil {
		t.Errorf("LockIndex of an unverified index: %+v, want nil", x)
	}
	older := pin.LockIndex(trust.Result{Record: trust.Record{Name: "r", Version: 1}, KeyID: "k"})
	if err := pin.CheckLockIndex(signed, older, "pkg.lock"); !errors.Is(err, pin.ErrLockRollback) {
		t.Errorf("CheckLockIndex of an older index: %v", err)
	}
	if err := pin.CheckLockIndex(signed, nil, "pkg.lock"); !errors.Is(err, pin.ErrLockNotVerified) {
		t.Errorf("CheckLockIndex of an unverified index: %v", err)
	}
	newer := pin.LockIndex(trust.Result{Record: trust.Record{Name: "r", Version: 3}, KeyID: "k"})
	if err := pin.CheckLockIndex(signed, newer, "pkg.lock"); err != nil {
		t.Errorf("CheckLockIndex of a newer index: %v", err)
	}
}

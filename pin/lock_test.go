package pin

import (
	"errors"
	"testing"

	"pkg/repo"
	"pkg/trust"
)

// TestCheckLockIndex refuses to replace a lockfile made from a signed index with one from
// an older index of the repository, or an unverified one.
func TestCheckLockIndex(t *testing.T) {
	signed := &repo.Lock{Index: &repo.LockIndex{Name: "r", Version: 2, Keys: []string{"0123456789abcdef"}}}
	if x := LockIndex(trust.Result{Record: trust.Record{Name: "r", Version: 1}}); x != nil {
		t.Errorf("LockIndex of an unverified index: %+v, want nil", x)
	}
	older := LockIndex(trust.Result{Record: trust.Record{Name: "r", Version: 1}, KeyID: "k"})
	if err := checkLockIndex(signed, older, "pkg.lock"); !errors.Is(err, ErrLockRollback) {
		t.Errorf("checkLockIndex of an older index: %v", err)
	}
	if err := checkLockIndex(signed, nil, "pkg.lock"); !errors.Is(err, ErrLockNotVerified) {
		t.Errorf("checkLockIndex of an unverified index: %v", err)
	}
	newer := LockIndex(trust.Result{Record: trust.Record{Name: "r", Version: 3}, KeyID: "k"})
	if err := checkLockIndex(signed, newer, "pkg.lock"); err != nil {
		t.Errorf("checkLockIndex of a newer index: %v", err)
	}
}

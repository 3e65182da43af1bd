package txn_test

import (
	"errors"
	"slices"
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
	if ue := (*txn.UnresolvedError)(nil); !errors.As(err, &ue) || !strings.Contains(err.Error(), "(repository "+ix.Source.URL()+")") {
		t.Errorf("Lock of a package the index lacks: %v; want an *UnresolvedError naming the repository", err)
	}
	signed := &repo.Lock{Index: &repo.LockIndex{Name: "r", Version: 2, Keys: []string{"0123456789abcdef"}}}
	if _, err := txn.Lock(signed, ix, []repo.Requirement{{Name: "hello"}}, "pkg.lock", nil); !errors.Is(err, pin.ErrLockNotVerified) {
		t.Errorf("Lock over a lockfile of a signed index, unverified: %v", err)
	}
}

// TestLockChanges describes a new lockfile against the one it replaces, a line per change.
func TestLockChanges(t *testing.T) {
	a1 := repo.Package{Name: "a", Version: "1", SHA256: "x"}
	a2 := repo.Package{Name: "a", Version: "2", SHA256: "y"}
	b := repo.Package{Name: "b", Version: "1", SHA256: "z", Platform: "linux-arm64"}
	ix := func(v uint64) *repo.LockIndex { return &repo.LockIndex{Name: "r", Version: v, Keys: []string{"k"}} }
	for _, tc := range []struct {
		name   string
		old, l *repo.Lock
		want   []string
	}{
		{"new", nil, &repo.Lock{Packages: []repo.Package{a1}}, []string{"locked a 1"}},
		{"same", &repo.Lock{Packages: []repo.Package{a1}}, &repo.Lock{Packages: []repo.Package{a1}}, nil},
		{"upgraded", &repo.Lock{Packages: []repo.Package{a1}}, &repo.Lock{Packages: []repo.Package{a2}}, []string{"locked a 2 (was 1)"}},
		{"new archive", &repo.Lock{Packages: []repo.Package{a1}}, &repo.Lock{Packages: []repo.Package{{Name: "a", Version: "1", SHA256: "w"}}}, []string{"locked a 1 (new archive)"}},
		{"platform and unlocked", &repo.Lock{Packages: []repo.Package{a1}}, &repo.Lock{Packages: []repo.Package{b}}, []string{"locked b 1 for linux-arm64", "unlocked a 1"}},
		{"repository and index", &repo.Lock{Repo: "file:///a"}, &repo.Lock{Repo: "file:///b", Index: ix(1)}, []string{"repository file:///b (was file:///a)", "recorded index r version 1, verified by key k"}},
		{"newer index", &repo.Lock{Index: ix(1)}, &repo.Lock{Index: ix(2)}, []string{"index r version 2, verified by key k (was version 1)"}},
	} {
		if got := txn.LockChanges(tc.old, tc.l); !slices.Equal(got, tc.want) {
			t.Errorf("%s: LockChanges = %q, want %q", tc.name, got, tc.want)
		}
	}
}

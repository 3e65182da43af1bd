package report

import (
	"fmt"
	"slices"
	"testing"

	"pkg/repo"
)

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
		{"moved archive", &repo.Lock{Packages: []repo.Package{{Name: "a", Version: "1", SHA256: "x", Archive: "file:///a/a-1.tar"}}},
			&repo.Lock{Packages: []repo.Package{{Name: "a", Version: "1", SHA256: "x", Archive: "https://u:p@b.example/a-1.tar"}}}, []string{"locked a 1 (same archive, now at https://b.example/a-1.tar)"}},
		{"new archive elsewhere", &repo.Lock{Packages: []repo.Package{{Name: "a", Version: "1", SHA256: "x", Archive: "file:///a/a-1.tar"}}},
			&repo.Lock{Packages: []repo.Package{{Name: "a", Version: "1", SHA256: "w", Archive: "file:///b/a-1.tar"}}}, []string{"locked a 1 (new archive)"}},
		{"platform and unlocked", &repo.Lock{Packages: []repo.Package{a1}}, &repo.Lock{Packages: []repo.Package{b}}, []string{"locked b 1 for linux-arm64", "unlocked a 1"}},
		{"repository and index", &repo.Lock{Repo: "file:///a"}, &repo.Lock{Repo: "file:///b", Index: ix(1)}, []string{"repository file:///b (was file:///a)", "recorded index r version 1, verified by key k"}},
		{"newer index", &repo.Lock{Index: ix(1)}, &repo.Lock{Index: ix(2)}, []string{"index r version 2, verified by key k (was version 1)"}},
	} {
		if got := lockChanges(tc.old, tc.l); !slices.Equal(got, tc.want) {
			t.Errorf("%s: lockChanges = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// What lock says of the lockfile it writes over another.
func ExampleLockText() {
	old := &repo.Lock{Packages: []repo.Package{{Name: "hello", Version: "1"}, {Name: "libold", Version: "1"}}}
	l := &repo.Lock{Packages: []repo.Package{{Name: "hello", Version: "2"}, {Name: "libgreet", Version: "1"}}}
	for _, line := range LockText(old, l, "pkg.lock") {
		fmt.Println(line)
	}
	// Output:
	// locked hello 2 (was 1)
	// locked libgreet 1
	// unlocked libold 1
	// wrote pkg.lock: 2 packages
}

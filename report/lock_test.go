package report

import (
	"slices"
	"testing"

	"pkg/repo"
)

func TestLockText(t *testing.T) {
	hello := repo.Package{Name: "hello", Version: "1.0"}
	l := &repo.Lock{Packages: []repo.Package{hello}}
	newer := &repo.Lock{Packages: []repo.Package{{Name: "hello", Version: "1.1"}}}
	tests := []struct {
		old, l *repo.Lock
		want   []string
	}{
		{nil, l, []string{"locked hello 1.0", "wrote pkg.lock: 1 package"}},
		{l, l, []string{"pkg.lock is up to date: 1 package"}},
		{l, newer, []string{"locked hello 1.1 (was 1.0)", "wrote pkg.lock: 1 package"}},
	}
	for _, tt := range tests {
		if got := LockText(tt.old, tt.l, "pkg.lock"); !slices.Equal(got, tt.want) {
			t.Errorf("LockText = %q, want %q", got, tt.want)
		}
	}
}

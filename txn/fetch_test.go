package txn_test

import (
	"slices"
	"testing"

	"pkg/repo"
	"pkg/txn"
)

// TestLargestFirst: a Fetcher begins the packages by archive size, the largest first, and
// packages of one size in the order given.
func TestLargestFirst(t *testing.T) {
	for _, tt := range []struct {
		sizes []int64
		want  []int
	}{
		{nil, []int{}},
		{[]int64{7}, []int{0}},
		{[]int64{5, 30, 10, 30}, []int{1, 3, 2, 0}},
		{[]int64{1, 2, 3}, []int{2, 1, 0}},
	} {
		pkgs := make([]repo.Package, len(tt.sizes))
		for i, n := range tt.sizes {
			pkgs[i].Size = n
		}
		if got := txn.LargestFirst(pkgs); !slices.Equal(got, tt.want) {
			t.Errorf("sizes %v: order %v, want %v", tt.sizes, got, tt.want)
		}
	}
}

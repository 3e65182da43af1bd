package db

import (
	"fmt"
	"path/filepath"
	"pkg/pkgtest/testrepo"
	"slices"
	"testing"
)

// BenchmarkCommitMany commits n packages of two files each in one Commit, as an install of
// an n-deep dependency chain does: its cost must grow with n, not n².
func BenchmarkCommitMany(b *testing.B) {
	for _, n := range []int{12500, 25000, 50000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ps := make([]*Record, n)
			for i := range ps {
				ps[i] = &Record{Name: fmt.Sprintf("p%x", uint32(i)*2654435761), Version: "1", Depends: testrepo.Requires(fmt.Sprintf("d%d", i))}
			}
			files := []File{{Path: "bin", Type: '5', Mode: 0o755}, {Path: "bin/x", Type: '0', Mode: 0o755, Size: 10}}
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				d := open(b, filepath.Join(b.TempDir(), "db"))
				ls := make([]*FileList, n)
				for i := range ls {
					l, err := d.WriteFiles(slices.Values(files))
					if err != nil {
						b.Fatal(err)
					}
					ls[i] = l
				}
				b.StartTimer()
				if err := d.Commit(ps, ls, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

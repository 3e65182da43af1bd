package install

import (
	"archive/tar"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"pkg/internal/testfs"
	"pkg/tarutil"
)

// BenchmarkStage measures the per-file install path: a tree of 2,000 files of 100 B to
// 12 KiB in 40 directories staged from a cached tar, on XFS when it can be mounted and on
// the temporary directory's filesystem otherwise. allocs/file is what the per-file path costs
// the garbage collector.
func BenchmarkStage(b *testing.B) {
	for _, fs := range []string{"tmp", "xfs"} {
		b.Run(fs, func(b *testing.B) {
			base := b.TempDir()
			if fs == "xfs" {
				base = testfs.Mount(b, "xfs")
			}
			benchStage(b, base)
		})
	}
}

func benchStage(b *testing.B, base string) {
	const files = 2000
	var entries []entry
	for i := range files {
		dir := fmt.Sprintf("d%02d/", i%40)
		if i < 40 {
			entries = append(entries, entry{name: dir, typ: tar.TypeDir, mode: 0o755})
		}
		entries = append(entries, entry{name: fmt.Sprintf("%sf%d", dir, i), typ: tar.TypeReg, mode: 0o644, data: string(make([]byte, 100+i*6))})
	}
	src, err := os.Open(alignedTar(b, base, entries))
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	members, err := tarutil.Scan(src)
	if err != nil {
		b.Fatal(err)
	}
	data, err := mapFile(src)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Munmap(data)
	b.ReportAllocs()
	var before, after runtime.MemStats
	allocs := uint64(0)
	for i := 0; b.Loop(); i++ {
		dir := filepath.Join(base, fmt.Sprint("stage", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		runtime.ReadMemStats(&before)
		s, err := newStager(src, data, dir, 0o022)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.stage(members); err != nil {
			b.Fatal(err)
		}
		s.close()
		runtime.ReadMemStats(&after)
		allocs += after.Mallocs - before.Mallocs
	}
	b.ReportMetric(float64(allocs)/float64(b.N*files), "allocs/file")
}

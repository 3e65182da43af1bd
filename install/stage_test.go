package install

import (
	"archive/tar"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"pkg/internal/testfs"
)

// BenchmarkStage measures the per-file install path: a tree of 2,000 files of 100 B to
// 12 KiB in 40 directories staged from a cached tar, on XFS when it can be mounted and on
// the temporary directory's filesystem otherwise. allocs/file is what the per-file path costs
// the garbage collector. Each runs with the members' modification times set (mtime), as
// installs do, and without (none), to show what setting them costs a file.
func BenchmarkStage(b *testing.B) {
	for _, fs := range []string{"tmp", "xfs"} {
		b.Run(fs, func(b *testing.B) {
			base := b.TempDir()
			if fs == "xfs" {
				base = testfs.Mount(b, "xfs")
			}
			for _, times := range []string{"mtime", "none"} {
				b.Run(times, func(b *testing.B) { benchStage(b, base, times == "none") })
			}
		})
	}
}

func benchStage(b *testing.B, base string, noTimes bool) {
	const files = 2000
	var entries []entry
	for i := range files {
		dir := fmt.Sprintf("d%02d/", i%40)
		if i < 40 {
			entries = append(entries, entry{name: dir, typ: tar.TypeDir, mode: 0o755})
		}
		entries = append(entries, entry{name: fmt.Sprintf("%sf%d", dir, i), typ: tar.TypeReg, mode: 0o644, data: string(make([]byte, 100+i*6))})
	}
	src, members, size := scannedTar(b, base, entries)
	b.ReportAllocs()
	var before, after runtime.MemStats
	allocs := uint64(0)
	for b.Loop() {
		dir, err := os.MkdirTemp(base, "stage")
		if err != nil {
			b.Fatal(err)
		}
		runtime.ReadMemStats(&before)
		s, err := stagerAt(context.Background(), src, size, dir, 0o022)
		if err != nil {
			b.Fatal(err)
		}
		s.noTimes = noTimes
		if err := s.stage(members); err != nil {
			b.Fatal(err)
		}
		s.close()
		runtime.ReadMemStats(&after)
		allocs += after.Mallocs - before.Mallocs
		b.StopTimer()
		removeTree(dir)
		b.StartTimer()
	}
	b.ReportMetric(float64(allocs)/float64(b.N*files), "allocs/file")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*files)/1e3, "µs/file")
}

// TestStageMethods stages files of sizes around the block size with each method forced,
// with and without the kernel copying small files and tails, on each filesystem, and
// compares every file with its member.
func TestStageMethods(t *testing.T) {
	sizes := []int{0, 1, 511, 4095, 4096, 4097, 8191, 12293, 300000, 1<<20 + 3}
	entries := []entry{{name: "d/", typ: tar.TypeDir, mode: 0o755}}
	for i, n := range sizes {
		data := make([]byte, n)
		for j := range data {
			data[j] = byte(i + j*7)
		}
		entries = append(entries, entry{name: fmt.Sprintf("d/f%d", n), typ: tar.TypeReg, mode: 0o644, data: string(data)})
	}
	for _, kind := range []string{"tmp", "xfs", "btrfs", "xfs16k"} {
		t.Run(kind, func(t *testing.T) {
			base := t.TempDir()
			if kind != "tmp" {
				base = testfs.Mount(t, kind)
			}
			src, members, size := scannedTar(t, base, entries)
			for i, method := range []Method{Clone, CopyFileRange, Copy, Clone, CopyFileRange} {
				if method == Clone && kind == "tmp" {
					continue
				}
				buffered := i >= 3 // as after sendfile or copy_file_range refused a small copy
				dir := filepath.Join(base, fmt.Sprint(method, i))
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				s, err := stagerAt(context.Background(), src, size, dir, 0o022)
				if err != nil {
					t.Fatal(err)
				}
				s.methods = []Method{method}
				s.noKernelCopy.Store(buffered)
				err = s.stage(members)
				s.close()
				if err != nil {
					t.Fatalf("%s: %v", method, err)
				}
				var total int64
				for _, e := range entries[1:] {
					total += int64(len(e.data))
					if got := readFile(t, filepath.Join(dir, e.name)); got != e.data {
						t.Errorf("%s: %s differs (%d bytes, want %d)", method, e.name, len(got), len(e.data))
					}
				}
				if s.method != method || s.cloned.Load()+s.copied.Load() != total {
					t.Errorf("%s: method %s, %d cloned + %d copied, want %d bytes", method, s.method,
						s.cloned.Load(), s.copied.Load(), total)
				}
			}
		})
	}
}

// TestStageUntracked stages more files than maxTracked, which are left to the commit's
// syncfs, and a few, whose write-back is waited for: each tree must be whole, tracked as it
// should be, and every file it wrote closed.
func TestStageUntracked(t *testing.T) {
	for _, kind := range []string{"xfs", "btrfs"} {
		t.Run(kind, func(t *testing.T) {
			base := testfs.Mount(t, kind)
			skipUntracked(t, base)
			for _, n := range []int{maxTracked + 1, 10} {
				entries := []entry{{name: "d/", typ: tar.TypeDir, mode: 0o755}}
				for i := range n {
					entries = append(entries, entry{name: fmt.Sprintf("d/f%d", i), typ: tar.TypeReg, mode: 0o644, data: fmt.Sprint(i)})
				}
				src, members, size := scannedTar(t, base, entries)
				dir := filepath.Join(base, fmt.Sprint("tree", n))
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				fds := openFds(t)
				s, err := stagerAt(context.Background(), src, size, dir, 0o022)
				if err != nil {
					t.Fatal(err)
				}
				err = s.stage(members)
				s.close()
				if err != nil {
					t.Fatal(err)
				}
				if now := openFds(t); now != fds {
					t.Errorf("%d files: %d descriptors open after staging, %d before", n, now, fds)
				}
				if want := n <= maxTracked; s.tracked != want {
					t.Errorf("%d files: tracked %v, want %v", n, s.tracked, want)
				}
				for _, e := range entries[1:] {
					if got := readFile(t, filepath.Join(dir, e.name)); got != e.data {
						t.Fatalf("%d files: %s holds %q, want %q", n, e.name, got, e.data)
					}
				}
			}
		})
	}
}

// openFds counts the process's open file descriptors.
func openFds(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}

// TestFlushes checks which filesystems write an untracked tree back while it is staged
// (the flusher): XFS does, btrfs does not, where each syncfs commits a transaction that
// holds the workers back and the commit's one syncfs writes the tree instead.
func TestFlushes(t *testing.T) {
	for _, c := range []struct {
		fs   string
		want bool
	}{{"xfs", true}, {"btrfs", false}} {
		t.Run(c.fs, func(t *testing.T) {
			base := testfs.Mount(t, c.fs)
			src, _, size := scannedTar(t, base, []entry{{name: "f", typ: tar.TypeReg, mode: 0o644, data: "x"}})
			dir := filepath.Join(base, "stage")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			s, err := stagerAt(context.Background(), src, size, dir, 0o022)
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			if s.flushes != c.want {
				t.Errorf("flushes = %v on %s, want %v", s.flushes, c.fs, c.want)
			}
		})
	}
}

package tarutil

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

var benchCases = []struct {
	name    string
	n, size int
}{
	{"30000x1KiB", 30000, 1 << 10},
	{"40x8MiB", 40, 8 << 20},
}

// benchTar returns an in-memory tar of n files of size bytes in 100 directories.
func benchTar(b *testing.B, n, size int) []byte {
	b.Helper()
	data := content("bench", size)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i := range n {
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: fmt.Sprintf("d%02d/file%05d", i%100, i), Mode: 0o644, Size: int64(size), ModTime: testTime}
		if err := tw.WriteHeader(hdr); err != nil {
			b.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			b.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func tempFile(b *testing.B) *os.File {
	b.Helper()
	f, err := os.Create(filepath.Join(b.TempDir(), "out.tar"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}

func rewind(b *testing.B, f *os.File) {
	if err := f.Truncate(0); err != nil {
		b.Fatal(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		b.Fatal(err)
	}
}

// allocated returns the bytes allocated by the program so far, and its GC cycles.
func allocated() (uint64, uint32) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc, ms.NumGC
}

func BenchmarkAlign(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			in := benchTar(b, bc.n, bc.size)
			f := tempFile(b)
			// One conversion first fills the buffer pools, as in a process converting
			// many archives.
			st, err := Align(f, bytes.NewReader(in), Limits{})
			if err != nil {
				b.Fatal(err)
			}
			members := len(st.Members) // files and their synthesized directories
			b.SetBytes(int64(bc.n) * int64(bc.size))
			b.ReportAllocs()
			bytes0, gc0 := allocated()
			for b.Loop() {
				rewind(b, f)
				if _, err := Align(f, bytes.NewReader(in), Limits{}); err != nil {
					b.Fatal(err)
				}
			}
			bytes1, gc1 := allocated()
			b.ReportMetric(float64(bytes1-bytes0)/float64(b.N*members), "B/member")
			b.ReportMetric(float64(gc1-gc0)/float64(b.N), "GCs/op")
		})
	}
}

// BenchmarkCopyBaseline copies as many bytes as BenchmarkAlign reads to a
// file, through a buffer of the same size, for comparison.
func BenchmarkCopyBaseline(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			in := benchTar(b, bc.n, bc.size)
			f := tempFile(b)
			buf := make([]byte, copyBufSize)
			b.SetBytes(int64(bc.n) * int64(bc.size))
			b.ReportAllocs()
			for b.Loop() {
				rewind(b, f)
				if _, err := io.CopyBuffer(struct{ io.Writer }{f}, struct{ io.Reader }{bytes.NewReader(in)}, buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDigestBaseline computes the sha256 of as many bytes as BenchmarkAlign hashes (the
// members' data), from one copy buffer that stays in cache: the compute cost of Align's
// digests, which come on top of the copy's work on whichever core hashes them.
func BenchmarkDigestBaseline(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			n := bc.n * bc.size
			buf := content("digest", copyBufSize)
			var sum [sha256.Size]byte
			b.SetBytes(int64(bc.n) * int64(bc.size))
			b.ReportAllocs()
			for b.Loop() {
				h := sha256.New()
				for off := 0; off < n; off += copyBufSize {
					h.Write(buf[:min(copyBufSize, n-off)])
				}
				h.Sum(sum[:0])
			}
		})
	}
}

func BenchmarkScan(b *testing.B) {
	f := tempFile(b)
	if _, err := Align(f, bytes.NewReader(benchTar(b, 30000, 1<<10)), Limits{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		ms, err := Scan(f)
		if err != nil || len(ms) != 30100 {
			b.Fatalf("Scan: %d members, %v", len(ms), err)
		}
	}
}

// BenchmarkWriteOffset writes 320 MiB to a file in copyBufSize writes that start on
// copyBufSize boundaries, and 4 KiB past them: what copyLarge's chunking is for.
func BenchmarkWriteOffset(b *testing.B) {
	for _, bc := range []struct {
		name  string
		start int64
	}{{"boundary", 0}, {"4KiB-past", 4 << 10}} {
		b.Run(bc.name, func(b *testing.B) {
			f := tempFile(b)
			buf := make([]byte, copyBufSize)
			b.ReportAllocs()
			const total = 320 << 20
			b.SetBytes(total)
			for b.Loop() {
				rewind(b, f)
				for off := bc.start; off < total+bc.start; off += copyBufSize {
					if _, err := f.WriteAt(buf, off); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

package fetch

import (
	"bytes"
	"os"
	"testing"
	"time"
)

// TestFileWriter writes a file of an unaligned size in odd pieces, written or filled in
// lent buffers, direct where the temporary directory allows it and through the page cache
// on tmpfs.
func TestFileWriter(t *testing.T) {
	data := somewhatRandom(3*fileBufSize + 12345)
	dirs := []string{t.TempDir()}
	if info, err := os.Stat("/dev/shm"); err == nil && info.IsDir() {
		dirs = append(dirs, "/dev/shm")
	}
	for i := range 2 * len(dirs) {
		dir, asked := dirs[i/2], i%2 == 0
		f, err := os.CreateTemp(dir, "filewriter-*")
		if err != nil {
			t.Fatal(err)
		}
		defer os.Remove(f.Name())
		w := newFileWriter(f, asked)
		direct := w.isDirect()
		t.Logf("%s: direct %v", dir, direct)
		for i, rest := 0, data; len(rest) > 0; i++ {
			n := min(len(rest), 1+len(rest)%70001)
			if i%2 == 1 { // every other piece through Lend and Fill
				b := w.Lend(n)
				n = copy(b, rest)
				if err := w.Fill(n); err != nil {
					t.Fatal(err)
				}
			} else if _, err := w.Write(rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		got, err := os.ReadFile(f.Name())
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s (direct %v): read back %d bytes, %v; want the %d written", dir, direct, len(got), err, len(data))
		}
	}
}

// TestFileWriterNoTruncate checks that Close leaves alone a file that has its size already:
// an ftruncate, even to the file's own size, is a flush of all its data on XFS (see Close).
// It shows as the file's mtime, which ftruncate sets and this test set in the past.
func TestFileWriterNoTruncate(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "filewriter-*")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	past := time.Unix(1e9, 0)
	if err := os.Chtimes(f.Name(), past, past); err != nil {
		t.Fatal(err)
	}
	if err := newFileWriter(f, false).Close(); err != nil {
		t.Fatal(err)
	}
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() != 0 || !info.ModTime().Equal(past) {
		t.Errorf("after Close of an empty file: size %d, mtime %v; want 0 and %v untouched", info.Size(), info.ModTime(), past)
	}
}

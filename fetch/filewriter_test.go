package fetch

import (
	"bytes"
	"os"
	"testing"
)

// TestFileWriter writes a file of an unaligned size in odd pieces, direct where the
// temporary directory allows it and through the page cache on tmpfs.
func TestFileWriter(t *testing.T) {
	data := somewhatRandom(3*fileBufSize + 12345)
	dirs := []string{t.TempDir()}
	if info, err := os.Stat("/dev/shm"); err == nil && info.IsDir() {
		dirs = append(dirs, "/dev/shm")
	}
	for _, dir := range dirs {
		f, err := os.CreateTemp(dir, "filewriter-*")
		if err != nil {
			t.Fatal(err)
		}
		defer os.Remove(f.Name())
		w := newFileWriter(f, true)
		direct := w.isDirect()
		t.Logf("%s: direct %v", dir, direct)
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 1+len(rest)%70001)
			if _, err := w.Write(rest[:n]); err != nil {
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

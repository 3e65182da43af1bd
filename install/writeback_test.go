package install

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"pkg/internal/testfs"
)

// TestFlusher checks that the flusher writes back what was written before it counted
// enough, and only then: a file written before is on the disk after a power cut once the
// flusher finished; one written with too little counted is not.
func TestFlusher(t *testing.T) {
	for _, tc := range []struct {
		name       string
		wrote      func(f *flusher)
		wantOnDisk bool
	}{
		{"bytes", func(f *flusher) { f.wrote(flushBytes) }, true},
		{"files", func(f *flusher) {
			for range flushFiles {
				f.wrote(1)
			}
		}, true},
		{"too little", func(f *flusher) { f.wrote(flushBytes / 2) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mnt := testfs.Mount(t, "xfs")
			data := bytes.Repeat([]byte("pkg"), 100_000)
			path := filepath.Join(mnt, "f")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			fd, err := unix.Open(mnt, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			f := newFlusher(fd, mnt)
			unix.Close(fd)
			tc.wrote(f)
			if err := f.finish(); err != nil {
				t.Fatal(err)
			}
			if err := testfs.Shutdown(mnt); err != nil {
				testfs.Unavailable(t, err.Error())
			}
			testfs.Remount(t, mnt)
			got, _ := os.ReadFile(path)
			if onDisk := bytes.Equal(got, data); onDisk != tc.wantOnDisk {
				t.Errorf("after a power cut the file has %d of %d bytes; want it whole: %v", len(got), len(data), tc.wantOnDisk)
			}
		})
	}
}

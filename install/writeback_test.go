package install

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"pkg/internal/fiemap"
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

// TestWritebackBtrfs: on btrfs, a staged tree of more files than are waited for one by one
// has the write-back of each file it wrote started by the time staging ends, not left to the
// commit's syncfs: each staged file's data is already the inline extent write-back makes,
// none is only in the page cache, as no extent or a delayed one (FIEMAP without its sync flag).
func TestWritebackBtrfs(t *testing.T) {
	base := testfs.Mount(t, "btrfs")
	skipUntracked(t, base)
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	es := []entry{{name: "d/", typ: tar.TypeDir, mode: 0o755}}
	for i := range maxTracked + 1 {
		es = append(es, entry{name: fmt.Sprintf("d/%d", i), typ: tar.TypeReg, mode: 0o644, data: randomData(uint64(i), 100)})
	}
	tarPath := alignedTar(t, base, es)
	staged := stageMembers(t, r, tarPath, prefixPkg("a", "1"), digestsOf(t, tarPath))
	defer r.Discard(staged)
	var m fiemap.Map
	files, delayed := 0, 0
	err := filepath.WalkDir(r.path(".pkg/staging", staged.name), func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		files++
		written := false
		err = m.Each(int(f.Fd()), 0, math.MaxUint64, 0, func(e fiemap.Extent) bool {
			written = e.Flags&fiemap.ExtentDelalloc == 0
			return written
		})
		if !written {
			delayed++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if files != maxTracked+1 || delayed != 0 {
		t.Errorf("%d of %d staged files (want %d) still wait for their write-back", delayed, files, maxTracked+1)
	}
}

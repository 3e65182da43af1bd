package durable

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"pkg/internal/testfs"
)

// TestCommit checks that XFS and btrfs are told apart, each written file waited for, and
// the tree renamed into a directory committed with it, without a syncfs.
func TestCommit(t *testing.T) {
	for _, tc := range []struct {
		fs   string
		want kind
	}{{"xfs", journal}, {"btrfs", btrfs}} {
		t.Run(tc.fs, func(t *testing.T) {
			if tc.want == btrfs && !waitsOrdered() {
				t.Skip("btrfs is synced whole under this kernel: TestCommitOldKernel")
			}
			dir := filepath.Join(testfs.Mount(t, tc.fs), "tree")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			f, err := os.Create(filepath.Join(dir, "f"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			files := ForFS(int(f.Fd()))
			if files.kind != tc.want || !files.Tracks() {
				t.Fatalf("ForFS = %v, want %v", files.kind, tc.want)
			}
			if _, err := f.WriteString("data"); err != nil {
				t.Fatal(err)
			}
			files.Start(int(f.Fd()))
			if err := files.Wait(int(f.Fd())); err != nil {
				t.Fatal(err)
			}
			into := filepath.Join(filepath.Dir(dir), "pkgs")
			if err := os.Mkdir(into, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(dir, filepath.Join(into, "tree")); err != nil {
				t.Fatal(err)
			}
			if err := commitPath(into); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestCommitOldKernel checks that btrfs under a kernel whose FIEMAP_FLAG_SYNC does not wait
// for ordered extents is not tracked file by file, so that Commit flushes it whole
// (syncfs), but that Start still starts a file's write-back: 4 MiB written and started
// reach the device well before the 30 s after which the kernel's flusher would write
// them.
func TestCommitOldKernel(t *testing.T) {
	mnt := testfs.Mount(t, "btrfs")
	was := waitsOrdered
	waitsOrdered = func() bool { return false }
	t.Cleanup(func() { waitsOrdered = was })
	f, err := os.Open(mnt)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := ForFS(int(f.Fd()))
	if files.kind != startOnly || files.Tracks() || files.Ordered() || !files.Starts() {
		t.Errorf("ForFS under an old kernel = %v, want startOnly", files.kind)
	}
	if err := Commit(f); err != nil {
		t.Fatal(err)
	}

	const size = 4 << 20
	data, err := os.Create(filepath.Join(mnt, "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer data.Close()
	if _, err := data.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	before := sectorsWritten(t, mnt)
	files.Start(int(data.Fd()))
	deadline := time.Now().Add(10 * time.Second)
	for sectorsWritten(t, mnt)-before < size/512 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of the %d sectors started reached the device in 10 s", sectorsWritten(t, mnt)-before, size/512)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sectorsWritten returns the sectors written by the block device mounted at mnt (its
// stat's seventh field).
func sectorsWritten(t *testing.T, mnt string) uint64 {
	t.Helper()
	b, err := os.ReadFile("/sys/class/block/" + testfs.Device(t, mnt) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(b))
	if len(fields) < 7 {
		t.Fatalf("block device stat %q", b)
	}
	n, err := strconv.ParseUint(fields[6], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReleaseAtLeast reads kernel releases as uname gives them.
func TestReleaseAtLeast(t *testing.T) {
	for _, tc := range []struct {
		release string
		want    bool
	}{
		{"6.1.0-18-amd64", true},
		{"6.18.44-fc-v1147", true},
		{"7.0", true},
		{"6.0.12-arch1-1", false},
		{"5.15.0-91-generic", false},
		{"5.19", false},
		{"6", false},
		{"", false},
		{"x.y", false},
		{"6.1rc3", true},
	} {
		if got := releaseAtLeast(tc.release, 6, 1); got != tc.want {
			t.Errorf("releaseAtLeast(%q, 6, 1) = %v, want %v", tc.release, got, tc.want)
		}
	}
}

// TestCommitLostKick checks that a btrfs commit whose START_SYNC waits on (its wake of the
// transaction thread lost) commits by itself: the fake START_SYNC returns only once the
// superblock on the image says a later transaction is on the disk.
func TestCommitLostKick(t *testing.T) {
	mnt := testfs.Mount(t, "btrfs")
	img := filepath.Join(filepath.Dir(mnt), "btrfs.img")
	before := superGeneration(t, img)
	real := startSync
	t.Cleanup(func() { startSync = real })
	const within = 10 * time.Second // well under the 30 s commit interval a lost kick waits out
	start := time.Now()
	startSync = func(int) (uint64, error) {
		for time.Since(start) < within {
			if g := superGeneration(t, img); g > before {
				return g, nil
			}
			time.Sleep(10 * time.Millisecond)
		}
		return 0, errors.New("nothing committed: the kick was lost")
	}
	if err := os.Mkdir(filepath.Join(mnt, "tree"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := commitPath(mnt); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > within {
		t.Errorf("the commit took %v, want under %v: it waited for the transaction thread", d, within)
	}
	if g := superGeneration(t, img); g <= before {
		t.Errorf("superblock generation %d after the commit, want over %d", g, before)
	}
}

// superGeneration reads the generation of the primary superblock of the btrfs image img
// (64 KiB in; the field follows csum, fsid, bytenr, flags and magic).
func superGeneration(t *testing.T, img string) uint64 {
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b [8]byte
	if _, err := f.ReadAt(b[:], 64<<10+0x48); err != nil {
		t.Fatal(err)
	}
	return binary.LittleEndian.Uint64(b[:])
}

// TestCommitOther checks that a filesystem without a known way is synced whole.
func TestCommitOther(t *testing.T) {
	dir := testfs.Tmpfs(t, 1<<20)
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if files := ForFS(int(f.Fd())); files.Tracks() || files.Starts() {
		t.Errorf("tmpfs: ForFS = %v, want syncAll", files.kind)
	}
	if err := commitPath(dir); err != nil {
		t.Fatal(err)
	}
}

// commitPath is Commit of the directory at dir.
func commitPath(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return Commit(f)
}

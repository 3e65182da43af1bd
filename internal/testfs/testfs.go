// Package testfs gives tests real filesystems that can share extents: a fresh loop-mounted
// XFS (reflink=1) or btrfs image, unmounted when the test ends, and FIEMAP to prove that a
// file's extents are shared. It is for tests only.
package testfs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// imageSize is the sparse image behind each mount; only what tests write takes disk space.
const imageSize = 1 << 30 // 1 GiB

var mkfs = map[string][]string{
	"xfs": {"mkfs.xfs", "-q", "-f", "-m", "reflink=1"},
	// Blocks larger than the 4 KiB the aligned tar aligns to (kernel 6.12 and later).
	"xfs16k": {"mkfs.xfs", "-q", "-f", "-m", "reflink=1", "-b", "size=16384"},
	"btrfs":  {"mkfs.btrfs", "-q", "-f"},
	"ext4":   {"mkfs.ext4", "-q", "-F"},
	// fsync commits the inodes and names changed since the journal's last commit in a
	// fast commit where it can, rather than the whole journal (Linux 5.10 and later).
	"ext4fc": {"mkfs.ext4", "-q", "-F", "-O", "fast_commit"},
	// Directories may fold names (chattr +F), where the kernel has CONFIG_UNICODE.
	"ext4casefold": {"mkfs.ext4", "-q", "-F", "-O", "casefold"},
	"vfat":         {"mkfs.vfat"},
}

// Mount returns the root of a fresh filesystem of kind "xfs", "xfs16k", "btrfs", "ext4",
// "ext4fc", "ext4casefold" or "vfat", unmounted and deleted when t ends. It skips t when
// that is impossible here (not root, no mkfs), except under CI=true, where it fails.
func Mount(t testing.TB, kind string) string {
	t.Helper()
	args, ok := mkfs[kind]
	if !ok {
		t.Fatalf("testfs: unknown filesystem %q", kind)
	}
	if os.Geteuid() != 0 {
		Unavailable(t, "testfs: mounting "+kind+" needs root")
	}
	if _, err := exec.LookPath(args[0]); err != nil {
		Unavailable(t, "testfs: "+args[0]+" not installed (apt-get install xfsprogs btrfs-progs e2fsprogs dosfstools)")
	}
	dir := t.TempDir()
	img, mnt := filepath.Join(dir, kind+".img"), filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, imageSize); err != nil {
		t.Fatal(err)
	}
	Run(t, "", append(args, img)...)
	Run(t, "", "mount", "-o", "loop", img, mnt)
	unmountAtEnd(t, mnt)
	return mnt
}

// Folding returns an empty directory that folds names, unmounted when t ends: a casefold
// directory (chattr +F) of a fresh ext4, or else the root of a fresh vfat. It skips t,
// also under CI=true, when the kernel can make neither (no CONFIG_UNICODE, no vfat), saying
// so; when it can but tools or privileges are missing, it skips or fails as Mount does.
func Folding(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat("/sys/fs/ext4/features/casefold"); err == nil {
		dir := filepath.Join(Mount(t, "ext4casefold"), "folding")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		Run(t, "", "chattr", "+F", dir)
		return dir
	}
	if b, err := os.ReadFile("/proc/filesystems"); err == nil && strings.Contains(string(b), "\tvfat\n") {
		return Mount(t, "vfat")
	}
	t.Skip("testfs: this kernel can make no directory that folds names: ext4 without casefold (CONFIG_UNICODE), no vfat in /proc/filesystems")
	return ""
}

// Tmpfs returns the root of a fresh tmpfs of size bytes, with options such as "nr_inodes=50"
// added, unmounted when t ends: a filesystem that runs out at a size chosen to the block.
// It skips t when not root, except under CI=true, where it fails.
func Tmpfs(t testing.TB, size int64, options ...string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		Unavailable(t, "testfs: mounting tmpfs needs root")
	}
	mnt := t.TempDir()
	opts := strings.Join(append([]string{fmt.Sprintf("size=%d", size)}, options...), ",")
	Run(t, "", "mount", "-t", "tmpfs", "-o", opts, "tmpfs", mnt)
	unmountAtEnd(t, mnt)
	return mnt
}

// unmountAtEnd unmounts mnt when t ends, lazily if it is still busy.
func unmountAtEnd(t testing.TB, mnt string) {
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("testfs: umount %s: %v: %s", mnt, err, out)
			exec.Command("umount", "-l", mnt).Run()
		}
	})
}

// Unavailable skips t for why, or fails it under CI=true, where every test must run.
func Unavailable(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why + " (CI=true: this test must run)")
	}
	t.Skip(why)
}

// NeedTools calls Unavailable unless every tool is on PATH.
func NeedTools(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			Unavailable(t, tool+" not installed")
		}
	}
}

// Run runs a command in dir ("" for the test's own), failing t with its output if it fails.
func Run(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// OldFiles writes each name, a path relative to dir, with its name as content, two days
// old: past every age at which pkg removes what it made in a cache.
func OldFiles(t testing.TB, dir string, names ...string) {
	t.Helper()
	old := time.Now().Add(-48 * time.Hour)
	for _, name := range names {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// Rewrite writes every byte of the file at path again and syncs it, so that none of its
// blocks is allocated but unwritten (fallocate's): a first write to one is logged, which
// makes an fdatasync force the journal that a file used for a while would not.
func Rewrite(t testing.TB, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

// FIEMAP, from linux/fiemap.h and linux/fs.h.
const (
	fsIocFiemap       = 0xC020660B
	fiemapFlagSync    = 0x1
	fiemapExtentLast  = 0x1
	fiemapExtentShare = 0x2000
	fiemapMaxExtents  = 64
)

type fiemapExtent struct {
	Logical, Physical, Length uint64
	_                         [2]uint64
	Flags                     uint32
	_                         [3]uint32
}

type fiemap struct {
	Start, Length                 uint64
	Flags, Mapped, ExtentCount, _ uint32
	Extents                       [fiemapMaxExtents]fiemapExtent
}

// SharedBytes returns how many bytes of the file at path lie in extents the filesystem
// reports as shared (FIEMAP_EXTENT_SHARED), out of its mapped bytes.
func SharedBytes(path string) (shared, mapped int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	var start uint64
	for {
		fm := fiemap{Start: start, Length: ^uint64(0) - start, Flags: fiemapFlagSync, ExtentCount: fiemapMaxExtents}
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, f.Fd(), fsIocFiemap, uintptr(unsafe.Pointer(&fm))); e != 0 {
			return 0, 0, &os.PathError{Op: "fiemap", Path: path, Err: e}
		}
		if fm.Mapped == 0 {
			return shared, mapped, nil
		}
		for _, e := range fm.Extents[:fm.Mapped] {
			mapped += int64(e.Length)
			if e.Flags&fiemapExtentShare != 0 {
				shared += int64(e.Length)
			}
			if e.Flags&fiemapExtentLast != 0 {
				return shared, mapped, nil
			}
			start = e.Logical + e.Length
		}
	}
}

// fsIocShutdown is FS_IOC_SHUTDOWN (XFS_IOC_GOINGDOWN, EXT4_IOC_SHUTDOWN: _IOR('X', 125,
// __u32)); with XFS_FSOP_GOING_FLAGS_NOLOGFLUSH the filesystem stops at once, writing
// nothing more, not even its journal's buffered commits, as a power cut would leave it
// (xfstests' godown); with LOGFLUSH it writes those commits first (ext4's data=ordered
// writes the data they order before them), and no other dirty page.
const (
	fsIocShutdown      = 0x8004587D
	shutdownLogFlush   = 0x1
	shutdownNoLogFlush = 0x2
)

// Shutdown stops the filesystem mounted at mnt as a power cut would: every write not yet
// on the device (dirty pages, journal commits not yet forced) is lost, and every later
// call on it fails with EIO, until Remount. It returns the ioctl's error, ENOTTY or
// EOPNOTSUPP where the filesystem cannot shut down.
func Shutdown(mnt string) error {
	f, err := os.Open(mnt)
	if err != nil {
		return err
	}
	defer f.Close()
	return ShutdownFile(f, false)
}

// ShutdownFile is Shutdown of the filesystem that f, its root directory, is open on,
// through no new open (so a test may call it while it holds the opens of that filesystem).
// With logged, the journal's buffered commits reach the device first: a power cut just
// after the journal was written, which keeps every metadata change made so far and the
// data write-back had not written.
func ShutdownFile(f *os.File, logged bool) error {
	flags := uint32(shutdownNoLogFlush)
	if logged {
		flags = shutdownLogFlush
	}
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, f.Fd(), fsIocShutdown, uintptr(unsafe.Pointer(&flags))); e != 0 {
		return &os.PathError{Op: "ioctl FS_IOC_SHUTDOWN", Path: f.Name(), Err: e}
	}
	return nil
}

// Remount unmounts mnt, a mount Mount made, and mounts its image again, which replays the
// journal as the first mount after a crash does.
func Remount(t testing.TB, mnt string) {
	t.Helper()
	imgs, _ := filepath.Glob(filepath.Join(filepath.Dir(mnt), "*.img"))
	if len(imgs) != 1 {
		t.Fatalf("testfs: %s is not a mount of Mount", mnt)
	}
	Run(t, "", "umount", mnt)
	Run(t, "", "mount", "-o", "loop", imgs[0], mnt)
}

// Device returns the name of the block device mounted at mnt, as /sys/class/block and
// /sys/fs/ext4 name it ("loop3"): a Mount's loop device, found by /proc/self/mounts,
// since btrfs's st_dev is a device of its own, not the disk's.
func Device(t testing.TB, mnt string) string {
	t.Helper()
	mounts, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	dev := ""
	for line := range strings.Lines(string(mounts)) {
		if f := strings.Fields(line); len(f) > 1 && f[1] == mnt {
			dev = filepath.Base(f[0])
		}
	}
	if dev == "" {
		t.Fatalf("testfs: nothing is mounted at %s", mnt)
	}
	return dev
}

// Extent is a range of a file's data at a place on its filesystem.
type Extent struct {
	Logical, Physical, Length int64
	Shared                    bool // FIEMAP_EXTENT_SHARED
}

// Extents returns the extents of the file at path that overlap [off, off+n), in order.
func Extents(path string, off, n int64) ([]Extent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Extent
	for start, end := uint64(off), uint64(off+n); start < end; {
		fm := fiemap{Start: start, Length: end - start, Flags: fiemapFlagSync, ExtentCount: fiemapMaxExtents}
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, f.Fd(), fsIocFiemap, uintptr(unsafe.Pointer(&fm))); e != 0 {
			return nil, &os.PathError{Op: "fiemap", Path: path, Err: e}
		}
		if fm.Mapped == 0 {
			break
		}
		for _, e := range fm.Extents[:fm.Mapped] {
			out = append(out, Extent{int64(e.Logical), int64(e.Physical), int64(e.Length), e.Flags&fiemapExtentShare != 0})
			start = e.Logical + e.Length
			if e.Flags&fiemapExtentLast != 0 {
				return out, nil
			}
		}
	}
	return out, nil
}

// PhysicalAt returns where on the filesystem the byte at logical offset at lies, in a file
// whose extents are es, or -1 where es map nothing there.
func PhysicalAt(es []Extent, at int64) int64 {
	for _, e := range es {
		if at >= e.Logical && at < e.Logical+e.Length {
			return e.Physical + at - e.Logical
		}
	}
	return -1
}

// SyncCalls counts, by name, the fsync, fdatasync and syncfs calls in lines (strace's
// output, traced with -y) made on a descriptor whose path starts with dir.
func SyncCalls(lines []string, dir string) map[string]int {
	calls := map[string]int{}
	for _, line := range lines {
		for _, name := range []string{"fsync", "fdatasync", "syncfs"} {
			if strings.Contains(line, " "+name+"(") && strings.Contains(line, "<"+dir) { // -y: the fd's path
				calls[name]++
			}
		}
	}
	return calls
}

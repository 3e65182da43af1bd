package durable

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"pkg/internal/statfs"
)

// FS flushes the whole filesystem holding path, with syncfs(2).
func FS(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return SyncFS(f)
}

// SyncFS flushes the whole filesystem holding the open file f, with syncfs(2).
func SyncFS(f *os.File) error {
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return &os.PathError{Op: "syncfs", Path: f.Name(), Err: err}
	}
	return nil
}

// kind is how a filesystem makes a tree durable without flushing what others wrote to it.
type kind int

const (
	// syncAll: no way known; syncfs(2) flushes the whole filesystem.
	syncAll kind = iota
	// journal (XFS; ext4 with its journal): metadata changes are transactions committed to
	// one journal in order, and an fsync(2) forces the journal up to the file's last change,
	// so every earlier transaction with it. Data is written back and waited for file by file
	// (the transactions its completion logs, the file's size and extents, then come before).
	journal
	// btrfs: metadata is committed with the transaction, which a commit writes without
	// flushing other files' delayed allocations (unless mounted flushoncommit, which only
	// adds to what it writes). A file's data is in the tree once its ordered extents have
	// completed, which FIEMAP_FLAG_SYNC waits for (waitsOrdered); page writeback alone ends
	// before that.
	btrfs
	// startOnly: btrfs before Linux 6.1, whose FIEMAP_FLAG_SYNC does not wait for the
	// ordered extents (waitsOrdered). Start writes a file back as on btrfs, so that a big
	// tree's write-back runs beside its staging, but Wait cannot make it part of the next
	// transaction: Commit takes a syncfs(2), as for syncAll.
	startOnly
)

// Files makes the data written to files of one filesystem durable, with the commit of
// Commit: Start after writing a file, Wait before the commit.
type Files struct{ kind kind }

// ForFS returns the Files of the filesystem holding the open file or directory fd.
func ForFS(fd int) Files {
	fs, err := statfs.Of(fd)
	if err != nil {
		return Files{}
	}
	switch fs.Kind {
	case statfs.XFS:
		return Files{journal}
	case statfs.Btrfs:
		if !waitsOrdered() {
			return Files{startOnly} // its Wait would not wait for the file extent items: syncfs
		}
		return Files{btrfs}
	case statfs.Ext4:
		if hasJournal(fd) {
			return Files{journal}
		}
	}
	return Files{}
}

// waitsOrdered reports whether the running kernel's btrfs waits, for FIEMAP_FLAG_SYNC, until
// the file's ordered extents have completed, which Wait needs: Linux 6.1 and later
// ("btrfs: properly flush delalloc when entering fiemap"). Before, it waited for the
// pages' write-back alone, which ends before the file extent items are inserted, so that
// a transaction commit could miss them. A release it cannot read counts as older.
var waitsOrdered = sync.OnceValue(func() bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	return releaseAtLeast(unix.ByteSliceToString(u.Release[:]), 6, 1)
})

// releaseAtLeast reports whether the kernel release r (uname -r: "6.1.0-18-amd64",
// "5.15.0-91-generic") is major.minor or later.
func releaseAtLeast(r string, major, minor int) bool {
	var x, y int
	if _, err := fmt.Sscanf(r, "%d.%d", &x, &y); err != nil {
		return false
	}
	return x > major || x == major && y >= minor
}

// hasJournal reports whether the ext2/3/4 filesystem holding fd has an internal jbd2
// journal, which the kernel lists as /proc/fs/jbd2/<device>-8 (inode 8 holds it).
func hasJournal(fd int) bool {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return false
	}
	dev, err := filepath.EvalSymlinks(fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev)))
	if err != nil {
		return false
	}
	_, err = os.Stat("/proc/fs/jbd2/" + filepath.Base(dev) + "-8")
	return err == nil
}

// TracksPath reports whether the filesystem holding path is tracked file by file
// (Files.Tracks); false where path cannot be opened. O_PATH: a FIFO's open would block,
// and ForFS needs only fstatfs and fstat (open(2)).
func TracksPath(path string) bool {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	return ForFS(fd).Tracks()
}

// Tracks reports whether Wait does anything, so that Commit commits the files waited for
// with the renames: where it does not, Commit flushes the whole filesystem (and Start
// does nothing, except on btrfs before Linux 6.1: Starts).
func (f Files) Tracks() bool { return f.kind == journal || f.kind == btrfs }

// Starts reports whether Start starts a file's write-back: where Tracks does, and on
// btrfs before Linux 6.1, whose Commit is a syncfs all the same.
func (f Files) Starts() bool { return f.kind != syncAll }

// Ordered reports whether every metadata change (a create, link, rename or unlink) reaches
// the disk in the order it was made, so that one found after a crash means every earlier
// one is there too: XFS and ext4 with its journal, whose log is written in order and
// whose fsync forces all of it up to a point. Not btrfs, whose fsync logs one inode's
// changes, and may log its directory's, ahead of the transaction that holds the rest.
func (f Files) Ordered() bool { return f.kind == journal }

// Start starts writing back the data of the open file fd (sync_file_range(2)
// SYNC_FILE_RANGE_WRITE), so that Wait finds it written or on its way. Errors are Wait's to
// report.
func (f Files) Start(fd int) {
	if f.Starts() {
		unix.SyncFileRange(fd, 0, 0, unix.SYNC_FILE_RANGE_WRITE)
	}
}

// Wait writes back the data of the open file fd and waits until it is on the disk (past
// the disk's cache only once a journal force, Commit's or the database's first fdatasync,
// or a transaction commit flushes it), reporting a write-back error.
func (f Files) Wait(fd int) error {
	switch f.kind {
	case journal:
		return unix.SyncFileRange(fd, 0, 0, unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
	case btrfs:
		return fiemapSync(fd)
	}
	return nil
}

// fiemap is struct fiemap of linux/fiemap.h, with no room for extents: the call only counts them.
type fiemap struct {
	start, length                uint64
	flags, mapped, count, unused uint32
}

const (
	fsIocFiemap    = 0xc020660b // _IOWR('f', 11, struct fiemap)
	fiemapFlagSync = 0x1        // FIEMAP_FLAG_SYNC: write back and wait first
)

var _ = [1]struct{}{}[unsafe.Sizeof(fiemap{})-32] // the kernel's struct is 32 bytes

// fiemapSync writes back fd's data and waits for its ordered extents (btrfs_fiemap does
// for FIEMAP_FLAG_SYNC), without logging the inode as an fsync would.
func fiemapSync(fd int) error {
	fm := fiemap{length: ^uint64(0), flags: fiemapFlagSync}
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), fsIocFiemap, uintptr(unsafe.Pointer(&fm)))
	if e != 0 {
		return e
	}
	return nil
}

const (
	btrfsIocStartSync = 0x80089418 // _IOR(0x94, 24, __u64): commit the running transaction, give its id
	btrfsIocWaitSync  = 0x40089416 // _IOW(0x94, 22, __u64): wait until that transaction is on the disk
)

// Commit makes durable the trees just renamed into the directory open as f, all on its
// filesystem, with the renames, and the data of their files once Files.Wait returned for
// each before the renames: on XFS and ext4, by an fsync of f, a journal force up to its
// last change (the renames); on btrfs, by one transaction commit (commitBtrfs, which
// never waits on the commit interval); elsewhere by one syncfs(2). A commit that renames
// staged trees into place after recording its intent durably needs nothing before the
// renames: a crash before Commit returned finds the intent and puts the old tree back, and
// once it returned the new trees are on the disk whole.
//
// Why that is enough on each, so that the record written afterwards never describes a tree
// that a crash could take away:
//   - XFS: a file's page write-back ends only after the transactions its completion needs
//     (unwritten extent conversion, the on-disk size, a COW remap) are committed to the
//     in-memory log, and block allocation happens before the I/O, so once Wait returned
//     every change that locates the file's data is in the log; clones and creates were
//     logged when they returned. The rename comes later, and an fsync of dir forces the log
//     up to its sequence, so every earlier transaction too, in one log write that starts
//     with a cache flush of the device: the data written before are on the media before
//     the log records that point at them.
//   - ext4 with a journal: the same, with jbd2: allocation at write-back and the unwritten
//     conversion at completion (before the pages' write-back ends) join the running
//     transaction; the rename joins the same or a later one, and fsync of dir waits for the
//     commit of that transaction, and jbd2 commits in order, each commit block written
//     after a cache flush.
//   - btrfs: Wait (FIEMAP_FLAG_SYNC) returns once the file's ordered extents completed,
//     that is once its file extent items are in the running transaction, which the rename
//     joins too; the commit writes every tree of that transaction and then the superblock,
//     after a cache flush. Others' delayed allocations are not written unless the
//     filesystem is mounted flushoncommit (which only adds to what the commit writes).
//     The syncfs commitBtrfs may do instead commits that transaction, or a later one.
func Commit(f *os.File) error {
	switch ForFS(int(f.Fd())).kind {
	case journal:
		return f.Sync()
	case btrfs:
		err := commitBtrfs(int(f.Fd()))
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.ENOTTY) && !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.EINVAL) {
			return &os.PathError{Op: "commit btrfs transaction", Path: f.Name(), Err: err}
		}
		// Refused (a seccomp filter, a kernel without these ioctls): syncfs does it too.
	}
	return SyncFS(f)
}

// startSyncPatience is how long commitBtrfs lets BTRFS_IOC_START_SYNC wait for the commit to
// start before it commits itself. START_SYNC only sets a flag and wakes btrfs's transaction
// thread, then waits for the commit to start; a wake that lands while that thread is busy
// (committing another's transaction) is lost, and the thread sleeps out the commit interval
// (30 s by default) before it sees the flag (transaction_kthread, linux 5.17 to 6.18 at least).
const startSyncPatience = 500 * time.Millisecond

// startSync is BTRFS_IOC_START_SYNC, which a test replaces with a start whose kick is lost.
var startSync = func(fd int) (uint64, error) {
	var id uint64
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), btrfsIocStartSync, uintptr(unsafe.Pointer(&id))); e != 0 {
		return 0, e
	}
	return id, nil
}

// commitBtrfs commits the running transaction of the btrfs holding fd and waits until it is
// on the disk: by START_SYNC and WAIT_SYNC, which leave others' unwritten data alone, or,
// when START_SYNC has not returned within startSyncPatience, by a syncfs, a transaction
// commit in this thread (after writing back the filesystem's dirty data) that also ends
// START_SYNC's wait.
func commitBtrfs(fd int) error {
	type started struct {
		id  uint64
		err error
	}
	done := make(chan started, 1)
	go func() {
		id, err := startSync(fd)
		done <- started{id, err}
	}()
	patience := time.NewTimer(startSyncPatience)
	defer patience.Stop()
	var s started
	select {
	case s = <-done:
	case <-patience.C:
		err := unix.Syncfs(fd)
		s = <-done // fd stays in use until START_SYNC returns, which the commit lets it do
		if err == nil || s.err != nil {
			return err
		}
	}
	if s.err != nil {
		return s.err
	}
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), btrfsIocWaitSync, uintptr(unsafe.Pointer(&s.id))); e != 0 {
		return e
	}
	return nil
}

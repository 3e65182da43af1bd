package fetch

import (
	"os"

	"golang.org/x/sys/unix"

	"pkg/tarutil"
)

// clonesTails reports whether the filesystem of the directory d clones files, in blocks of
// tarutil.Alignment, so that an install can clone a tail file where it would write the
// bytes: XFS with reflink and btrfs (measured faster there too: docs/design.md, the cache);
// and whether a tail file that is not a member's first block must be given its block before
// it is written (btrfs, which keeps a file under 2 KiB in its metadata, and copies such a
// file's data when it clones them anywhere but at offset 0).
// It clones one empty temporary file onto another (FICLONE), which a filesystem without
// remap_file_range refuses before it looks at the sizes.
func clonesTails(d *os.File) (clones, prealloc bool) {
	var st unix.Statfs_t
	if unix.Fstatfs(int(d.Fd()), &st) != nil || st.Bsize != tarutil.Alignment ||
		st.Type != unix.XFS_SUPER_MAGIC && st.Type != unix.BTRFS_SUPER_MAGIC {
		return false, false
	}
	var fds [2]int
	for i := range fds {
		fd, err := unix.Openat(int(d.Fd()), ".", unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
		if err != nil {
			if i > 0 {
				unix.Close(fds[0])
			}
			return false, false
		}
		fds[i] = fd
	}
	err := unix.IoctlFileClone(fds[1], fds[0])
	unix.Close(fds[0])
	unix.Close(fds[1])
	return err == nil, st.Type == unix.BTRFS_SUPER_MAGIC
}

// startWriteback starts writing the dirty pages of fd back, without waiting for them.
func startWriteback(fd int) { unix.SyncFileRange(fd, 0, 0, unix.SYNC_FILE_RANGE_WRITE) }

// preallocate gives the empty file fd its first block, without changing its size.
func preallocate(fd int) error {
	return unix.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, 0, tarutil.Alignment)
}

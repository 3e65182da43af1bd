package fetch

import (
	"os"

	"golang.org/x/sys/unix"

	"pkg/tarutil"
)

// clonesTails reports whether the filesystem of the directory d is one where an install
// clones tail files rather than writing their bytes: XFS with reflink and blocks of
// tarutil.Alignment. btrfs clones and truncates a member's last block from the tar, and
// writes files under a block, faster than it clones tail files, which cost it a transaction
// each (docs/design.md, the cache: Tails). It clones one empty temporary file onto another
// (FICLONE), which XFS without reflink refuses before it looks at the sizes.
func clonesTails(d *os.File) bool {
	var st unix.Statfs_t
	if unix.Fstatfs(int(d.Fd()), &st) != nil || st.Bsize != tarutil.Alignment || st.Type != unix.XFS_SUPER_MAGIC {
		return false
	}
	var fds [2]int
	for i := range fds {
		fd, err := unix.Openat(int(d.Fd()), ".", unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
		if err != nil {
			if i > 0 {
				unix.Close(fds[0])
			}
			return false
		}
		fds[i] = fd
	}
	err := unix.IoctlFileClone(fds[1], fds[0])
	unix.Close(fds[0])
	unix.Close(fds[1])
	return err == nil
}

// startWriteback starts writing the dirty pages of fd back, without waiting for them.
func startWriteback(fd int) { unix.SyncFileRange(fd, 0, 0, unix.SYNC_FILE_RANGE_WRITE) }

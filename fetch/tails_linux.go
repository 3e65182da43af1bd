package fetch

import (
	"os"

	"golang.org/x/sys/unix"

	"pkg/internal/statfs"
	"pkg/tarutil"
)

// tailsOf returns which members' tails an entry in the directory d keeps as files of
// their own, by its filesystem (docs/design.md, the cache: Tails):
//   - XFS with reflink and blocks of tarutil.Alignment: every member's (allTails), as a
//     partial block is shared only from a source that ends where the member ends;
//   - btrfs with blocks of tarutil.Alignment: tails over tarutil.MaxInline, whose clone
//     shares the tail file's block wherever it goes, and, in entries of at most
//     smallTailsFiles files with data, those of members under a block, whose one clone from
//     its tail file copies an inline extent (smallTails); other members' last block is
//     cloned from the tar and truncated.
//
// It clones one empty temporary file onto another (FICLONE), which XFS without reflink
// refuses before it looks at the sizes.
func tailsOf(d *os.File) tailKind {
	fs, err := statfs.Of(int(d.Fd()))
	if err != nil || fs.Block != tarutil.Alignment {
		return noTails
	}
	kind := noTails
	switch fs.Kind {
	case statfs.XFS:
		kind = allTails
	case statfs.Btrfs:
		kind = smallTails
	default:
		return noTails
	}
	var fds [2]int
	for i := range fds {
		fd, err := unix.Openat(int(d.Fd()), ".", unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
		if err != nil {
			if i > 0 {
				unix.Close(fds[0])
			}
			return noTails
		}
		fds[i] = fd
	}
	err = unix.IoctlFileClone(fds[1], fds[0])
	unix.Close(fds[0])
	unix.Close(fds[1])
	if err != nil {
		return noTails
	}
	return kind
}

// startWriteback starts writing the dirty pages of fd back, without waiting for them.
func startWriteback(fd int) { unix.SyncFileRange(fd, 0, 0, unix.SYNC_FILE_RANGE_WRITE) }

package fetch

import (
	"os"

	"golang.org/x/sys/unix"

	"pkg/internal/statfs"
	"pkg/tarutil"
)

// maxDedupe bounds one FIDEDUPERANGE: btrfs shares at most 16 MiB a call
// (BTRFS_MAX_DEDUPE_LEN) and XFS, which takes more, compares as fast in pieces.
const maxDedupe = 16 << 20 // 16 MiB

// shareFS returns the block of dst's filesystem, the unit it shares, or 0 where it cannot
// share (not XFS or btrfs) or shares in units the aligned tar does not align to; and whether
// it keeps an extent allocated while any of its blocks is in use (btrfs).
func shareFS(dst *os.File) (block int64, bookends bool) {
	fs, err := statfs.Of(int(dst.Fd()))
	if err != nil || fs.Kind != statfs.XFS && fs.Kind != statfs.Btrfs || fs.Block <= 0 || tarutil.Alignment%fs.Block != 0 {
		return 0, false
	}
	return fs.Block, fs.Kind == statfs.Btrfs
}

// dedupe makes the n bytes at doff in dst share the blocks of those at soff in src where
// the two are equal (FIDEDUPERANGE, which compares them first), and returns the bytes
// shared. handled is false when the filesystem cannot share them at all (ext4, tmpfs,
// two filesystems); a range that differs is handled, with nothing shared.
func dedupe(dst *os.File, doff int64, src *os.File, soff, n int64) (shared int64, handled bool) {
	for shared < n {
		r := unix.FileDedupeRange{
			Src_offset: uint64(soff + shared),
			Src_length: uint64(min(n-shared, maxDedupe)),
			Info:       []unix.FileDedupeRangeInfo{{Dest_fd: int64(dst.Fd()), Dest_offset: uint64(doff + shared)}},
		}
		if err := unix.IoctlFileDedupeRange(int(src.Fd()), &r); err != nil {
			return shared, false
		}
		switch info := r.Info[0]; {
		case info.Status == unix.FILE_DEDUPE_RANGE_DIFFERS:
			return shared, true
		case info.Status != unix.FILE_DEDUPE_RANGE_SAME:
			return shared, false
		case info.Bytes_deduped == 0:
			return shared, true
		default:
			shared += int64(info.Bytes_deduped)
		}
	}
	return shared, true
}

// writeBack writes f's dirty pages back and waits for them, without syncing its metadata
// or the device's cache.
func writeBack(f *os.File) {
	unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
}

// Package statfs reads the kind and block size of a file's filesystem alike on every Linux
// architecture: unix.Statfs_t holds them as int32 on 32-bit ones (386, arm), where
// btrfs's magic number does not fit the type, and as int64 elsewhere.
package statfs

import "golang.org/x/sys/unix"

// Kind is a filesystem's magic number (statfs(2) f_type).
type Kind uint32

// The kinds that pkg treats apart from the others.
const (
	XFS   Kind = unix.XFS_SUPER_MAGIC
	Btrfs Kind = unix.BTRFS_SUPER_MAGIC
	Ext4  Kind = unix.EXT4_SUPER_MAGIC
)

// FS is what statfs(2) says of a filesystem that pkg uses.
type FS struct {
	Kind  Kind
	Block int64 // f_bsize: the block, or on some filesystems the best transfer size
}

// Of returns the filesystem of the file open at fd.
func Of(fd int) (FS, error) {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return FS{}, err
	}
	return FS{Kind: Kind(uint32(st.Type)), Block: int64(st.Bsize)}, nil
}

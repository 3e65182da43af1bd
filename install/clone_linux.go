package install

import (
	"errors"

	"golang.org/x/sys/unix"
)

// isFallback reports whether err from FICLONERANGE or copy_file_range means "this way cannot
// work here, use the next one" rather than a real failure.
func isFallback(err error) bool {
	switch {
	case errors.Is(err, unix.EXDEV): // source and destination on different filesystems
	case errors.Is(err, unix.EOPNOTSUPP): // the filesystem cannot share extents (ext4, tmpfs)
	case errors.Is(err, unix.EINVAL): // offsets not aligned to this filesystem's block size
	case errors.Is(err, unix.ENOSYS): // kernel without copy_file_range
	case errors.Is(err, unix.ENOTTY): // filesystem without the clone ioctl at all
	case errors.Is(err, unix.EPERM): // seccomp filters and some overlay setups refuse it
	default:
		return false
	}
	return true
}

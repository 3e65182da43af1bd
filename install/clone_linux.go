package install

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// fallbackErrno reports whether err from FICLONERANGE or copy_file_range means "this way cannot
// work here, use the next one" rather than a real failure.
func fallbackErrno(err error) bool {
	switch {
	case errors.Is(err, unix.EXDEV): // source and destination on different filesystems
	case errors.Is(err, unix.EOPNOTSUPP): // the filesystem cannot share extents (ext4, tmpfs)
	case errors.Is(err, unix.EINVAL): // offsets not aligned to this filesystem's block size, or not a regular file
	case errors.Is(err, unix.ENOSYS): // kernel without copy_file_range
	case errors.Is(err, unix.ENOTTY): // filesystem without the clone ioctl at all
	case errors.Is(err, unix.EPERM): // seccomp filters and some overlay setups refuse it
	default:
		return false
	}
	return true
}

// cloneRange shares n bytes at srcOff of src into dst at dstOff.
// handled is false when cloning cannot work between these files.
func cloneRange(dst, src *os.File, dstOff, srcOff, n int64) (handled bool, err error) {
	err = unix.IoctlFileCloneRange(int(dst.Fd()), &unix.FileCloneRange{
		Src_fd:      int64(src.Fd()),
		Src_offset:  uint64(srcOff),
		Src_length:  uint64(n),
		Dest_offset: uint64(dstOff),
	})
	runtime.KeepAlive(src)
	runtime.KeepAlive(dst)
	if err != nil && fallbackErrno(err) {
		return false, err
	}
	if err != nil {
		return true, &os.PathError{Op: "clone", Path: dst.Name(), Err: err}
	}
	return true, nil
}

// copyRange copies n bytes at srcOff of src into dst at dstOff inside the kernel.
// handled is false when copy_file_range cannot work between these files.
func copyRange(dst, src *os.File, dstOff, srcOff, n int64) (handled bool, err error) {
	first := true
	for n > 0 {
		c, err := unix.CopyFileRange(int(src.Fd()), &srcOff, int(dst.Fd()), &dstOff, int(min(n, 1<<30)), 0)
		if err != nil && first && fallbackErrno(err) {
			return false, err
		}
		if err != nil {
			return true, &os.PathError{Op: "copy_file_range", Path: dst.Name(), Err: err}
		}
		if c == 0 {
			return true, fmt.Errorf("copy_file_range %s: source ended early", dst.Name())
		}
		first = false
		n -= int64(c)
	}
	runtime.KeepAlive(src)
	runtime.KeepAlive(dst)
	return true, nil
}

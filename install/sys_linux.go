package install

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The per-file system calls of installing and removing are made raw, outside the runtime's
// syscall bookkeeping, when they are short. An openat, close, unlink or small copy takes tens
// of microseconds on XFS, long enough that the runtime hands the P to another thread on most
// of them: an install of a kernel tree made 21,000 futex and 51,000 nanosleep calls that way,
// more than it made files. Holding the P while such a call waits for the disk only delays this
// process's other workers. Calls that move more than rawMax bytes go through the scheduler,
// so a long copy never holds up a garbage collection or a download.
// Names are NUL-terminated byte slices the caller reuses, so a call allocates nothing.

// rawMax is the most data a raw call may move or clone.
const rawMax = 1 << 20

func syscall6(raw bool, trap, a1, a2, a3, a4, a5, a6 uintptr) (uintptr, unix.Errno) {
	if raw {
		r, _, e := unix.RawSyscall6(trap, a1, a2, a3, a4, a5, a6)
		return r, e
	}
	r, _, e := unix.Syscall6(trap, a1, a2, a3, a4, a5, a6)
	return r, e
}

func errnoErr(e unix.Errno) error {
	if e != 0 {
		return e
	}
	return nil
}

func openat(dirfd int, cname []byte, flags int, mode uint32) (int, error) {
	fd, _, e := unix.RawSyscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(&cname[0])),
		uintptr(flags), uintptr(mode), 0, 0)
	return int(fd), errnoErr(e)
}

func closeFd(fd int) error {
	_, _, e := unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
	return errnoErr(e)
}

func unlinkat(dirfd int, cname []byte, flags int) error {
	_, _, e := unix.RawSyscall(unix.SYS_UNLINKAT, uintptr(dirfd), uintptr(unsafe.Pointer(&cname[0])), uintptr(flags))
	return errnoErr(e)
}

func cloneRange(fd int, fcr *unix.FileCloneRange) error {
	_, e := syscall6(fcr.Src_length <= rawMax, unix.SYS_IOCTL, uintptr(fd), unix.FICLONERANGE,
		uintptr(unsafe.Pointer(fcr)), 0, 0, 0)
	return errnoErr(e)
}

func copyFileRange(src int, off *int64, dst int, dstOff *int64, n int) (int, error) {
	c, e := syscall6(n <= rawMax, unix.SYS_COPY_FILE_RANGE, uintptr(src), uintptr(unsafe.Pointer(off)),
		uintptr(dst), uintptr(unsafe.Pointer(dstOff)), uintptr(n), 0)
	return int(c), errnoErr(e)
}

func sendfile(dst, src int, off *int64, n int) (int, error) {
	c, e := syscall6(n <= rawMax, unix.SYS_SENDFILE, uintptr(dst), uintptr(src), uintptr(unsafe.Pointer(off)),
		uintptr(n), 0, 0)
	return int(c), errnoErr(e)
}

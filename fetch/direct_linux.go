package fetch

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// setDirect turns O_DIRECT on for f and reports whether it could: tmpfs and some other
// filesystems refuse it.
func setDirect(f *os.File) bool { return setFlag(f, unix.O_DIRECT, true) }

// clearDirect turns O_DIRECT off for f and reports whether it could.
func clearDirect(f *os.File) bool { return setFlag(f, unix.O_DIRECT, false) }

func setFlag(f *os.File, flag int, on bool) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	ok := false
	rc.Control(func(fd uintptr) {
		fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		if err != nil {
			return
		}
		if on {
			fl |= flag
		} else {
			fl &^= flag
		}
		_, err = unix.FcntlInt(fd, unix.F_SETFL, fl)
		ok = err == nil
	})
	return ok
}

// isDirectRefused reports whether a direct write failed because the filesystem or device
// does not take direct writes as pkg makes them (EINVAL: unsupported or misaligned for
// the device; EOPNOTSUPP: unsupported).
func isDirectRefused(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.EOPNOTSUPP)
}

package testfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// Fill grows the file path, creating it if needed, so that about leave bytes of its
// filesystem stay free. It syncs the filesystem first, since blocks reserved for data not
// yet written back count as used until then. The file's blocks are reserved with
// fallocate, not written, so filling costs no I/O; removing the file frees them. Tests may
// call it from any goroutine.
func Fill(path string, leave int64) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return err
	}
	info, err := f.Stat()
	if err != nil {
		return err
	}
	free, err := Free(path)
	if err != nil {
		return err
	}
	if n := free - leave; n > 0 {
		if err := unix.Fallocate(int(f.Fd()), 0, info.Size(), n); err != nil {
			return &os.PathError{Op: "fallocate", Path: path, Err: err}
		}
	}
	return nil
}

// Free returns the bytes of path's filesystem available to unprivileged writes.
func Free(path string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, &os.PathError{Op: "statfs", Path: path, Err: err}
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

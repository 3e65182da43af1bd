package install

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"pkg/internal/regfile"
)

// A MetaFile is a file of the root's .pkg directory that another package keeps (package
// trust's KeysFile), read and replaced through the descriptor of .pkg that Open opened:
// .pkg, or the root, swapped for a symlink meanwhile leads nowhere else.
type MetaFile struct {
	r    *Root
	name string
}

// TrustedKeys returns the root's trusted-keys file, .pkg/trusted-keys.
func (r *Root) TrustedKeys() *MetaFile { return &MetaFile{r: r, name: "trusted-keys"} }

// Name returns where the file is, for messages.
func (f *MetaFile) Name() string { return f.r.path(".pkg", f.name) }

// maxMetaFile bounds what MetaFile.Read reads.
const maxMetaFile = 1 << 20 // 1 MiB

// Read returns the contents of the file, through no symlink, refusing at once anything but
// a regular file in its place (a *regfile.NotRegularError) and one of more than
// maxMetaFile bytes; an error matching fs.ErrNotExist where there is none.
func (f *MetaFile) Read() ([]byte, error) {
	fd, err := unix.Openat(f.r.fd[meta], f.name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: f.Name(), Err: err}
	}
	file := os.NewFile(uintptr(fd), f.Name())
	defer file.Close()
	if err := regfile.Check(file); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(file, maxMetaFile+1))
	if err == nil && len(b) > maxMetaFile {
		err = &os.PathError{Op: "read", Path: f.Name(), Err: fmt.Errorf("over the %d-byte limit", maxMetaFile)}
	}
	return b, err
}

// Replace replaces the file with data, mode 0644, atomically: a temporary file beside it,
// synced, renamed over it, then .pkg synced.
func (f *MetaFile) Replace(data []byte) (err error) {
	r := f.r
	var fd int
	tmp, err := r.makeTemp(meta, "."+f.name+".tmp-", func(dirfd int, name string) (int, error) {
		fd, err = unix.Openat(dirfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
		return fd, err
	})
	if err != nil {
		return err
	}
	file := os.NewFile(uintptr(fd), r.pathOf(tmp))
	_, err = file.Write(data)
	if err == nil {
		err = file.Chmod(0o644)
	}
	if err == nil {
		err = file.Sync()
	}
	err = errors.Join(err, file.Close())
	if err == nil {
		err = r.rename(tmp, place{meta, f.name})
	}
	if err != nil {
		r.remove(tmp)
		return err
	}
	if err := unix.Fsync(r.fd[meta]); err != nil {
		return &os.PathError{Op: "fsync", Path: r.path(".pkg"), Err: err}
	}
	return nil
}

package fetch

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// memFile returns a new file in memory (memfd_create(2)).
func memFile(name string) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, &os.PathError{Op: "memfd_create", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// memFiles reports whether memFile works here (a seccomp filter may refuse it).
var memFiles = sync.OnceValue(func() bool {
	f, err := memFile("probe")
	if err != nil {
		return false
	}
	f.Close()
	return true
})

package durable

import (
	"os"

	"golang.org/x/sys/unix"
)

// FS flushes the whole filesystem holding path, with syncfs(2).
func FS(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return &os.PathError{Op: "syncfs", Path: path, Err: err}
	}
	return nil
}

//go:build !linux

package durable

import (
	"errors"
	"os"
)

// FS fails: there is no syncfs(2) here.
func FS(path string) error {
	return &os.PathError{Op: "syncfs", Path: path, Err: errors.ErrUnsupported}
}

// Files tracks nothing here.
type Files struct{}

// ForFS returns the Files of the filesystem holding fd.
func ForFS(fd int) Files { return Files{} }

// TracksPath reports false: nothing is tracked here.
func TracksPath(path string) bool { return false }

// Tracks reports false: Commit cannot make a tree durable here.
func (Files) Tracks() bool { return false }

// Starts reports false: Start does nothing here.
func (Files) Starts() bool { return false }

// Ordered reports false: nothing is known of the order metadata reaches the disk in.
func (Files) Ordered() bool { return false }

// Start does nothing.
func (Files) Start(fd int) {}

// Wait does nothing.
func (Files) Wait(fd int) error { return nil }

// SyncFS fails: there is no syncfs(2) here.
func SyncFS(f *os.File) error { return FS(f.Name()) }

// Commit fails: there is no syncfs(2) here.
func Commit(f *os.File) error { return FS(f.Name()) }

// Package durable makes what was written under a path reach the disk.
package durable

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// MaxTracked is the most files with data a tree may have for its files to be written back
// one by one (Files.Start, Wait) rather than by one syncfs: install's maxTracked, and the
// most an entry of a btrfs cache keeps small tails for (fetch's smallTailsFiles), which
// pay only in an install that writes its files back one by one.
const MaxTracked = 4096

// Path fsyncs the file or directory at path.
func Path(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// WriteFile replaces dir/name with what write writes, atomically and durably: a temporary
// file in dir named by pattern (os.CreateTemp's), made readable by all (repositories and
// mirrors are served to others), synced, renamed over name, and dir synced. On an error
// before the rename the temporary file goes and name is as it was; after it (dir's
// fsync), name is the new file, perhaps not durable.
func WriteFile(dir, name, pattern string, write func(io.Writer) error) error {
	return writeFile(dir, name, pattern, 0o644, write)
}

// ReplaceFile is WriteFile of a file whose permissions, where it is a regular file, the
// new one keeps (a lockfile its owner made 0600 stays so); a new file is made 0644.
func ReplaceFile(dir, name, pattern string, write func(io.Writer) error) error {
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() {
		mode = fi.Mode().Perm()
	}
	return writeFile(dir, name, pattern, mode, write)
}

// writeFile is WriteFile of a file of the permissions mode.
func writeFile(dir, name, pattern string, mode fs.FileMode, write func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = write(f); err != nil {
		return err
	}
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), filepath.Join(dir, name)); err != nil {
		return err
	}
	return Path(dir)
}

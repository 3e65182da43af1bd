// Package durable makes what was written under a path reach the disk.
package durable

import (
	"errors"
	"os"
)

// Path fsyncs the file or directory at path.
func Path(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return &os.PathError{Op: "fsync", Path: path, Err: errors.Unwrap(err)}
	}
	return nil
}

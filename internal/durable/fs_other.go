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

//go:build !linux

package fetch

import (
	"errors"
	"os"
)

// Where O_DIRECT does not exist, cache files are written through the page cache.

func setDirect(*os.File) bool    { return false }
func clearDirect(*os.File) bool  { return true }
func isDirectRefused(error) bool { return false }

// syncFS fails: there is no syncfs(2) here, and no boot id to mark entries with.
func syncFS(dir string) error {
	return &os.PathError{Op: "syncfs", Path: dir, Err: errors.ErrUnsupported}
}

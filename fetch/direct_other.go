//go:build !linux

package fetch

import (
	"os"
	"syscall"
)

// Where O_DIRECT does not exist, cache files are written through the page cache.

func setDirect(*os.File) bool    { return false }
func clearDirect(*os.File) bool  { return true }
func isDirectRefused(error) bool { return false }

// syncFS syncs the whole system: there is no syncfs(2) here.
func syncFS(string) error {
	syscall.Sync()
	return nil
}

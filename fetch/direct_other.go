//go:build !linux

package fetch

import "os"

// Where O_DIRECT does not exist, cache files are written through the page cache.

func setDirect(*os.File) bool    { return false }
func clearDirect(*os.File) bool  { return true }
func isDirectRefused(error) bool { return false }

//go:build !linux

package fetch

import (
	"errors"
	"os"
)

// There are no files in memory: blocks are decoded into the heap.

func memFile(string) (*os.File, error) { return nil, errors.ErrUnsupported }

func memFiles() bool { return false }

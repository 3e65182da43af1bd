// Package durable makes what was written under a path reach the disk.
package durable

import "os"

// Path fsyncs the file or directory at path.
func Path(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

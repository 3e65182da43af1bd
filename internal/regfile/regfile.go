// Package regfile opens the files pkg reads by a path that a user, or another user, may
// have put anything at: configuration, keys, lockfiles, a local repository's index and its
// archives. No open or read of one can block, as a FIFO's or a terminal's would: anything
// but a regular file is refused, naming what it is. It does not confine a path to a directory.
package regfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// NotRegularError is the cause, in an *fs.PathError, of refusing a path that is not a
// regular file: Type is what it is instead (fs.ModeNamedPipe, fs.ModeDir...).
type NotRegularError struct{ Type fs.FileMode }

func (e *NotRegularError) Error() string {
	return typeName(e.Type) + ", not a regular file"
}

func typeName(t fs.FileMode) string {
	switch {
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a file of type " + t.String()
}

// Open opens the regular file name for reading, with flag added (unix.O_NOFOLLOW where a
// symlink is not to be followed). The open does not wait for a FIFO's writer, nor a
// device's carrier (O_NONBLOCK, which reads of a regular file ignore).
func Open(name string, flag int) (*os.File, error) {
	f, _, err := OpenInfo(name, flag)
	return f, err
}

// OpenInfo is Open that also returns the file's status, as its check found it.
func OpenInfo(name string, flag int) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|flag, 0)
	if err != nil {
		if flag&unix.O_NOFOLLOW != 0 && errors.Is(err, unix.ELOOP) { // O_NOFOLLOW's refusal of a symlink
			err = &fs.PathError{Op: "open", Path: name, Err: &NotRegularError{fs.ModeSymlink}}
		}
		return nil, nil, err
	}
	info, err := check(f)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// Check returns an *fs.PathError with a *NotRegularError if f, opened by whatever means
// (openat2 beneath a directory, say), is not a regular file.
func Check(f *os.File) error {
	_, err := check(f)
	return err
}

// check is Check, returning f's status.
func check(f *os.File) (fs.FileInfo, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: f.Name(), Err: &NotRegularError{info.Mode().Type()}}
	}
	return info, nil
}

// ReadFile returns the contents of the regular file name, as os.ReadFile does, or an
// error naming it if it holds more than limit bytes.
func ReadFile(name string, limit int64) ([]byte, error) {
	f, err := Open(name, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("over the %d-byte limit", limit)}
	}
	return b, nil
}

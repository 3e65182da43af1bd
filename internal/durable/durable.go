// Package durable makes what was written under a path reach the disk.
package durable

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
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
	return writeFile(dir, name, pattern, 0o644, -1, -1, write)
}

// ReplaceFile is WriteFile of a file whose permissions, owner and group, where it is a
// regular file, the new one keeps, as an editor keeps them (a lockfile its owner made 0600
// stays so, one made 0664 for a group stays the group's, a user's file rewritten by root
// stays the user's); a new file is made 0644. Only root may give a file away (chown(2)):
// another writer's new file is its own. Where the writer may not give it that group (it
// is not a member), the group's permissions are the others': the writer's own group gets
// no more than anyone.
func ReplaceFile(dir, name, pattern string, write func(io.Writer) error) error {
	mode, uid, gid := fs.FileMode(0o644), -1, -1
	if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() {
		mode = fi.Mode().Perm()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			uid, gid = int(st.Uid), int(st.Gid)
		}
	}
	return writeFile(dir, name, pattern, mode, uid, gid, write)
}

// writeFile is WriteFile of a file of the permissions mode, the owner uid and the group
// gid (-1: the writer's).
func writeFile(dir, name, pattern string, mode fs.FileMode, uid, gid int, write func(io.Writer) error) (err error) {
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
	if uid >= 0 && uid != os.Geteuid() {
		if cerr := f.Chown(uid, -1); cerr != nil && !errors.Is(cerr, fs.ErrPermission) {
			return cerr
		}
	}
	if gid >= 0 {
		if err = f.Chown(-1, gid); errors.Is(err, fs.ErrPermission) {
			mode = mode&^0o070 | (mode&0o007)<<3
		} else if err != nil {
			return err
		}
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

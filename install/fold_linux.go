package install

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"pkg/internal/statfs"
	"pkg/tarutil"
)

// dirFolds is folds, which tests replace to stand in for a folding directory where the
// kernel can make none.
var dirFolds = folds

// checkFolds refuses members of which two would be one file in the staging directory open
// at fd, dir, when it folds names (tarutil.CheckFolded): found before anything is created.
func checkFolds(fd int, dir string, members []tarutil.Member) error {
	fold, err := dirFolds(fd, dir)
	if err != nil || !fold {
		return err
	}
	if err := tarutil.CheckFolded(members); err != nil {
		return fmt.Errorf("%w (%s folds names)", err, dir)
	}
	return nil
}

// fsCasefoldFl is FS_CASEFOLD_FL of FS_IOC_GETFLAGS (linux/fs.h): a directory whose names
// are looked up folded (chattr +F on ext4, f2fs and tmpfs), as are those of the directories
// made in it.
const fsCasefoldFl = 0x40000000

// Statfs magic numbers (linux/magic.h, fs/ntfs3/super.c) of filesystems that fold every name.
const (
	msdosMagic statfs.Kind = 0x4d44 // vfat and msdos
	exfatMagic statfs.Kind = 0x2011bab0
	ntfs3Magic statfs.Kind = 0x7366746e
)

// folds reports whether the directory dir, open at fd (not O_PATH), folds names, so that
// two names differing only in case (or Unicode normalization, where the filesystem
// normalizes) are one file there: a casefold directory or a directory of a filesystem that
// folds all names. Directories made in dir fold as it does.
func folds(fd int, dir string) (bool, error) {
	fs, err := statfs.Of(fd)
	if err != nil {
		return false, &os.PathError{Op: "statfs", Path: dir, Err: err}
	}
	switch fs.Kind {
	case msdosMagic, exfatMagic, ntfs3Magic:
		return true, nil
	}
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	switch {
	case err == nil:
		return flags&fsCasefoldFl != 0, nil
	case errors.Is(err, unix.ENOTTY) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS):
		return false, nil // a filesystem without inode flags, none of them casefold
	}
	return false, &os.PathError{Op: "ioctl FS_IOC_GETFLAGS", Path: dir, Err: err}
}

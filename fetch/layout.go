package fetch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"pkg/repo"
)

// A cache says it is one with a CACHEDIR.TAG (https://bford.info/cachedir/), which backup
// tools know too; pkg's, whose second line names pkg, is what lets pkg delete files there.
// pkg makes a cache only in a new or empty directory, the tag first, durably, so that a
// cache whose making a crash cut short is still known as one; and it works in the cache's
// subdirectories only where they are directories, never through a symlink.

const (
	tagName = "CACHEDIR.TAG"
	tagHead = "Signature: 8a477f597d28d172789f06886806bc55\n" +
		"# This file is a cache directory tag created by pkg.\n"
	cacheTag = tagHead + "# For information about cache directory tags, see https://bford.info/cachedir/\n"
)

// subdirs are the directories of a cache (Cache).
var subdirs = []string{"tars", "tmp", "index", "roots"}

// ErrNotCache is what opening a directory as the cache is when it is not pkg's cache: not
// empty and without pkg's CACHEDIR.TAG, or with a subdirectory that is a symlink.
var ErrNotCache = errors.New("fetch: not a pkg cache")

func notCache(dir, format string, args ...any) error {
	return &notCacheError{dir: dir, why: fmt.Sprintf(format, args...)}
}

// Reasons a directory is not a pkg cache, which a notCacheError may match besides
// ErrNotCache.
var (
	errNotEmpty   = errors.New("fetch: not empty and no CACHEDIR.TAG")
	errForeignTag = errors.New("fetch: CACHEDIR.TAG not pkg's")
	errSymlinked  = errors.New("fetch: a symlink, which pkg does not follow")
)

// notCacheFor is notCache for one of the reasons above.
func notCacheFor(dir string, reason error, format string, args ...any) error {
	return &notCacheError{dir: dir, why: fmt.Sprintf(format, args...), reason: reason}
}

// symlinked refuses the cache dir for path, a symlink in it.
func symlinked(dir, path string) error {
	return &notCacheError{dir: dir, why: path + " is a symlink, which pkg does not follow", reason: errSymlinked, path: path}
}

// notCacheError is ErrNotCache about one directory, said once.
type notCacheError struct {
	dir, why string
	reason   error  // one of the reasons above, or nil
	path     string // the symlink in the cache, for errSymlinked
}

func (e *notCacheError) Is(target error) bool { return e.reason != nil && target == e.reason }

func (e *notCacheError) Error() string {
	return "cache " + e.dir + " is not a pkg cache: " + e.why
}

func (e *notCacheError) Unwrap() error { return ErrNotCache }

// layout makes sure that the directory use, at dir, is pkg's cache with all its
// subdirectories, making it one, owner's, if it is empty.
func layout(use *os.File, dir string, owner cacheOwner) error {
	tag, err := readTag(use, dir)
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(tag, []byte(tagHead)) {
		if err := makeCache(use, dir, tag, owner); err != nil {
			return err
		}
	}
	for _, name := range subdirs {
		if err := subdir(use, dir, name, owner); err != nil {
			return err
		}
	}
	return nil
}

// readTag returns the start of the CACHEDIR.TAG in use, nil if there is none.
func readTag(use *os.File, dir string) ([]byte, error) {
	fd, err := unix.Openat(int(use.Fd()), tagName, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, nil
	case errors.Is(err, unix.ELOOP):
		return nil, &notCacheError{dir: dir, why: "its " + tagName + " is a symlink", reason: errSymlinked, path: filepath.Join(dir, tagName)}
	case err != nil:
		return nil, fmt.Errorf("open cache %s: %w", dir, &os.PathError{Op: "open", Path: filepath.Join(dir, tagName), Err: err})
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir, tagName))
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return nil, notCache(dir, "its %s is not a regular file", tagName)
	}
	b := make([]byte, len(cacheTag))
	n, err := io.ReadFull(f, b)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, fmt.Errorf("open cache %s: %w", dir, err)
	}
	if n == 0 {
		return []byte{}, nil // there, but empty
	}
	return b[:n], nil
}

// makeCache tags the directory use, at dir, as pkg's cache, if it is empty: tag is what
// its CACHEDIR.TAG holds, which may be the start of pkg's, written by a process that is
// making the cache or that was killed while it did. The tag is owner's.
func makeCache(use *os.File, dir string, tag []byte, owner cacheOwner) error {
	partial := tag != nil && bytes.HasPrefix([]byte(cacheTag), tag)
	if tag != nil && !partial {
		return notCacheFor(dir, errForeignTag, "its %s is not pkg's", tagName)
	}
	fd, err := unix.Openat(int(use.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open cache %s: %w", dir, &os.PathError{Op: "open", Path: dir, Err: err})
	}
	d := os.NewFile(uintptr(fd), dir)
	names, err := d.Readdirnames(len(subdirs) + 2)
	d.Close()
	if err != nil && err != io.EOF {
		return fmt.Errorf("open cache %s: %w", dir, err)
	}
	// A process making the cache writes the tag before the subdirectories: they may be
	// there by now, beside a tag this one read before it was whole.
	tagged := slices.Contains(names, tagName)
	for _, name := range names {
		if name != tagName && !(tagged && slices.Contains(subdirs, name)) {
			return notCacheFor(dir, errNotEmpty, "it is not empty and has no %s", tagName)
		}
	}
	// The same bytes at the same offsets, never truncated: a process making the cache at
	// the same time reads the start of the tag or all of it. Read-write and O_NONBLOCK: the
	// open of a FIFO put there since readTag returns at once, and the FIFO is refused.
	fd, err = unix.Openat(int(use.Fd()), tagName, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return fmt.Errorf("create cache %s: %w", dir, &os.PathError{Op: "open", Path: filepath.Join(dir, tagName), Err: err})
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir, tagName))
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		f.Close()
		return notCache(dir, "its %s is not a regular file", tagName)
	}
	err = owner.give(fd, f.Name())
	if err == nil {
		_, err = f.WriteAt([]byte(cacheTag), 0)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = use.Sync()
	}
	if err != nil {
		return fmt.Errorf("create cache %s: %w", dir, err)
	}
	return nil
}

// subdir makes the subdirectory name of the cache use, at dir, owner's, if it is missing,
// and refuses it unless it is a directory.
func subdir(use *os.File, dir, name string, owner cacheOwner) error {
	var st unix.Stat_t
	err := unix.Fstatat(int(use.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		if err = unix.Mkdirat(int(use.Fd()), name, 0o755); err == nil {
			if err := owner.giveAt(use, name); err != nil {
				return fmt.Errorf("create cache: %w", err)
			}
		}
		if err == nil || errors.Is(err, unix.EEXIST) {
			err = unix.Fstatat(int(use.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
		}
	}
	path := filepath.Join(dir, name)
	switch {
	case err != nil:
		return fmt.Errorf("create cache: %w", &os.PathError{Op: "mkdir", Path: path, Err: err})
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return symlinked(dir, path)
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return notCache(dir, "%s is not a directory", path)
	}
	return nil
}

// openSubdir opens the cache's subdirectory name, through no symlink.
func (c *Cache) openSubdir(name string) (*os.File, error) {
	path := filepath.Join(c.dir, name)
	fd, err := unix.Openat(int(c.use.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		var st unix.Stat_t // a symlink is ENOTDIR, with O_DIRECTORY
		if unix.Fstatat(int(c.use.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return nil, symlinked(c.dir, path)
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// removeOld removes the regular files of the cache's subdirectory d, of names (readNames),
// that old reports, given the directory, their names and ages, and returns their bytes.
func removeOld(d *os.File, names []string, old func(dir *os.File, name string, age time.Duration) bool) int64 {
	var n int64
	for _, name := range names {
		var st unix.Stat_t
		if unix.Fstatat(int(d.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			continue
		}
		age := time.Since(time.Unix(st.Mtim.Unix()))
		if old(d, name, age) && unix.Unlinkat(int(d.Fd()), name, 0) == nil {
			n += st.Size
		}
	}
	return n
}

// ownTemp reports whether name, in tmp/, is a file pkg makes there: a fetch's claim
// (fetch-SHA256), a partial download (part-SHA256), or a temporary file, NAME-N or NAME-N.tar, with os.CreateTemp's decimal N
// and a package's name as repo.FileName writes it, "idx", or the name of the file it replaces.
func ownTemp(name string) bool {
	if sha, ok := strings.CutPrefix(name, "fetch-"); isPartial(name) || ok && isSHA256(sha) {
		return true
	}
	i := strings.LastIndexByte(name, '-')
	n := strings.TrimSuffix(name[i+1:], ".tar")
	pkg := name[:max(i, 0)]
	if strings.HasPrefix(pkg, "@") {
		pkg = strings.Replace(pkg, "+", "/", 1) // repo.FileName of a scoped name
	}
	return i > 0 && repo.ValidName(pkg) && n != "" && strings.Trim(n, "0123456789") == ""
}

// isSHA256 reports whether s is a sha256 in lowercase hex, as entries are named.
func isSHA256(s string) bool {
	return len(s) == 64 && strings.Trim(s, "0123456789abcdef") == ""
}

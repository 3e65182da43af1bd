package install

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"pkg/internal/termtext"
)

// ErrNotYours is returned by Open for a root whose lock this user may not take.
var ErrNotYours = errors.New("install: root not yours to change")

// ErrLocked is returned by Open when another command held the root's lock for all of
// Options.LockTimeout.
var ErrLocked = errors.New("install: root locked")

// ErrReadOnly is returned by Open for a root on a read-only filesystem.
var ErrReadOnly = errors.New("install: root on a read-only filesystem")

// lockRetry is how long a waiting command sleeps between tries of the lock.
const lockRetry = 50 * time.Millisecond

// openLock checks the root's layout under dir, creates it if needed, opens its directories
// (openLayout) and its lock file, without locking it. It returns dir made absolute, and
// what it made of the root: the directories of its path (missing) and of its layout.
func openLock(dir string) (string, parts, *os.File, made, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", parts{}, nil, made{}, err
	}
	m := made{dirs: missing(dir)}
	if err := os.MkdirAll(dir, 0o755); errors.Is(err, syscall.EROFS) {
		return "", parts{}, nil, m, readOnlyError(dir, err)
	} else if err != nil {
		return "", parts{}, nil, m, fmt.Errorf("create root: %w", err)
	}
	fds, madeParts, err := openLayout(dir, true)
	m.parts = madeParts
	if err != nil {
		return "", fds, nil, m, err
	}
	path := filepath.Join(dir, ".pkg", "lock")
	fd, err := unix.Openat(fds[meta], "lock", unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		fds.close()
		err = &os.PathError{Op: "open", Path: path, Err: err}
	}
	if err := refusal(dir, err); err != nil {
		return "", fds, nil, m, err
	}
	if err != nil {
		return "", fds, nil, m, fmt.Errorf("open the lock of root %s: %w", dir, err)
	}
	return dir, fds, os.NewFile(uintptr(fd), path), m, nil
}

// stillLinked reports whether the lock f, taken, is still the file at its path: a first
// command that failed takes the root it made away (Root.unmake), its lock with it, and a
// command that waited for that lock must open the root again.
func stillLinked(f *os.File) bool {
	var held, now unix.Stat_t
	if unix.Fstat(int(f.Fd()), &held) != nil {
		return true // the error, if it lasts, meets the command at its next use of the root
	}
	err := unix.Fstatat(unix.AT_FDCWD, f.Name(), &now, unix.AT_SYMLINK_NOFOLLOW)
	return err == nil && now.Dev == held.Dev && now.Ino == held.Ino || err != nil && err != unix.ENOENT
}

// refusal returns the error Open returns for err, met opening or making what the
// root dir needs to be changed, where it means this process cannot change the root:
// ErrNotYours or ErrReadOnly; nil for any other.
func refusal(dir string, err error) error {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return &reasonError{fmt.Sprintf("root %s is not yours to change: %v", dir, err), ErrNotYours, err}
	case errors.Is(err, syscall.EROFS):
		return readOnlyError(dir, err)
	}
	return nil
}

func readOnlyError(dir string, err error) error {
	return &reasonError{fmt.Sprintf("root %s is on a read-only filesystem: %v", dir, err), ErrReadOnly, err}
}

// Changeable returns the error Open would return, changing nothing, for a root at dir that
// this process cannot change (ErrNotYours, ErrReadOnly): for a dry run, whose plan
// could not be carried out. It asks of the first that exists of the root's lock, its
// .pkg, the root and the directories above it, where Open would write.
func Changeable(dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for p := filepath.Join(dir, ".pkg", "lock"); ; p = filepath.Dir(p) {
		err := unix.Faccessat(unix.AT_FDCWD, p, unix.W_OK, unix.AT_EACCESS)
		if !errors.Is(err, unix.ENOENT) || p == filepath.Dir(p) {
			if err != nil {
				err = &os.PathError{Op: "access", Path: p, Err: err}
			}
			return refusal(dir, err)
		}
	}
}

// tryLock takes the lock f, how being unix.LOCK_EX or LOCK_SH, if no other process holds it
// in a way that excludes that.
func tryLock(f *os.File, how int) (bool, error) {
	err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EWOULDBLOCK):
		return false, nil
	}
	return false, fmt.Errorf("lock %s: %w", f.Name(), err)
}

// A lockWait is a command's wait for its root's lock, over the roots lockRoot opens
// again: one deadline, o.LockTimeout from its start (none if 0), and o.Waiting called once.
type lockWait struct {
	o        Options
	deadline time.Time
	told     bool
}

func newLockWait(o Options) *lockWait {
	return &lockWait{o: o, deadline: time.Now().Add(o.LockTimeout)}
}

// lock takes the lock f of the root dir, waiting until w's deadline or until ctx is done,
// and calling o.Waiting, unless w did already, if it must wait more than one retry (a
// command that only looks holds it a moment), then writes o.Owner into it for others that
// wait.
func (w *lockWait) lock(ctx context.Context, f *os.File, dir string) error {
	o := w.o
	for tries := 1; ; tries++ {
		ok, err := tryLock(f, unix.LOCK_EX)
		if err != nil {
			return err
		}
		if ok {
			break
		}
		if tries >= 2 && !w.told && o.Waiting != nil {
			w.told = true
			o.Waiting(readOwner(f))
		}
		wait := lockRetry
		if o.LockTimeout != 0 {
			if wait = min(wait, time.Until(w.deadline)); wait <= 0 {
				return &reasonError{fmt.Sprintf("root %s is locked by %s: gave up after %v", dir, readOwner(f), o.LockTimeout), ErrLocked, nil}
			}
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// Best effort: the owner only helps a waiting process say whom it waits for.
	owner := "pid " + strconv.Itoa(os.Getpid())
	if o.Owner != "" {
		owner += " (" + o.Owner + ")"
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(owner), 0)
	}
	return nil
}

// readOwner returns what the holder of the lock f wrote about itself, quoted where it
// holds a control character: a root's lock is its owner's to write, and a newline in it
// would print a line of their choosing to another user looking at the root.
func readOwner(f *os.File) string {
	b := make([]byte, 4096)
	n, _ := f.ReadAt(b, 0)
	if s := strings.TrimSpace(string(b[:n])); termtext.HasControl(s) {
		return termtext.Quote(s)
	} else if s != "" {
		return s
	}
	return "another pkg process"
}

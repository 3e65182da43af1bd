package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"pkg/fetch"
	"pkg/install"
	"pkg/internal/dirfd"
)

// Prune removes the run roots of cache that no command runs from and that the limits l
// take, and forgets them as roots, so that their entries are the cache's to prune: every
// idle one without limits, those unused for l.OlderThan (each <set>.used's mtime is its
// last use), none under a size limit alone (they are remade on demand, but their entries
// are what runs use). A run that starts meanwhile waits for the root's removal and makes
// it again. It returns how many it removed.
func Prune(cache *fetch.Cache, l fetch.Limits) (int, error) {
	var before time.Time
	switch {
	case l.OlderThan > 0:
		before = time.Now().Add(-l.OlderThan)
	case l.MaxSize > 0:
		return 0, nil
	}
	rd, err := cache.RunDir()
	if err != nil {
		return 0, err
	}
	runs, through := rd.Dir, rd.Path
	d, err := dirfd.Open(runs, ".", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return 0, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, n := range names {
		set, ok := strings.CutSuffix(n, ".used")
		if !ok || !validSet(set) {
			continue
		}
		done, err := pruneRun(cache, runs, through, set, before)
		if err != nil {
			return removed, err
		}
		if done {
			removed++
		}
	}
	return removed, nil
}

// pruneRun removes the run root set of the directory runs, reached at the path through, if
// its .used file can be locked exclusively at once and was last touched before before.
// The .used file goes last, still locked: a run waiting for it finds it replaced (hold)
// and starts afresh.
func pruneRun(cache *fetch.Cache, runs *os.File, through, set string, before time.Time) (bool, error) {
	f, err := dirfd.Open(runs, set+".used", unix.O_RDWR|unix.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return false, nil
		}
		return false, err
	}
	defer f.Close()
	fd, used := int(f.Fd()), f.Name()
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return false, nil // a command runs from it, or is making it
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, &os.PathError{Op: "stat", Path: used, Err: err}
	}
	if !before.IsZero() && !time.Unix(st.Mtim.Unix()).Before(before) {
		return false, nil
	}
	if err := install.RemoveTree(through, set); err != nil {
		return false, err
	}
	if err := cache.ForgetRoot(filepath.Join(runs.Name(), set)); err != nil {
		return false, err
	}
	if err := unix.Unlinkat(int(runs.Fd()), set+".used", 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return false, &os.PathError{Op: "remove", Path: used, Err: err}
	}
	return true, nil
}

package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
// are what runs use). It holds each it will remove first, and hands their paths to check,
// if not nil: when check fails, none goes. It holds at most maxHeldRuns, and fewer where
// the process runs out of file descriptors: the rest are the next prune's. A run that
// starts meanwhile waits for the root's removal and makes it again. It returns the paths
// of those it removed.
func Prune(cache *fetch.Cache, l fetch.Limits, check func(idle []string) error) ([]string, error) {
	if check == nil {
		check = func([]string) error { return nil }
	}
	var before time.Time
	switch {
	case l.OlderThan > 0:
		before = time.Now().Add(-l.OlderThan)
	case l.MaxSize > 0:
		return nil, check(nil)
	}
	rd, err := cache.RunDir()
	if err != nil {
		return nil, err
	}
	idle, err := holdIdle(rd.Dir, before)
	defer func() {
		for _, r := range idle {
			r.used.Close()
		}
	}()
	if err != nil {
		return nil, fmt.Errorf("prune the run roots of %s: %w", rd.Dir.Name(), err)
	}
	paths := make([]string, len(idle))
	for i, r := range idle {
		paths[i] = filepath.Join(rd.Dir.Name(), r.set)
	}
	if err := check(paths); err != nil {
		return nil, err
	}
	for i, r := range idle {
		if err := removeRun(cache, rd, r); err != nil {
			forgetMemos(rd.Dir, idle[:i])
			return paths[:i], err
		}
	}
	forgetMemos(rd.Dir, idle)
	return paths, nil
}

// forgetMemos removes the memos of the run directory runs that name one of the run roots
// gone, which no run would reuse. A memo is only a hint: one it cannot read or remove
// stays, as a run that finds its root gone resolves again.
func forgetMemos(runs *os.File, gone []idleRun) {
	if len(gone) == 0 {
		return
	}
	dir, err := dirfd.Open(runs, "memo", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return
	}
	defer dir.Close()
	names, _ := dir.Readdirnames(-1)
	for _, n := range names {
		b, err := readMemoIn(dir, n)
		var m memo
		if err != nil || json.Unmarshal(b, &m) != nil {
			continue
		}
		if slices.ContainsFunc(gone, func(r idleRun) bool { return r.set == m.Set }) {
			unix.Unlinkat(int(dir.Fd()), n, 0)
		}
	}
}

// maxHeldRuns bounds the run roots one Prune holds, each by an open file, so that it stays
// well under the usual limit of open files (RLIMIT_NOFILE, 1024 by default).
const maxHeldRuns = 256

// idleRun is a run root Prune holds to remove: its set, and its .used file, locked.
type idleRun struct {
	set  string
	used *os.File
}

// holdIdle returns the run roots of the directory runs whose .used file it could lock
// exclusively at once and was last touched before before (any time, if zero), each held:
// maxHeldRuns at most; where the process has no file descriptor left for another (EMFILE,
// ENFILE), the first half of those it holds then, the others let go so that removing them
// has descriptors to use. On an error it returns those it holds so far.
func holdIdle(runs *os.File, before time.Time) ([]idleRun, error) {
	d, err := dirfd.Open(runs, ".", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	var idle []idleRun
	for _, n := range names {
		set, ok := strings.CutSuffix(n, ".used")
		if !ok || !validSet(set) {
			continue
		}
		if len(idle) == maxHeldRuns {
			break
		}
		f, err := holdUnused(runs, n, before)
		if len(idle) > 1 && (errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE)) {
			for _, r := range idle[len(idle)/2:] {
				r.used.Close()
			}
			return idle[:len(idle)/2], nil
		} else if err != nil {
			return idle, err
		}
		if f != nil {
			idle = append(idle, idleRun{set, f})
		}
	}
	return idle, nil
}

// holdUnused returns the .used file name of the directory runs, locked exclusively, if
// that succeeds at once and the file was last touched before before; nil if not.
func holdUnused(runs *os.File, name string, before time.Time) (*os.File, error) {
	f, err := dirfd.Open(runs, name, unix.O_RDWR|unix.O_NONBLOCK, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	fd := int(f.Fd())
	if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
		f.Close()
		return nil, nil // a command runs from it, or is making it
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, &os.PathError{Op: "stat", Path: f.Name(), Err: err}
	}
	if !before.IsZero() && !time.Unix(st.Mtim.Unix()).Before(before) {
		f.Close()
		return nil, nil
	}
	return f, nil
}

// removeRun removes the run root r of the cache's run directory rd, and forgets it. The
// .used file goes last, still locked: a run waiting for it finds it replaced (hold) and
// starts afresh.
func removeRun(cache *fetch.Cache, rd *fetch.Runs, r idleRun) error {
	if err := install.RemoveTree(rd.Path, r.set); err != nil {
		return err
	}
	if err := cache.ForgetRoot(filepath.Join(rd.Dir.Name(), r.set)); err != nil {
		return err
	}
	if err := unix.Unlinkat(int(rd.Dir.Fd()), r.set+".used", 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return &os.PathError{Op: "remove", Path: r.used.Name(), Err: err}
	}
	return nil
}

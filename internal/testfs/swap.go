package testfs

import (
	"fmt"
	"io/fs"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A Swapper does what another user of a shared directory can do at worst: from a goroutine
// of its own, it exchanges a directory with a symlink to a decoy (renameat2
// RENAME_EXCHANGE, so that the name is never missing) and back, again and again, until
// Stop.
type Swapper struct {
	stop  chan struct{}
	done  chan struct{}
	swaps atomic.Int64
}

// Swap starts swapping dir, which must exist, for a symlink to decoy.
func Swap(t testing.TB, dir, decoy string) *Swapper {
	t.Helper()
	link := dir + ".swap"
	if err := os.Symlink(decoy, link); err != nil {
		t.Fatal(err)
	}
	exchange := func() error {
		return unix.Renameat2(unix.AT_FDCWD, dir, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE)
	}
	s := &Swapper{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			select {
			case <-s.stop:
				return
			default:
			}
			if err := exchange(); err != nil {
				panic(fmt.Sprintf("testfs: swap %s: %v", dir, err))
			}
			s.swaps.Add(1)
			time.Sleep(200 * time.Microsecond)
			if err := exchange(); err != nil {
				panic(fmt.Sprintf("testfs: put %s back: %v", dir, err))
			}
			time.Sleep(200 * time.Microsecond)
		}
	}()
	t.Cleanup(func() {
		s.Stop()
		os.Remove(link)
	})
	return s
}

// Swaps returns how many times the directory was swapped so far.
func (s *Swapper) Swaps() int64 { return s.swaps.Load() }

// Stop ends the swapping, with the directory in its place, and returns how many times it
// was swapped.
func (s *Swapper) Stop() int64 {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
	return s.swaps.Load()
}

// Snapshot describes every entry under dir, dir itself included, by its path relative to
// dir: its type, permissions, size, modification time, and a file's content digest or a
// symlink's target, so that a file written and removed again shows in its directory's.
func Snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	return walk(t, dir, nil, func(p string, info fs.FileInfo) (string, error) {
		what, err := describe(p, info)
		return fmt.Sprintf("%s size %d mtime %d", what, info.Size(), info.ModTime().UnixNano()), err
	})
}

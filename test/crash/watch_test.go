package crash

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// watcher counts the inotify events of a root's database, its package, staging, trash and
// bin directories, and hands each to on: the moments a command's commit protocol takes a
// step, without any hook in pkg.
type watcher struct {
	f    *os.File
	wd   map[string]int32 // watch descriptors by path under the root
	n    atomic.Int64
	on   func(n int64, wd int32, mask uint32) // called in order, on the watcher's goroutine
	done sync.WaitGroup
}

const dirEvents = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO

func watch(root string) (*watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	w := &watcher{wd: map[string]int32{}}
	for _, dir := range []struct {
		path string
		mask uint32
	}{{".pkg/db", unix.IN_MODIFY}, {"pkgs", dirEvents}, {".pkg/staging", dirEvents | unix.IN_ATTRIB}, {".pkg/trash", dirEvents}, {"bin", dirEvents}} {
		wd, err := unix.InotifyAddWatch(fd, filepath.Join(root, dir.path), dir.mask)
		if err != nil {
			unix.Close(fd)
			return nil, &os.PathError{Op: "inotify_add_watch", Path: dir.path, Err: err}
		}
		w.wd[dir.path] = int32(wd)
	}
	w.f = os.NewFile(uintptr(fd), "inotify")
	w.done.Add(1)
	return w, nil
}

func (w *watcher) run() {
	defer w.done.Done()
	buf := make([]byte, 64<<10)
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			wd := int32(binary.NativeEndian.Uint32(buf[off:]))
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			off += unix.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(buf[off+12:]))
			if k := w.n.Add(1); w.on != nil {
				w.on(k, wd, mask)
			}
		}
	}
}

// close stops the watcher and returns how many events it saw.
func (w *watcher) close() int64 {
	w.f.Close()
	w.done.Wait()
	return w.n.Load()
}

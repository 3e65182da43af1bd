package crash

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// openGate holds each open of one file, or of any file or directory of a filesystem, by
// any process (fanotify's FAN_OPEN_PERM) until it has called before, once, when ready
// reports true of the opening process. A command is thus stopped at a
// known step, the next open of that file, however loaded the machine: a signal sent on an
// inotify event reaches it only after it has gone on for as long as the sender took.
type openGate struct {
	f    *os.File
	done sync.WaitGroup
}

// gateOpens starts an openGate on path, or with filesystem on its whole filesystem; before
// then opens nothing there (the gate would wait on itself).
func gateOpens(path string, filesystem bool, ready func(pid int32) bool, before func()) (*openGate, error) {
	fd, err := unix.FanotifyInit(unix.FAN_CLASS_CONTENT|unix.FAN_CLOEXEC|unix.FAN_NONBLOCK, unix.O_RDONLY|unix.O_LARGEFILE)
	if err != nil {
		return nil, os.NewSyscallError("fanotify_init", err)
	}
	flags, mask := uint(unix.FAN_MARK_ADD), uint64(unix.FAN_OPEN_PERM)
	if filesystem {
		flags, mask = flags|unix.FAN_MARK_FILESYSTEM, mask|unix.FAN_ONDIR
	}
	if err := unix.FanotifyMark(fd, flags, mask, unix.AT_FDCWD, path); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "fanotify_mark", Path: path, Err: err}
	}
	g := &openGate{f: os.NewFile(uintptr(fd), "fanotify")}
	g.done.Add(1)
	go g.run(ready, before)
	return g, nil
}

func (g *openGate) run(ready func(pid int32) bool, before func()) {
	defer g.done.Done()
	buf := make([]byte, 4096)
	fired := false
	for {
		n, err := g.f.Read(buf)
		if err != nil {
			return
		}
		for off := 0; off+int(unsafe.Sizeof(unix.FanotifyEventMetadata{})) <= n; {
			m := (*unix.FanotifyEventMetadata)(unsafe.Pointer(&buf[off]))
			if !fired && ready(m.Pid) {
				fired = true
				before()
			}
			resp := unix.FanotifyResponse{Fd: m.Fd, Response: unix.FAN_ALLOW}
			g.f.Write(unsafe.Slice((*byte)(unsafe.Pointer(&resp)), unsafe.Sizeof(resp)))
			unix.Close(int(m.Fd))
			off += int(m.Event_len)
		}
	}
}

// close stops the gate; the kernel lets through any open still held.
func (g *openGate) close() {
	g.f.Close()
	g.done.Wait()
}

// attribSeen returns a function that reports whether a child of dir had its attributes
// changed (IN_ATTRIB) since attribSeen was called, reading the events the kernel queued
// by then: an event is queued by the call that caused it, so one that a process made
// before an open the gate holds is seen.
func attribSeen(dir string) (seen func() bool, stop func(), err error) {
	return eventsSeen(dir, unix.IN_ATTRIB, 1)
}

// eventsSeen is attribSeen of n events of dir in mask.
func eventsSeen(dir string, mask uint32, n int) (seen func() bool, stop func(), err error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, nil, os.NewSyscallError("inotify_init1", err)
	}
	if _, err := unix.InotifyAddWatch(fd, filepath.Clean(dir), mask); err != nil {
		unix.Close(fd)
		return nil, nil, &os.PathError{Op: "inotify_add_watch", Path: dir, Err: err}
	}
	found := 0
	buf := make([]byte, 64<<10)
	seen = func() bool {
		for found < n {
			got, err := unix.Read(fd, buf)
			if err != nil || got <= 0 {
				break
			}
			for off := 0; off+unix.SizeofInotifyEvent <= got; {
				if binary.NativeEndian.Uint32(buf[off+4:])&mask != 0 {
					found++
				}
				off += unix.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(buf[off+12:]))
			}
		}
		return found >= n
	}
	return seen, func() { unix.Close(fd) }, nil
}

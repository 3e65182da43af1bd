package install

import (
	"cmp"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"pkg/internal/durable"
	"pkg/tarutil"
)

// The data an install writes (small files, tails, copies) is written back while the
// workers go on making files: a worker hands each written file, still open, to a few
// writeback goroutines, which start its write-back at once and wait for it once maxHeld
// later files have been started, then close it. So the disk works while the workers do,
// the workers never wait for it, and the commit waits for the install's own data only,
// not for what other processes left to write (durable.Commit). A tree of more files on
// btrfs has each file's write-back started the same way, not waited for: the commit's
// syncfs waits for it all (stager.stage); so does every tree on btrfs under a kernel
// before 6.1, where durable.ForFS tracks nothing but starts. None of this runs where it
// neither tracks nor starts.

const (
	// maxTracked is the most files with data a staged tree may have for its files to be
	// written back one by one; past it the commit syncs the whole filesystem and waits for
	// no file (on btrfs each one's write-back is still started: stager.stage). File by
	// file, the kernel cannot merge adjacent writes across files, which costs a tree of
	// tens of thousands of files more than a syncfs does, while a syncfs after another
	// process wrote gigabytes costs seconds whatever the tree (bench/sync.sh, KERNEL=1;
	// docs/history.md).
	maxTracked = durable.MaxTracked

	writebackWorkers = 2
	// maxHeld is how many files each writeback goroutine keeps open while their write-back
	// runs: it waits for the oldest, started maxHeld files ago, before taking one more.
	maxHeld = 64
)

// heldFile is a written file, open until its write-back is waited for, or started.
type heldFile struct {
	fd int
	m  *tarutil.Member
}

// writeback makes the files sent to it durable.Files-waited, or, unless wait, starts their
// write-back only. Its goroutines start with the first file sent: a tree whose every file
// is cloned, from the tar and from tail files, sends none.
type writeback struct {
	d       durable.Files
	files   chan heldFile
	wait    bool
	started sync.Once
	wg      sync.WaitGroup
	errs    [writebackWorkers]error // the first of each goroutine
}

// newWriteback returns a writeback by d, waiting for each file's write-back if wait.
func newWriteback(d durable.Files, wait bool) *writeback {
	return &writeback{d: d, files: make(chan heldFile, maxHeld), wait: wait}
}

// send hands h, written, to the goroutines, which close it.
func (wb *writeback) send(h heldFile) {
	wb.started.Do(func() {
		for i := range writebackWorkers {
			wb.wg.Go(func() { wb.errs[i] = wb.run(wb.d) })
		}
	})
	wb.files <- h
}

// run starts the write-back of each file received, waits for it maxHeld files later, if
// wb.wait, and closes it; after the first error it only closes them.
func (wb *writeback) run(d durable.Files) error {
	var err error
	held := make([]heldFile, 0, maxHeld)
	release := func() {
		h := held[0]
		held = append(held[:0], held[1:]...)
		if err == nil && wb.wait {
			if e := d.Wait(h.fd); e != nil {
				err = memberError(h.m, &os.PathError{Op: "write back", Path: h.m.Name, Err: e})
			}
		}
		if e := closeFd(h.fd); err == nil && e != nil {
			err = memberError(h.m, &os.PathError{Op: "close", Path: h.m.Name, Err: e})
		}
	}
	for h := range wb.files {
		if err == nil {
			d.Start(h.fd)
		}
		if len(held) == maxHeld {
			release()
		}
		held = append(held, h)
		if !wb.wait {
			release()
		}
	}
	for len(held) > 0 {
		release()
	}
	return err
}

// finish waits until every file sent has been written back and closed, once no more will
// be sent, and returns the first error.
func (wb *writeback) finish() error {
	close(wb.files)
	wb.wg.Wait()
	for _, err := range wb.errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// How much an untracked tree's workers write between the syncfs calls that write it back
// while they go on (flusher): so many bytes or so many files, whichever comes first, as a
// small file costs the disk a write of its own. The commit's syncfs then finds little left
// to write, at no more device writes (docs/history.md).
const (
	flushBytes = 64 << 20 // 64 MiB
	flushFiles = 4096
)

// flusher writes back, while an untracked tree is staged, what has been written so far:
// one syncfs(2) on a goroutine of its own each time flushBytes or flushFiles more were
// written, one at a time, so that the disk works while the workers do and the commit's syncfs finds
// little left to write. A syncfs, unlike a write-back file by file, lets the kernel merge
// adjacent writes of many small files.
type flusher struct {
	dir   *os.File
	bytes atomic.Int64 // written since the last syncfs started
	files atomic.Int64 // written since the last syncfs started
	busy  atomic.Bool
	wg    sync.WaitGroup
	err   error // the first syncfs error, which a later syncfs on another descriptor may not see
	mu    sync.Mutex
}

// newFlusher returns the flusher of the filesystem holding dir, open at fd, or nil if it
// cannot duplicate fd.
func newFlusher(fd int, dir string) *flusher {
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	return &flusher{dir: os.NewFile(uintptr(dup), dir)}
}

// wrote counts a file of the staged tree into which n bytes were written.
func (f *flusher) wrote(n int64) {
	if f == nil || n == 0 {
		return
	}
	if f.bytes.Add(n) < flushBytes && f.files.Add(1) < flushFiles || !f.busy.CompareAndSwap(false, true) {
		return
	}
	f.bytes.Store(0)
	f.files.Store(0)
	f.wg.Go(func() {
		defer f.busy.Store(false)
		if err := unix.Syncfs(int(f.dir.Fd())); err != nil {
			f.mu.Lock()
			f.err = cmp.Or(f.err, error(&os.PathError{Op: "syncfs", Path: f.dir.Name(), Err: err}))
			f.mu.Unlock()
		}
	})
}

// finish waits for the syncfs under way and returns the first error.
func (f *flusher) finish() error {
	if f == nil {
		return nil
	}
	f.wg.Wait()
	f.dir.Close()
	return f.err
}

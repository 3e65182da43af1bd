package install

import (
	"archive/tar"
	"os"
	"sync"

	"pkg/internal/durable"
	"pkg/tarutil"
)

// The data an install writes (small files, tails, copies) is written back while the
// workers go on making files: a worker hands each written file, still open, to a few
// writeback goroutines, which start its write-back at once and wait for it once maxHeld
// later files have been started, then close it. So the disk works while the workers do,
// the workers never wait for it, and the commit waits for the install's own data only,
// not for what other processes left to write (durable.Commit).

const (
	// maxTracked is the most files with data a staged tree may have for its files to be
	// written back one by one; past it the commit syncs the whole filesystem, and starts
	// nothing early. File by file, the kernel cannot merge adjacent writes across files:
	// on loop XFS the kernel-shaped tree (80k files) took 1.7 times its --no-sync time so,
	// 1.4 with one syncfs (bench/sync.sh, KERNEL=1), while a syncfs after another process
	// wrote 3 GiB costs seconds whatever the tree. Even only starting each file's
	// write-back as it is written, then one syncfs, sent the device 81,000 writes against
	// 35,000 for the syncfs alone and took 20.9 and 28.1 s against 12.9 and 19.7 s (two
	// alternating rounds, load 5.5 to 8). A few thousand files cost well under that.
	maxTracked = 4096

	writebackWorkers = 2
	// maxHeld is how many files each writeback goroutine keeps open while their write-back
	// runs: it waits for the oldest, started maxHeld files ago, before taking one more.
	maxHeld = 64
)

// dataFiles counts the regular members with data.
func dataFiles(members []tarutil.Member) int {
	n := 0
	for i := range members {
		if members[i].Type == tar.TypeReg && members[i].Size > 0 {
			n++
		}
	}
	return n
}

// heldFile is a written file, open until its write-back is waited for.
type heldFile struct {
	fd int
	m  *tarutil.Member
}

// writeback makes the files sent to it durable.Files-waited.
type writeback struct {
	files chan heldFile
	wg    sync.WaitGroup
	errs  [writebackWorkers]error // the first of each goroutine
}

func startWriteback(d durable.Files) *writeback {
	wb := &writeback{files: make(chan heldFile, maxHeld)}
	for i := range writebackWorkers {
		wb.wg.Go(func() { wb.errs[i] = wb.run(d) })
	}
	return wb
}

// run starts the write-back of each file received, waits for it maxHeld files later, and
// closes it; after the first error it only closes them.
func (wb *writeback) run(d durable.Files) error {
	var err error
	held := make([]heldFile, 0, maxHeld)
	release := func() {
		h := held[0]
		held = append(held[:0], held[1:]...)
		if err == nil {
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

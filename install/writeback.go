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
// not for what other processes left to write (durable.Commit). For a tree of more than
// maxTracked files the goroutines only start each file's write-back and close it, and the
// commit's syncfs then finds most of the tree written.

const (
	// maxTracked is the most files with data a staged tree may have for its files to be
	// waited for one by one; past it the commit syncs the whole filesystem. Waiting file by
	// file holds the workers to the disk's pace, a few files behind: on loop XFS (direct
	// I/O) the kernel-shaped tree (80k files) took 46.6 s so against 31 to 41 s with a
	// syncfs, with or without an early start (bench/sync.sh, KERNEL=1, load 13), while a
	// syncfs after another process wrote 3 GiB costs seconds whatever the tree. A few
	// thousand files cost well under that.
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

// writeback starts the write-back of the files sent to it and, if wait is set, waits for
// each (durable.Files).
type writeback struct {
	files chan heldFile
	wait  bool
	wg    sync.WaitGroup
	errs  [writebackWorkers]error // the first of each goroutine
}

func startWriteback(d durable.Files, wait bool) *writeback {
	wb := &writeback{files: make(chan heldFile, maxHeld), wait: wait}
	for i := range writebackWorkers {
		wb.wg.Go(func() { wb.errs[i] = wb.run(d) })
	}
	return wb
}

// run starts the write-back of each file received and, if wb.wait is set, waits for it
// maxHeld files later; then it closes it. After the first error it only closes them.
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
		if !wb.wait {
			if e := closeFd(h.fd); err == nil && e != nil {
				err = memberError(h.m, &os.PathError{Op: "close", Path: h.m.Name, Err: e})
			}
			continue
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

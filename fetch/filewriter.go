package fetch

import (
	"cmp"
	"os"
	"sync"
)

// A cache file is written in buffers of fileBufSize bytes, from goroutines of its own,
// through the page cache in pieces of pageCacheWrite bytes. Only where the boot cannot be
// told, and the file is synced at once (durable.go), is it written with O_DIRECT where the
// filesystem allows, which costs less CPU than the page cache copy plus the writeback the
// fsync waits for. Two writers with O_DIRECT, so the aligning goroutine does not wait for a
// free buffer; one through the page cache, where two writers of one file contend for its
// inode lock. Larger buffers are slower (bench/fetch.sh; figures in docs/history.md).
const (
	fileBufSize = 1 << 20 // 1 MiB
	fileBufs    = 8
	directAlign = 4096 // O_DIRECT alignment of buffers, offsets and lengths; covers every device in use

	// pageCacheWrite bounds a write through the page cache. Large writes get large folios,
	// which on a VM with free page reporting can cost several times the system time of
	// small writes (docs/history.md).
	pageCacheWrite = 128 << 10
)

// fileWriter writes a new file from other goroutines.
type fileWriter struct {
	f    *os.File
	buf  []byte // being filled
	free chan []byte
	full chan chunk
	wg   sync.WaitGroup
	n    int64 // bytes accepted
	sent int64 // bytes handed to the writers
	made int   // buffers taken from directBufs, at most fileBufs

	writers int // goroutines writing full buffers

	mu     sync.Mutex
	direct bool  // the file is open with O_DIRECT
	err    error // the first write error
}

// chunk is a buffer to write at an offset.
type chunk struct {
	b   []byte
	off int64
}

// newFileWriter returns a writer of f, which writes with O_DIRECT when direct is set and
// the filesystem allows it.
func newFileWriter(f *os.File, direct bool) *fileWriter {
	w := &fileWriter{f: f, direct: direct && setDirect(f), free: make(chan []byte, fileBufs), full: make(chan chunk, fileBufs)}
	w.writers = 1
	if w.direct {
		w.writers = 2
	}
	for range w.writers {
		w.wg.Go(w.loop)
	}
	return w
}

func (w *fileWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		k := copy(w.Lend(len(p)), p)
		if err := w.Fill(k); err != nil {
			return written, err
		}
		p, written = p[k:], written+k
	}
	return written, nil
}

// Lend returns up to n bytes of the buffer being filled, at the write position, for Fill
// (tarutil.Lender): Align reads member data into it instead of copying it in.
func (w *fileWriter) Lend(n int) []byte {
	if w.buf == nil {
		w.buf = w.next()
	}
	return w.buf[len(w.buf):min(cap(w.buf), len(w.buf)+n)]
}

// Fill writes the first k bytes of what Lend returned last.
func (w *fileWriter) Fill(k int) error {
	if err := w.failed(); err != nil {
		return err
	}
	w.buf = w.buf[:len(w.buf)+k]
	w.n += int64(k)
	if len(w.buf) == cap(w.buf) {
		w.send()
	}
	return nil
}

// Hold is how many bytes Fill takes, at the least, before a byte it took is lent again.
// With one writer, buffers come back in the order they were filled, so a full buffer is
// lent again only after the next one is filled; two writers (O_DIRECT) may give back the
// last first, and hold nothing.
func (w *fileWriter) Hold() int {
	if w.writers > 1 {
		return 0
	}
	return fileBufSize
}

// next returns a free buffer: a new one until fileBufs are taken, so that every buffer is
// filled once before any is lent again (Hold), then the one given back first.
func (w *fileWriter) next() []byte {
	if w.made < fileBufs {
		w.made++
		return directBufs.get(fileBufSize)
	}
	return <-w.free
}

// release gives the buffers back to directBufs once the writers have stopped.
func (w *fileWriter) release() {
	if w.buf != nil {
		directBufs.put(w.buf)
		w.buf, w.made = nil, w.made-1
	}
	for w.made > 0 {
		directBufs.put(<-w.free)
		w.made--
	}
}

func (w *fileWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// send hands the buffer being filled to the writers.
func (w *fileWriter) send() {
	w.full <- chunk{w.buf, w.sent}
	w.sent += int64(len(w.buf))
	w.buf = nil
}

// loop writes full buffers at their offsets.
func (w *fileWriter) loop() {
	for c := range w.full {
		if w.failed() == nil {
			if err := w.writeAt(c.b, c.off); err != nil {
				w.mu.Lock()
				w.err = cmp.Or(w.err, err)
				w.mu.Unlock()
			}
		}
		w.free <- c.b[:0]
	}
}

func (w *fileWriter) isDirect() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.direct
}

// writeAt writes b at off. The last buffer of a direct file is padded to the alignment
// with zeros; Close truncates the padding. A filesystem that refuses a direct write makes
// the file buffered, for good.
func (w *fileWriter) writeAt(b []byte, off int64) error {
	if w.isDirect() {
		padded := b[:(len(b)+directAlign-1)&^(directAlign-1)]
		clear(padded[len(b):])
		_, err := w.f.WriteAt(padded, off)
		if !isDirectRefused(err) {
			return err
		}
		w.mu.Lock()
		w.direct = w.direct && !clearDirect(w.f)
		direct := w.direct
		w.mu.Unlock()
		if direct {
			return err
		}
	}
	for len(b) > 0 {
		k := min(len(b), pageCacheWrite)
		if _, err := w.f.WriteAt(b[:k], off); err != nil {
			return err
		}
		b, off = b[k:], off+int64(k)
	}
	return nil
}

// Close writes what is buffered, waits for the writes, and cuts the padding off, if any.
// It does not close the file.
//
// A file of the right size already is left alone: on XFS, an ftruncate to a size that is
// not a multiple of the block, even the file's own size, zeroes the rest of the last block
// and then writes back and waits for all of the file's data that is not on disk yet, which
// is the wait the page cache is there to avoid.
func (w *fileWriter) Close() error {
	if len(w.buf) > 0 {
		w.send()
	}
	close(w.full)
	w.wg.Wait()
	w.release()
	if err := w.failed(); err != nil {
		return err
	}
	if info, err := w.f.Stat(); err == nil && info.Size() == w.n {
		return nil
	}
	return w.f.Truncate(w.n)
}

// abort stops the writes without finishing the file.
func (w *fileWriter) abort() {
	w.mu.Lock()
	if w.err == nil {
		w.err = os.ErrClosed
	}
	w.mu.Unlock()
	close(w.full)
	w.wg.Wait()
	w.release()
}

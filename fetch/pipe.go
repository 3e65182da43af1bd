package fetch

import (
	"errors"
	"io"
	"sync"
)

// errReaderGone is what fill returns when the reading side stopped first.
var errReaderGone = errors.New("fetch: pipe reader stopped")

// pipe carries a stream from one goroutine to another in chunks, so that both work at
// once: the writer reads its source straight into a free chunk, the reader copies out of
// a full one. It holds at most its chunks' bytes, and costs one copy, as io.Pipe does,
// but lets the writer run ahead by several chunks.
type pipe struct {
	size int // of a chunk
	made int // chunks taken from pipeBufs, at most cap(free); the writer's
	free chan []byte
	full chan []byte
	done chan struct{} // closed when the reader stops
	stop sync.Once
	err  error  // the writer's last error, io.EOF at a clean end; set before full is closed
	buf  []byte // the chunk the reader is reading, to give back
	cur  []byte // its unread part
}

func newPipe(chunks, size int) *pipe {
	return &pipe{size: size, free: make(chan []byte, chunks), full: make(chan []byte, chunks), done: make(chan struct{})}
}

// next returns a free chunk for the writer, or nil once the reader stopped: one given
// back, else a new one while fewer than the pipe's chunks are taken, else the first given
// back.
func (p *pipe) next() []byte {
	select {
	case <-p.done:
		return nil
	case b := <-p.free:
		return b
	default:
	}
	if p.made < cap(p.free) {
		p.made++
		return pipeBufs.get(p.size)[:p.size]
	}
	select {
	case b := <-p.free:
		return b
	case <-p.done:
		return nil
	}
}

// release gives the pipe's chunks back to pipeBufs. Both sides must have stopped.
func (p *pipe) release() {
	if p.buf != nil {
		pipeBufs.put(p.buf)
		p.buf, p.cur = nil, nil
	}
	for _, ch := range []chan []byte{p.free, p.full} {
		for drained := false; !drained; {
			select {
			case b, ok := <-ch:
				if ok {
					pipeBufs.put(b)
				}
				drained = !ok
			default:
				drained = true
			}
		}
	}
}

// fill reads r into the pipe until r returns an error or the reader stops, then closes
// the writing side with that error. It returns r's error (nil at io.EOF), or
// errReaderGone.
func (p *pipe) fill(r io.Reader) error {
	for {
		b := p.next()
		if b == nil {
			p.closeWrite(errReaderGone)
			return errReaderGone
		}
		n, err := r.Read(b)
		if n > 0 {
			p.full <- b[:n] // never blocks: there are as many slots as chunks
		} else {
			p.free <- b
		}
		if err != nil {
			p.closeWrite(err)
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

func (p *pipe) closeWrite(err error) {
	p.err = err
	close(p.full)
}

// Read returns the writer's bytes in order, then its error.
func (p *pipe) Read(b []byte) (int, error) {
	if len(p.cur) == 0 {
		if p.buf != nil {
			p.free <- p.buf[:cap(p.buf)]
			p.buf = nil
		}
		c, ok := <-p.full
		if !ok {
			return 0, p.err
		}
		p.buf, p.cur = c, c
	}
	n := copy(b, p.cur)
	p.cur = p.cur[n:]
	return n, nil
}

// ReadByte returns the next byte. With it the pipe counts as a buffered reader, which
// tarutil.Align reads without a buffer of its own.
func (p *pipe) ReadByte() (byte, error) {
	var b [1]byte
	if _, err := p.Read(b[:]); err != nil {
		return 0, err
	}
	return b[0], nil
}

// closeRead tells the writer to stop. The reader must call it when it stops reading.
func (p *pipe) closeRead() {
	p.stop.Do(func() { close(p.done) })
}

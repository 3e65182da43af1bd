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
	free chan []byte
	full chan []byte
	done chan struct{} // closed when the reader stops
	stop sync.Once
	err  error  // the writer's last error, io.EOF at a clean end; set before full is closed
	buf  []byte // the chunk the reader is reading, to give back
	cur  []byte // its unread part
}

func newPipe(chunks, size int) *pipe {
	p := &pipe{free: make(chan []byte, chunks), full: make(chan []byte, chunks), done: make(chan struct{})}
	for range chunks {
		p.free <- make([]byte, size)
	}
	return p
}

// fill reads r into the pipe until r returns an error or the reader stops, then closes
// the writing side with that error. It returns r's error (nil at io.EOF), or
// errReaderGone.
func (p *pipe) fill(r io.Reader) error {
	for {
		var b []byte
		select {
		case b = <-p.free:
		case <-p.done:
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

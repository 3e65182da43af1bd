package fetch

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"

	"github.com/therootcompany/xz"
)

// xzReader decodes an xz stream (The .xz File Format 1.0.4) block by block. A splitter
// goroutine walks the stream's structure: it refuses a block whose dictionary is over
// maxWindow before any decoder sees its header, and checks the index and footer against
// the blocks it saw. Each block goes to the decoder as a stream of its own, made of the
// stream's header, the block as it is, and an index of that one block, so the decoder
// checks the block's sizes and its CRC32, CRC64 or SHA-256.
//
// A block whose header gives both its sizes, as multi-threaded xz writes them, is read
// whole and decoded by one of GOMAXPROCS workers while the splitter reads the next; its
// output is returned in order. Any other block (single-threaded xz writes one for the
// whole stream) is decoded as it is read. Either is decoded by the host's xz where there
// is one (xzproc.go), else by the Go decoder: a worker's, or the reader's caller's.

var magicXz = []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}

// errXZ reports an xz stream whose structure the splitter cannot follow;
// errXZRecord and errXZFooter, an index or footer that its checks refuse.
var (
	errXZ       = errors.New("xz: malformed stream")
	errXZRecord = fmt.Errorf("%w: index record does not match its block", errXZ)
	errXZFooter = fmt.Errorf("%w: index or footer does not match", errXZ)
)

// errWindow refuses an xz block whose dictionary is over maxWindow, before the
// decoder allocates it.
var errWindow = errors.New("fetch: decompression window over pkg's limit")

const (
	xzHeaderLen = 12 // stream header and stream footer
	xzLZMA2     = 0x21
	xzEndLen    = 2 + 2*10 + 3 + 4 + xzHeaderLen // the longest index of one block, and the footer

	// xzInFlight bounds the bytes of the blocks read ahead, compressed and decoded; a
	// block is decoded in parallel when its bytes are at most xzMaxBlock. Multi-threaded
	// xz -6 makes blocks of 24 MiB, -9 of 192 MiB, decoded as they are read. It leaves
	// room under the heap's soft limit (internal/process): with 160 MiB in flight and
	// first-fit reuse of buffers, a fetch of linux-source-6.1.tar.xz (55 blocks of 24 MiB)
	// held 256 MB and collected 475 times; three blocks of 24 MiB, the one being read and
	// one for each of two workers, are enough to keep them busy.
	xzInFlight = 96 << 20 // 96 MiB
	// xzFree bounds the buffers kept for the next blocks: a block's output and input.
	xzFree     = 32 << 20 // 32 MiB
	xzMaxBlock = 64 << 20 // 64 MiB
)

// xzReader is the io.ReadCloser of the decoded stream, with a sticky error.
type xzReader struct {
	order  chan *xzJob // every block's job in stream order, then one with end set
	stop   chan struct{}
	done   chan struct{} // closed when the splitter no longer reads the input
	once   sync.Once
	budget *xzBudget
	seq    *xz.Reader // decodes the streamed blocks, where there is no hostXZ
	proc   *xzProc    // the xz process decoding the current streamed block
	cur    *xzJob     // the job being returned
	out    []byte     // the unread output of a buffered job
	dec    io.Reader  // the decoder of a streamed job
	err    error

	mu        sync.Mutex
	free      [][]byte       // buffers of the jobs returned, for the next ones
	freeBytes int64          // their capacity
	streaming *io.PipeReader // the input of the streamed block the splitter writes
}

// xzJob is one block: buffered (in, out, done) or streamed (pr).
type xzJob struct {
	in     []byte   // the block as a stream of its own
	out    []byte   // its output, of the size its header gives; or
	xz     string   // the host's xz, to decode it into file, where out is nil
	file   *os.File // its output, where xz wrote it (decodeBlockHost)
	size   int64    // the size its header gives
	weight int64
	done   chan struct{} // closed when out is decoded or err set
	err    error
	pr     *io.PipeReader // a streamed block's stream, written by the splitter
	end    error          // of the last job: io.EOF or the splitter's error
	block  int            // its number in the input, from 1
	at     int64          // its offset in the input
}

// wrap names the block in err.
func (j *xzJob) wrap(err error) error {
	return &xzBlockError{block: j.block, at: j.at, err: err}
}

// xzBlockError is an error of the xz block numbered block, from 1, that starts at byte
// at of the stream.
type xzBlockError struct {
	block int
	at    int64
	err   error
}

func (e *xzBlockError) Error() string {
	return fmt.Sprintf("xz block %d at byte %d: %v", e.block, e.at, e.err)
}

func (e *xzBlockError) Unwrap() error { return e.err }

func isXZ(head []byte) bool { return bytes.HasPrefix(head, magicXz) }

func openXZ(br *bufio.Reader, _ io.Reader) (io.ReadCloser, error) { return newXZReader(br), nil }

func newXZReader(br *bufio.Reader) *xzReader {
	workers := runtime.GOMAXPROCS(0)
	x := &xzReader{
		order:  make(chan *xzJob, 2*workers),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
		budget: &xzBudget{max: xzInFlight},
	}
	x.budget.cond.L = &x.budget.mu
	work := make(chan *xzJob, 2*workers)
	for range workers {
		go decodeBlocks(work)
	}
	s := &xzSplitter{r: br, x: x, work: work}
	go s.run()
	return x
}

func (x *xzReader) Read(p []byte) (int, error) {
	for len(x.out) == 0 && x.dec == nil {
		if x.err != nil {
			return 0, x.err
		}
		x.err = x.next()
	}
	if x.dec == nil {
		n := copy(p, x.out)
		x.out = x.out[n:]
		return n, nil
	}
	n, err := x.dec.Read(p)
	switch {
	case err == io.EOF:
		x.dec = nil
		err = nil
	case err != nil:
		x.err = x.cur.wrap(err)
		err = x.err
	}
	return n, err
}

// next waits for the next block and makes its output current. At the end of the
// stream it returns io.EOF, or the error that ended it.
func (x *xzReader) next() error {
	if x.proc != nil {
		x.proc.stop()
		x.proc = nil
	}
	if x.cur != nil {
		x.budget.release(x.cur.weight)
		x.put(x.cur.in)
		x.put(x.cur.out)
		x.cur.close()
		x.cur = nil
	}
	j := <-x.order
	if j.end != nil {
		return j.end
	}
	x.cur = j
	if j.pr != nil && hostXZ() != "" {
		p, err := startXZ(hostXZ(), j.pr)
		if err != nil {
			return j.wrap(err)
		}
		x.proc, x.dec = p, p
		return nil
	}
	if j.pr != nil {
		if x.seq == nil {
			var err error
			if x.seq, err = xz.NewReader(nil, maxWindow); err != nil {
				return err
			}
		}
		if err := x.seq.Reset(j.pr); err != nil {
			return j.wrap(err)
		}
		x.seq.Multistream(false)
		x.dec = x.seq
		return nil
	}
	<-j.done
	if j.err != nil {
		return j.wrap(j.err)
	}
	if j.file != nil {
		x.dec = io.NewSectionReader(j.file, 0, j.size)
		return nil
	}
	x.out = j.out
	return nil
}

// close closes the file of a job decoded by the host's xz.
func (j *xzJob) close() {
	if j.file != nil {
		j.file.Close()
	}
}

// get returns a buffer of n bytes: the smallest of the free ones that is large enough, so
// that a block's input does not take the buffer the next block's output needs.
func (x *xzReader) get(n int64) []byte {
	x.mu.Lock()
	defer x.mu.Unlock()
	best := -1
	for i, b := range x.free {
		if int64(cap(b)) >= n && (best < 0 || cap(b) < cap(x.free[best])) {
			best = i
		}
	}
	if best < 0 {
		return make([]byte, n)
	}
	b := x.free[best]
	x.free = append(x.free[:best], x.free[best+1:]...)
	x.freeBytes -= int64(cap(b))
	return b[:n]
}

// put keeps b for get, unless the free buffers would then hold more than xzFree.
func (x *xzReader) put(b []byte) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if c := int64(cap(b)); c > 0 && x.freeBytes+c <= xzFree {
		x.free = append(x.free, b)
		x.freeBytes += c
	}
}

// Close stops the splitter and the workers, and returns once the splitter reads the input no more.
func (x *xzReader) Close() error {
	x.once.Do(func() {
		close(x.stop)
		x.budget.close()
		x.mu.Lock()
		if x.streaming != nil {
			x.streaming.CloseWithError(errReaderGone)
		}
		x.mu.Unlock()
		if x.proc != nil {
			x.proc.stop()
		}
		if x.cur != nil {
			x.cur.close()
		}
		x.out, x.dec, x.err = nil, nil, errStopped
	})
	<-x.done // the input is the caller's again: a .deb reads on after its data member
	// The jobs queued for the reader will not be read: their files go once decoded (the
	// splitter sends nothing more once done is closed).
	for {
		select {
		case j := <-x.order:
			if j.done != nil {
				go func() { <-j.done; j.close() }()
			}
		default:
			return nil
		}
	}
}

// decodeBlocks decodes the buffered blocks sent on work.
func decodeBlocks(work <-chan *xzJob) {
	var zr *xz.Reader
	for j := range work {
		if j.out == nil {
			j.err = decodeBlockHost(j)
			close(j.done)
			continue
		}
		if zr == nil {
			zr, j.err = xz.NewReader(nil, maxWindow)
		}
		if j.err == nil {
			j.err = decodeBlock(zr, j)
		}
		close(j.done)
	}
}

func decodeBlock(zr *xz.Reader, j *xzJob) error {
	if err := zr.Reset(bytes.NewReader(j.in)); err != nil {
		return err
	}
	zr.Multistream(false)
	if _, err := io.ReadFull(zr, j.out); err != nil {
		return err
	}
	var b [1]byte
	if n, err := zr.Read(b[:]); n > 0 || err != io.EOF { // reads and checks the index
		if err == nil || err == io.EOF {
			err = errXZ
		}
		return err
	}
	return nil
}

// decodeBlockHost decodes a buffered block with the host's xz, j.xz, into a file in
// memory, j.file, which xz writes itself: the output is not in the Go heap, whose soft
// limit (internal/process) three blocks of 24 MiB would reach, making the collector run
// every few MiB allocated (docs/history.md). xz checks the block's sizes and check
// against the one-block index the splitter wrote after it; it needs about half the CPU of
// the Go decoder.
func decodeBlockHost(j *xzJob) error {
	f, err := memFile("xz-block")
	if err != nil {
		return err
	}
	cmd := exec.Command(j.xz, xzArgs...)
	detach(cmd)
	var stderr limitedBuffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(j.in), f, &stderr
	err = cmd.Run()
	if err == nil {
		var info os.FileInfo
		if info, err = f.Stat(); err == nil && info.Size() != j.size {
			err = errXZ // xz ended well, with another size than the header gives
		}
	} else if stderr.Len() > 0 {
		err = errors.New(string(bytes.TrimSpace(stderr.Bytes())))
	}
	if err != nil {
		f.Close()
		return err
	}
	j.file = f
	return nil
}

// xzBudget counts the bytes of the blocks in flight.
type xzBudget struct {
	mu     sync.Mutex
	cond   sync.Cond
	used   int64
	max    int64
	closed bool
}

// acquire waits until n more bytes fit, or none are in flight. It reports false once
// the budget is closed.
func (b *xzBudget) acquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for !b.closed && b.used > 0 && b.used+n > b.max {
		b.cond.Wait()
	}
	b.used += n
	return !b.closed
}

func (b *xzBudget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
	b.cond.Broadcast()
}

func (b *xzBudget) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.cond.Broadcast()
}

// xzRecord is an index record: a block's size without its padding, and its output's.
type xzRecord struct{ unpadded, size int64 }

// xzSplitter reads the stream and hands its blocks on.
type xzSplitter struct {
	r       *bufio.Reader
	x       *xzReader
	work    chan<- *xzJob
	header  [xzHeaderLen]byte // of the current stream
	check   int64             // size of each block's check
	records []xzRecord        // of the current stream's blocks
	blocks  int               // blocks so far, in all streams
	at      int64             // bytes read so far
}

// errStopped ends the splitter when the reader is closed.
var errStopped = errors.New("xz: reader closed")

func (s *xzSplitter) run() {
	defer close(s.x.done)
	defer close(s.work)
	err := s.streams()
	if err == errStopped {
		return
	}
	select {
	case s.x.order <- &xzJob{end: err}:
	case <-s.x.stop:
	}
}

// send queues j for the reader, and for a worker if it is buffered.
func (s *xzSplitter) send(j *xzJob) error {
	select {
	case s.x.order <- j:
	case <-s.x.stop:
		return errStopped
	}
	if j.done != nil {
		s.work <- j // at most until a worker takes a job: work has the room order has
	}
	return nil
}

func (s *xzSplitter) read(b []byte) error {
	n, err := io.ReadFull(s.r, b)
	s.at += int64(n)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// streams reads streams and the padding between them to the end of the input.
func (s *xzSplitter) streams() error {
	for {
		if err := s.stream(); err != nil {
			return err
		}
		for {
			b, err := s.r.Peek(4)
			if len(b) == 0 && err == io.EOF {
				return io.EOF
			}
			if len(b) < 4 || !bytes.Equal(b, []byte{0, 0, 0, 0}) {
				break
			}
			s.r.Discard(4)
			s.at += 4
		}
	}
}

func (s *xzSplitter) stream() error {
	h := s.header[:]
	if err := s.read(h); err != nil {
		return err
	}
	if !bytes.HasPrefix(h, magicXz) || binary.LittleEndian.Uint32(h[8:]) != crc32.ChecksumIEEE(h[6:8]) {
		return errXZ
	}
	s.check = checkSize(h[7] & 0x0f)
	s.records = s.records[:0]
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return io.ErrUnexpectedEOF
		}
		s.at++
		if c == 0 {
			return s.index()
		}
		if err := s.block(c); err != nil {
			return err
		}
	}
}

// checkSize is the size of a block's check for the check ID of the stream flags.
func checkSize(id byte) int64 {
	if id == 0 {
		return 0
	}
	return 4 << ((id - 1) / 3)
}

// block reads a block whose header starts with the size byte c.
func (s *xzSplitter) block(c byte) error {
	start := s.at - 1
	h := make([]byte, (int(c)+1)*4)
	h[0] = c
	if err := s.read(h[1:]); err != nil {
		return err
	}
	s.blocks++
	comp, size, err := parseBlockHeader(h)
	if err != nil {
		return &xzBlockError{block: s.blocks, at: start, err: err}
	}
	pad := (4 - comp%4) % 4
	weight := comp + pad + s.check + size
	if comp < 0 || size < 0 || weight > xzMaxBlock {
		return s.streamed(h, start)
	}
	if !s.x.budget.acquire(weight) {
		return errStopped
	}
	body := int64(xzHeaderLen+len(h)) + comp + pad + s.check
	in := s.x.get(body + xzEndLen)[:body]
	copy(in, s.header[:])
	copy(in[xzHeaderLen:], h)
	if err := s.read(in[xzHeaderLen+len(h):]); err != nil {
		s.x.budget.release(weight)
		return err
	}
	r := xzRecord{int64(len(h)) + comp + s.check, size}
	s.records = append(s.records, r)
	in = s.appendEnd(in, r)
	j := &xzJob{in: in, size: size, weight: weight, done: make(chan struct{}), block: s.blocks, at: start}
	if j.xz = hostXZ(); j.xz == "" || !memFiles() {
		j.out = s.x.get(size)
	}
	return s.send(j)
}

// parseBlockHeader checks a block header and its filters and returns the compressed and
// uncompressed sizes it gives, -1 for those it does not.
func parseBlockHeader(h []byte) (comp, size int64, err error) {
	n := len(h) - 4
	if binary.LittleEndian.Uint32(h[n:]) != crc32.ChecksumIEEE(h[:n]) {
		return 0, 0, errXZ
	}
	r := bytes.NewReader(h[1:n])
	flags, _ := r.ReadByte()
	comp, size = -1, -1
	for _, f := range []struct {
		bit byte
		v   *int64
	}{{0x40, &comp}, {0x80, &size}} {
		if flags&f.bit != 0 {
			v, err := readVarint(r)
			if err != nil || v > 1<<62 || f.bit == 0x40 && v == 0 {
				return 0, 0, errXZ
			}
			*f.v = int64(v)
		}
	}
	return comp, size, checkFilters(r, int(flags&0x03)+1)
}

// checkFilters reads count filter flags from r and refuses an oversized LZMA2 dictionary.
func checkFilters(r *bytes.Reader, count int) error {
	for range count {
		id, err := readVarint(r)
		if err != nil {
			return err
		}
		n, err := readVarint(r)
		if err != nil || n > uint64(r.Len()) {
			return errXZ
		}
		props := make([]byte, n)
		r.Read(props)
		if id == xzLZMA2 && n == 1 {
			if d := dictSize(props[0]); d > maxWindow {
				return fmt.Errorf("%w: dictionary of %d MiB, over %d MiB", errWindow, d>>20, maxWindow>>20)
			}
		}
	}
	return nil
}

func readVarint(r io.ByteReader) (uint64, error) {
	var x uint64
	for i := range 9 {
		c, err := r.ReadByte()
		if err != nil {
			return 0, errXZ
		}
		x |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return x, nil
		}
	}
	return 0, errXZ
}

// dictSize decodes an LZMA2 dictionary size property (40 means 4 GiB - 1).
func dictSize(p byte) int64 {
	if p >= 40 {
		return 1<<32 - 1
	}
	return int64(2|p&1) << (p/2 + 11)
}

// appendEnd appends the index of the one block r and the stream footer to b.
func (s *xzSplitter) appendEnd(b []byte, r xzRecord) []byte {
	start := len(b)
	b = append(b, 0, 1)
	b = binary.AppendUvarint(b, uint64(r.unpadded))
	b = binary.AppendUvarint(b, uint64(r.size))
	for (len(b)-start)%4 != 0 {
		b = append(b, 0)
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
	foot := binary.LittleEndian.AppendUint32(nil, uint32((len(b)-start)/4-1))
	foot = append(foot, s.header[6:8]...)
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(foot))
	return append(append(b, foot...), 'Y', 'Z')
}

// streamed hands on the block whose header is h as a stream the reader decodes as the
// splitter writes it, walking its LZMA2 chunks to find its end and its sizes.
func (s *xzSplitter) streamed(h []byte, start int64) error {
	pr, pw := io.Pipe()
	x := s.x
	x.mu.Lock()
	x.streaming = pr // Close closes it: the reader may never reach this block
	x.mu.Unlock()
	select {
	case <-x.stop: // Close may have looked for x.streaming before it was set
		return errStopped
	default:
	}
	if err := s.send(&xzJob{pr: pr, block: s.blocks, at: start}); err != nil {
		return err
	}
	err := s.writeStreamed(pw, h)
	pw.CloseWithError(err)
	if err == errReaderGone {
		return errStopped
	}
	return err
}

func (s *xzSplitter) writeStreamed(w io.Writer, h []byte) error {
	if _, err := w.Write(append(s.header[:], h...)); err != nil {
		return err
	}
	comp, size, err := s.chunks(w)
	if err != nil {
		return err
	}
	n := (4-comp%4)%4 + s.check
	if _, err := io.CopyN(w, s.r, n); err != nil {
		return err
	}
	s.at += n
	r := xzRecord{int64(len(h)) + comp + s.check, size}
	s.records = append(s.records, r)
	_, err = w.Write(s.appendEnd(nil, r))
	return err
}

// chunks copies a block's LZMA2 chunks to w and returns their compressed size, end
// marker included, and their uncompressed size.
func (s *xzSplitter) chunks(w io.Writer) (comp, size int64, err error) {
	var h [6]byte
	for {
		if err := s.read(h[:1]); err != nil {
			return 0, 0, err
		}
		c := h[0]
		var n, packed, unpacked int64
		switch {
		case c == 0:
			_, err := w.Write(h[:1])
			return comp + 1, size, err
		case c == 1 || c == 2: // uncompressed
			n = 3
		case c >= 0xc0: // LZMA, with new properties
			n = 6
		case c >= 0x80:
			n = 5
		default:
			return 0, 0, errXZ
		}
		if err := s.read(h[1:n]); err != nil {
			return 0, 0, err
		}
		if n == 3 {
			packed = int64(h[1])<<8 | int64(h[2]) + 1
			unpacked = packed
		} else {
			unpacked = int64(c&0x1f)<<16 | int64(h[1])<<8 | int64(h[2]) + 1
			packed = int64(h[3])<<8 | int64(h[4]) + 1
		}
		if _, err := w.Write(h[:n]); err != nil {
			return 0, 0, err
		}
		if _, err := io.CopyN(w, s.r, packed); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, 0, err
		}
		s.at += packed
		comp += n + packed
		size += unpacked
	}
}

// index reads the stream's index, after its indicator, and the stream footer, and checks
// them against the blocks read.
func (s *xzSplitter) index() error {
	b := []byte{0}
	r := &byteRecorder{r: s.r, b: &b}
	count, err := readVarint(r)
	if err != nil || count != uint64(len(s.records)) {
		return fmt.Errorf("%w: index of %d blocks after %d", errXZ, count, len(s.records))
	}
	for i, want := range s.records {
		unpadded, err1 := readVarint(r)
		size, err2 := readVarint(r)
		if err1 != nil || err2 != nil || unpadded != uint64(want.unpadded) || size != uint64(want.size) {
			return fmt.Errorf("%w: record %d", errXZRecord, i+1)
		}
	}
	s.at += int64(len(b)) - 1
	pad := make([]byte, (4-len(b)%4)%4+4+xzHeaderLen)
	if err := s.read(pad); err != nil {
		return err
	}
	p, crc, foot := pad[:len(pad)-4-xzHeaderLen], pad[len(pad)-4-xzHeaderLen:len(pad)-xzHeaderLen], pad[len(pad)-xzHeaderLen:]
	b = append(b, p...)
	switch {
	case !bytes.Equal(p, make([]byte, len(p))),
		binary.LittleEndian.Uint32(crc) != crc32.ChecksumIEEE(b),
		binary.LittleEndian.Uint32(foot) != crc32.ChecksumIEEE(foot[4:10]),
		binary.LittleEndian.Uint32(foot[4:]) != uint32(len(b)/4),
		!bytes.Equal(foot[8:10], s.header[6:8]),
		string(foot[10:]) != "YZ":
		return errXZFooter
	}
	return nil
}

// byteRecorder is an io.ByteReader that appends the bytes it reads to b.
type byteRecorder struct {
	r *bufio.Reader
	b *[]byte
}

func (r *byteRecorder) ReadByte() (byte, error) {
	c, err := r.r.ReadByte()
	if err == nil {
		*r.b = append(*r.b, c)
	}
	return c, err
}

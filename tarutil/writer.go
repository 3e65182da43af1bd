package tarutil

import (
	"archive/tar"
	"bufio"
	"hash"
	"io"
	"strconv"
	"strings"
	"sync"
)

const (
	blockSize     = 512
	streamBufSize = 64 << 10             // 64 KiB buffered in front of each tar stream
	copyBufSize   = 128 << 10            // 128 KiB per pooled member data copy buffer
	maxOctal      = 1<<33 - 1            // largest value of an 11-digit octal field (8 GiB - 1)
	minComment    = len("12 comment=\n") // the shortest comment record: empty value
	paxHeaderName = "PaxHeader"
)

// The copy buffer is larger than the stream buffer, so bufio.Writer hands the data of a
// member under copyBufSize straight to the file instead of copying it (DESIGN.md Lessons
// §1); larger members skip it (writeDirect).
const _ = uint(copyBufSize - streamBufSize - 1)

// Fields of a ustar header block (POSIX.1-2001, pax "ustar Interchange Format").
const (
	offName     = 0
	lenName     = 100
	offMode     = 100
	offUID      = 108
	offGID      = 116
	offSize     = 124
	offMtime    = 136
	offChksum   = 148
	offType     = 156
	offLink     = 157
	lenLink     = 100
	offMagic    = 257
	offDevMajor = 329
	offDevMinor = 337
	offPrefix   = 345
	lenPrefix   = 155
)

var copyPool = sync.Pool{New: func() any {
	b := make([]byte, copyBufSize)
	return &b
}}

// The stream buffers in front of a conversion's output and (unless it is buffered already)
// its input are pooled too, so a process converting many archives allocates them once.
var (
	readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, streamBufSize) }}
	writerPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, streamBufSize) }}
)

// zeros pads data to a block and ends the archive.
var zeros [2 * blockSize]byte

// commentFill is sliced for the value of a comment record.
var commentFill = strings.Repeat("0", Alignment)

// output is the aligned stream: it counts its offset and keeps the first
// error. It has no ReadFrom, so io.CopyBuffer really uses the pooled buffer.
type output struct {
	bw  *bufio.Writer // in front of w
	w   io.Writer
	l   Lender // w, when it lends buffers and holds them long enough for the hasher
	off int64
	err error
}

// A Lender is an output that lends the free part of its own buffer, so that Align reads a
// large member's data straight into place instead of copying it there.
type Lender interface {
	io.Writer
	// Lend returns up to n (at least 1) bytes of buffer at the write position.
	Lend(n int) []byte
	// Fill writes the first k bytes of what Lend returned last.
	Fill(k int) error
	// Hold is how many more bytes Fill takes, at the least, before a byte it took is in a
	// buffer lent again: until then Align's hasher may still be reading it.
	Hold() int
}

// lend returns a buffer of up to n bytes at the write position, after what is buffered.
func (o *output) lend(n int) []byte {
	if o.err == nil {
		o.err = o.bw.Flush()
	}
	return o.l.Lend(n)
}

// fill writes the first k bytes of what lend returned, unless an earlier write failed.
func (o *output) fill(k int) error {
	if o.err == nil {
		o.err = o.l.Fill(k)
		o.off += int64(k)
	}
	return o.err
}

// writeDirect flushes the stream buffer and writes p to w past it.
func (o *output) writeDirect(p []byte) (int, error) {
	if o.err == nil {
		o.err = o.bw.Flush()
	}
	return o.write(o.w, p)
}

func (o *output) Write(p []byte) (int, error) { return o.write(o.bw, p) }

// write writes p to w, unless an earlier write failed, and counts it.
func (o *output) write(w io.Writer, p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := w.Write(p)
	o.off += int64(n)
	o.err = err
	return n, err
}

// encoder writes the entries of an aligned tar.
type encoder struct {
	out    output
	blk    [blockSize]byte // the header block being built
	pax    []byte          // the pax records of the entry being built
	hasher *hasher         // once a member has needed it
}

// newEncoder returns an encoder writing to w through a pooled buffer, which release
// gives back.
func newEncoder(w io.Writer) *encoder {
	bw := writerPool.Get().(*bufio.Writer)
	bw.Reset(w)
	e := &encoder{out: output{bw: bw, w: w}}
	if l, ok := w.(Lender); ok && l.Hold() >= hashAhead*copyBufSize {
		e.out.l = l
	}
	return e
}

// release returns e's buffer to its pool; e must not be used after.
func (e *encoder) release() {
	if e.hasher != nil {
		e.hasher.stop()
	}
	e.out.bw.Reset(nil)
	writerPool.Put(e.out.bw)
	e.out.bw, e.out.w = nil, nil
}

// writeHeader writes the header blocks of m, preceded by a pax header when
// a field does not fit ustar or m's data must start on an Alignment boundary.
func (e *encoder) writeHeader(m *Member) error {
	name := m.Name
	if m.Type == tar.TypeDir {
		name += "/"
	}
	mtime := m.MTime
	e.paxRecords(name, m, mtime)
	if len(e.pax) > 0 {
		e.putBlock(paxHeaderName, "", tar.TypeXHeader, 0o644, int64(len(e.pax)), 0)
		e.out.Write(e.blk[:])
		e.out.Write(e.pax)
		e.pad(int64(len(e.pax)))
	}
	e.memberBlock(name, m)
	e.out.Write(e.blk[:])
	return e.out.err
}

// memberBlock builds in e.blk the ustar header block Align writes for m under name.
func (e *encoder) memberBlock(name string, m *Member) {
	e.putBlock(name, m.Linkname, m.Type, int64(m.Mode&0o777), m.Size, m.MTime)
}

// paxRecords sets e.pax to the records m needs, in a fixed order.
func (e *encoder) paxRecords(name string, m *Member, mtime int64) {
	e.pax = e.pax[:0]
	if _, _, ok := splitUSTAR(name); !ok {
		e.pax = appendRecord(e.pax, "path", name)
	}
	if len(m.Linkname) > lenLink {
		e.pax = appendRecord(e.pax, "linkpath", m.Linkname)
	}
	if m.Size > maxOctal {
		e.pax = appendRecord(e.pax, "size", strconv.FormatInt(m.Size, 10))
	}
	if mtime < 0 || mtime > maxOctal {
		e.pax = appendRecord(e.pax, "mtime", strconv.FormatInt(mtime, 10))
	}
	if m.Type == tar.TypeReg && m.Size >= Alignment {
		e.pax = appendComment(e.pax, commentLen(e.out.off, len(e.pax)))
	}
}

// hashAsideMin is the member size from which data is hashed on a second goroutine while it
// is written: below it, handing chunks over costs more than the overlap saves.
const hashAsideMin = 1 << 20 // 1 MiB

// hashAhead is how many pooled buffers a member hashed aside has in flight: the copy runs
// that far ahead of the hash, so neither waits for the other to be woken for each chunk.
// Two measured far slower in BenchmarkAlign/40x8MiB, eight or sixteen no faster.
const hashAhead = 4

// copyLarge copies size bytes of r, a member of copyBufSize bytes or more, past the stream
// buffer to the file, in writes that start on copyBufSize boundaries of the output after a
// first one that reaches a boundary: the page cache takes those cheaper than writes that
// straddle them (large folios; BenchmarkWriteOffset). The data are hashed into h, from
// hashAsideMin bytes on the encoder's hashing goroutine. The member's pooled buffers go
// back to their pool once it is hashed.
func (e *encoder) copyLarge(r io.Reader, size int64, h hash.Hash) error {
	if size < hashAsideMin {
		bp := copyPool.Get().(*[]byte)
		n, err := e.copyChunks(r, func() *[]byte { return bp }, func(_ *[]byte, b []byte) { h.Write(b) })
		copyPool.Put(bp)
		return e.endData(n, size, err)
	}
	if e.hasher == nil {
		e.hasher = startHasher()
	}
	hs := e.hasher
	for range hashAhead {
		hs.free <- copyPool.Get().(*[]byte)
	}
	n, err := e.copyChunks(r, func() *[]byte { return <-hs.free }, func(bp *[]byte, b []byte) { hs.full <- lent{bp, b, h} })
	for range hashAhead {
		copyPool.Put(<-hs.free) // once hashed
	}
	return e.endData(n, size, err)
}

// hasher hashes member data on a goroutine of its own, started for the first member that
// needs it and stopped when the conversion ends: the copy hands it each chunk in full and
// takes the chunk's buffer back from free once hashed.
type hasher struct {
	free chan *[]byte
	full chan lent
	done chan struct{}
}

// lent is bytes b to hash into h, and the pooled buffer to give back once they are
// hashed: b is in it, or, when the output lends its buffers, in the output's.
type lent struct {
	buf *[]byte
	b   []byte
	h   hash.Hash
}

func startHasher() *hasher {
	hs := &hasher{free: make(chan *[]byte, hashAhead), full: make(chan lent, hashAhead), done: make(chan struct{})}
	go func() {
		for c := range hs.full {
			c.h.Write(c.b)
			hs.free <- c.buf
		}
		close(hs.done)
	}()
	return hs
}

func (hs *hasher) stop() {
	close(hs.full)
	<-hs.done
}

// copyChunks copies r to the output through the buffers next gives, each chunk ending on a
// copyBufSize boundary of the output or at the end of r. Each chunk goes to take, which
// hashes it, before it is written; a buffer is filled again only once next gives it back.
// Where the output lends its buffers, chunks are read into them instead, and next's
// buffers only pace the hashing.
func (e *encoder) copyChunks(r io.Reader, next func() *[]byte, take func(bp *[]byte, b []byte)) (int64, error) {
	var n int64
	for {
		bp := next()
		want := copyBufSize - int(e.out.off%copyBufSize)
		var b []byte
		if e.out.l != nil {
			if b = e.out.lend(want); e.out.err != nil {
				take(bp, nil) // next's buffer back
				return n, e.out.err
			}
		} else {
			b = (*bp)[:want]
		}
		k, err := io.ReadFull(r, b)
		take(bp, b[:k])
		if k > 0 {
			var werr error
			if e.out.l != nil {
				werr = e.out.fill(k)
			} else {
				_, werr = e.out.writeDirect(b[:k])
			}
			if werr != nil {
				return n, werr
			}
			n += int64(k)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// copyData copies size bytes of member data from r through a pooled buffer
// and pads them to a block.
func (e *encoder) copyData(r io.Reader, size int64) error {
	bp := copyPool.Get().(*[]byte)
	n, err := io.CopyBuffer(&e.out, r, *bp)
	copyPool.Put(bp)
	return e.endData(n, size, err)
}

// endData checks that a member's n copied bytes are its size and pads them to a block.
func (e *encoder) endData(n, size int64, err error) error {
	if err == nil && n != size {
		err = io.ErrUnexpectedEOF
	}
	if err == nil {
		e.pad(size)
		err = e.out.err
	}
	return err
}

// pad writes the zeros that fill the block holding the end of n bytes.
func (e *encoder) pad(n int64) {
	e.out.Write(zeros[:blockRound(n)-n])
}

// finish writes the end-of-archive blocks and flushes the stream.
func (e *encoder) finish() error {
	e.out.Write(zeros[:])
	if e.out.err == nil {
		e.out.err = e.out.bw.Flush()
	}
	return e.out.err
}

// blockRound rounds n up to a whole number of blocks.
func blockRound(n int64) int64 {
	return (n + blockSize - 1) &^ (blockSize - 1)
}

// putBlock builds a ustar header block in e.blk. Fields that do not fit are
// truncated or zero; the pax records carry them.
func (e *encoder) putBlock(name, link string, typ byte, mode, size, mtime int64) {
	b := e.blk[:]
	clear(b)
	prefix, rest, ok := splitUSTAR(name)
	if !ok {
		prefix, rest = "", name
	}
	copy(b[offName:offName+lenName], rest)
	copy(b[offPrefix:offPrefix+lenPrefix], prefix)
	copy(b[offLink:offLink+lenLink], link)
	putOctal(b[offMode:offMode+8], mode)
	putOctal(b[offUID:offUID+8], 0)
	putOctal(b[offGID:offGID+8], 0)
	putOctal(b[offSize:offSize+12], inOctal(size))
	putOctal(b[offMtime:offMtime+12], inOctal(mtime))
	b[offType] = typ
	copy(b[offMagic:], "ustar\x0000")
	putOctal(b[offDevMajor:offDevMajor+8], 0)
	putOctal(b[offDevMinor:offDevMinor+8], 0)
	putChecksum(b)
}

// inOctal returns v if it fits an 11-digit octal field, else 0.
func inOctal(v int64) int64 {
	if v < 0 || v > maxOctal {
		return 0
	}
	return v
}

// putOctal writes v as zero-padded octal digits followed by a NUL.
func putOctal(b []byte, v int64) {
	n := len(b) - 1
	for i := n - 1; i >= 0; i-- {
		b[i] = '0' + byte(v&7)
		v >>= 3
	}
	b[n] = 0
}

// putChecksum sets the checksum field: the sum of the block's bytes with
// the field itself counted as spaces, six octal digits, NUL, space.
func putChecksum(b []byte) {
	copy(b[offChksum:offChksum+8], "        ")
	sum := 0
	for _, c := range b {
		sum += int(c)
	}
	putOctal(b[offChksum:offChksum+7], int64(sum))
	b[offChksum+7] = ' '
}

// splitUSTAR splits name into the prefix and name fields of a ustar header.
func splitUSTAR(name string) (prefix, rest string, ok bool) {
	if len(name) <= lenName {
		return "", name, true
	}
	start := len(name) - lenName - 1
	i := strings.IndexByte(name[start:], '/')
	if i < 0 {
		return "", "", false
	}
	i += start
	if i == 0 || i > lenPrefix || i == len(name)-1 {
		return "", "", false
	}
	return name[:i], name[i+1:], true
}

// appendRecord appends the pax record "%d %s=%s\n", whose decimal length
// counts the whole record, itself included.
func appendRecord(b []byte, key, val string) []byte {
	n := len(key) + len(val) + len(" =\n")
	d := digits(n)
	if digits(n+d) > d {
		d++
	}
	b = strconv.AppendInt(b, int64(n+d), 10)
	b = append(b, ' ')
	b = append(b, key...)
	b = append(b, '=')
	b = append(b, val...)
	return append(b, '\n')
}

// commentLen returns the length of the comment record that, appended to r
// bytes of pax records, makes member data written after a pax header block
// at off, the records and a ustar block start on an Alignment boundary.
// The records then end exactly on a block: the boundary is a block multiple.
func commentLen(off int64, r int) int {
	end := off + 2*blockSize + int64(r) + int64(minComment)
	return minComment + int((Alignment-end%Alignment)%Alignment)
}

// appendComment appends a comment record of exactly n >= minComment bytes.
// The record's length prefix is n itself, so the value fills what the
// prefix and the key leave.
func appendComment(b []byte, n int) []byte {
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, " comment="...)
	b = append(b, commentFill[:n-digits(n)-len(" comment=\n")]...)
	return append(b, '\n')
}

// digits returns the number of decimal digits of n >= 0.
func digits(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

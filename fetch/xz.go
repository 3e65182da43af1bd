package fetch

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// The xz reader allocates the dictionary each block header asks for: its
// ReaderConfig.DictCap is only a lower bound (ulikunitz/xz lzmafilter.go). xzGuard walks
// the stream's structure (The .xz File Format 1.0.4, and the LZMA2 chunk headers) as it
// passes it on unchanged, and refuses a block whose dictionary is over maxWindow before
// the reader sees that block's header.

// errXZ reports an xz stream whose structure xzGuard cannot follow.
var errXZ = errors.New("xz: malformed stream")

const (
	xzHeaderLen  = 12 // stream header and stream footer
	xzLZMA2      = 0x21
	xzMaxFilters = 4
)

// xzGuard is an io.Reader of an xz stream that refuses oversized dictionaries.
type xzGuard struct {
	r     *bufio.Reader
	buf   [1024]byte // holds the longest block header
	out   []byte     // parsed bytes not yet returned
	pass  int64      // bytes to return unparsed: chunk data, block padding and check
	next  func() error
	check int64 // size of each block's check, from the stream flags
	data  int64 // compressed bytes of the current block so far
	left  uint64
	index int64 // bytes of the index so far
	err   error
}

func newXZGuard(r *bufio.Reader) *xzGuard {
	g := &xzGuard{r: r}
	g.next = g.streamHeader
	return g
}

func (g *xzGuard) Read(p []byte) (int, error) {
	for len(g.out) == 0 && g.pass == 0 {
		if g.err != nil {
			return 0, g.err
		}
		if g.err = g.next(); g.err != nil {
			g.out = nil // a refused header never reaches the reader
		}
	}
	if len(g.out) > 0 {
		n := copy(p, g.out)
		g.out = g.out[n:]
		return n, nil
	}
	n, err := g.r.Read(p[:min(int64(len(p)), g.pass)])
	g.pass -= int64(n)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// take reads n more bytes into the parsed output and returns them.
func (g *xzGuard) take(n int) ([]byte, error) {
	start := len(g.out)
	if start == 0 {
		g.out = g.buf[:0]
	}
	if start+n > len(g.buf) {
		return nil, errXZ
	}
	b := g.buf[start : start+n]
	if _, err := io.ReadFull(g.r, b); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	g.out = g.buf[:start+n]
	return b, nil
}

func (g *xzGuard) takeByte() (byte, error) {
	b, err := g.take(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

// takeVarint reads a multibyte integer and returns it with its length.
func (g *xzGuard) takeVarint() (uint64, int64, error) {
	var x uint64
	for i := range 9 {
		c, err := g.takeByte()
		if err != nil {
			return 0, 0, err
		}
		x |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return x, int64(i + 1), nil
		}
	}
	return 0, 0, errXZ
}

func (g *xzGuard) streamHeader() error {
	h, err := g.take(xzHeaderLen)
	if err != nil {
		return err
	}
	return g.startStream(h)
}

func (g *xzGuard) startStream(h []byte) error {
	if !bytes.HasPrefix(h, magicXz) {
		return errXZ
	}
	g.check = checkSize(h[7] & 0x0f)
	g.next = g.block
	return nil
}

// checkSize is the size of a block's check for the check ID of the stream flags.
func checkSize(id byte) int64 {
	if id == 0 {
		return 0
	}
	return 4 << ((id - 1) / 3)
}

// block reads a block header, or the index indicator.
func (g *xzGuard) block() error {
	c, err := g.takeByte()
	if err != nil {
		return err
	}
	if c == 0 {
		g.index = 1
		g.next = g.indexCount
		return nil
	}
	h, err := g.take(int(c)*4 + 3) // the header is (c+1)*4 bytes, c included
	if err != nil {
		return err
	}
	if err := checkFilters(h[:len(h)-4]); err != nil {
		return err
	}
	g.data = 0
	g.next = g.chunk
	return nil
}

// checkFilters reads the block flags, sizes and filter flags that start h, a block header
// after its size byte and without its CRC32, and refuses an oversized LZMA2 dictionary.
func checkFilters(h []byte) error {
	r := bytes.NewReader(h)
	flags, _ := r.ReadByte()
	for _, present := range []byte{0x40, 0x80} { // compressed size, uncompressed size
		if flags&present != 0 {
			if _, err := readVarint(r); err != nil {
				return err
			}
		}
	}
	for range int(flags&0x03) + 1 {
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
				return fmt.Errorf("xz: block dictionary of %d MiB is over the %d MiB limit", d>>20, maxWindow>>20)
			}
		}
	}
	return nil
}

func readVarint(r *bytes.Reader) (uint64, error) {
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

// chunk reads an LZMA2 chunk header and passes its data on.
func (g *xzGuard) chunk() error {
	c, err := g.takeByte()
	if err != nil {
		return err
	}
	g.data++
	switch {
	case c == 0: // end of the block's data
		g.pass = (4-g.data%4)%4 + g.check
		g.next = g.block
	case c == 1 || c == 2: // uncompressed
		h, err := g.take(2)
		if err != nil {
			return err
		}
		g.pass = int64(h[0])<<8 | int64(h[1]) + 1
		g.data += 2 + g.pass
	case c >= 0x80: // LZMA, with new properties from 0xc0 on
		n := 4
		if c >= 0xc0 {
			n++
		}
		h, err := g.take(n)
		if err != nil {
			return err
		}
		g.pass = int64(h[2])<<8 | int64(h[3]) + 1
		g.data += int64(n) + g.pass
	default:
		return errXZ
	}
	return nil
}

// indexCount reads the number of index records; the records follow, two numbers each.
func (g *xzGuard) indexCount() error {
	n, k, err := g.takeVarint()
	if err != nil {
		return err
	}
	if n > 1<<62 {
		return errXZ
	}
	g.index += k
	g.left = 2 * n
	g.next = g.indexRecord
	if g.left == 0 {
		g.indexEnd()
	}
	return nil
}

func (g *xzGuard) indexRecord() error {
	_, k, err := g.takeVarint()
	g.index += k
	if g.left--; g.left == 0 {
		g.indexEnd()
	}
	return err
}

// indexEnd passes on the index padding and CRC32, and expects the stream footer.
func (g *xzGuard) indexEnd() {
	g.pass = (4-g.index%4)%4 + 4
	g.next = g.footer
}

func (g *xzGuard) footer() error {
	if _, err := g.take(xzHeaderLen); err != nil {
		return err
	}
	g.next = g.padding
	return nil
}

// padding reads stream padding, four zero bytes at a time, up to the end of the input or
// the header of another stream.
func (g *xzGuard) padding() error {
	if _, err := g.r.Peek(1); err == io.EOF {
		return io.EOF
	}
	b, err := g.take(4)
	if err != nil {
		return err
	}
	if bytes.Equal(b, []byte{0, 0, 0, 0}) {
		return nil
	}
	if _, err := g.take(xzHeaderLen - 4); err != nil {
		return err
	}
	return g.startStream(g.out)
}

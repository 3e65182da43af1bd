package tarutil

import (
	"archive/tar"
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"time"

	"pkg/internal/termtext"
)

// An index lists the members of one aligned tar, with their data offsets and digests, so an
// installer learns all it needs without reading the tar. Layout: indexMagic; per member its
// type, mode, size, offset, mtime, name and link target (varints and length-prefixed
// strings) and, for a regular member, its sha256; a directory again, as in the tar, with the
// mode and time that replace the earlier ones; then the tar's size (8 bytes), the member
// count (4 bytes) and the CRC-32C of everything before (4 bytes), big-endian. The counts
// come last so that the index is written as the members pass, and read with its slice
// made once.
const indexMagic = "pkgidx2\n"

// indexTrailer is the size of the fixed fields that end an index.
const indexTrailer = 8 + 4 + 4

// maxIndexRecord bounds one encoded member: two paths and a handful of numbers.
const maxIndexRecord = 2*maxPathLen + 128

var (
	// ErrIndex reports an index that is damaged or does not describe its tar.
	ErrIndex = errors.New("tarutil: index damaged")
)

// crcTable returns the CRC-32C table, built on first use (hash/crc32 keeps it) rather than
// at the start of every command.
func crcTable() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// indexWriter writes an index a record at a time, with a sticky error.
type indexWriter struct {
	bw      *bufio.Writer
	crc     hash.Hash32
	b       []byte
	members int
}

// newIndexWriter returns an indexWriter writing to w through a pooled buffer, which release
// gives back.
func newIndexWriter(w io.Writer) *indexWriter {
	crc := crc32.New(crcTable())
	bw := writerPool.Get().(*bufio.Writer)
	bw.Reset(io.MultiWriter(w, crc))
	x := &indexWriter{bw: bw, crc: crc, b: make([]byte, 0, maxIndexRecord)}
	x.bw.WriteString(indexMagic)
	return x
}

// release returns x's buffer to its pool; x must not be used after.
func (x *indexWriter) release() {
	x.bw.Reset(nil)
	writerPool.Put(x.bw)
	x.bw = nil
}

// add writes m's record; again marks a directory written before, whose mode and time m's replace.
func (x *indexWriter) add(m *Member, again bool) {
	x.bw.Write(appendMember(x.b[:0], m))
	if !again {
		x.members++
	}
}

// finish writes the trailer of the index of a tar of tarSize bytes.
func (x *indexWriter) finish(tarSize int64) error {
	b := binary.BigEndian.AppendUint64(x.b[:0], uint64(tarSize))
	x.bw.Write(binary.BigEndian.AppendUint32(b, uint32(x.members)))
	if err := x.bw.Flush(); err != nil {
		return err
	}
	_, err := x.bw.Write(binary.BigEndian.AppendUint32(x.b[:0], x.crc.Sum32()))
	if err == nil {
		err = x.bw.Flush()
	}
	return err
}

func appendMember(b []byte, m *Member) []byte {
	b = append(b, m.Type)
	b = binary.AppendUvarint(b, uint64(m.Mode))
	b = binary.AppendUvarint(b, uint64(m.Size))
	b = binary.AppendUvarint(b, uint64(m.Offset))
	b = binary.AppendVarint(b, m.MTime)
	b = binary.AppendUvarint(b, uint64(len(m.Name)))
	b = append(b, m.Name...)
	b = binary.AppendUvarint(b, uint64(len(m.Linkname)))
	b = append(b, m.Linkname...)
	if m.Type == tar.TypeReg {
		b = append(b, m.SHA256[:]...)
	}
	return b
}

// ReadIndex decodes the index of size bytes in r and checks it against its tar's size:
// every member passes the same policy as Scan, and every data range lies inside the tar,
// aligned where it must be. It reads r in two passes, its checksum and then its members,
// holding no more of it than a buffer.
func ReadIndex(r io.ReaderAt, size, tarSize int64) ([]Member, error) {
	if size < int64(len(indexMagic))+indexTrailer {
		return nil, indexf("not an index")
	}
	var end [indexTrailer]byte
	if _, err := r.ReadAt(end[:], size-indexTrailer); err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	crc := crc32.New(crcTable())
	bp := copyPool.Get().(*[]byte)
	_, err := io.CopyBuffer(crc, io.NewSectionReader(r, 0, size-4), *bp)
	copyPool.Put(bp)
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	if crc.Sum32() != binary.BigEndian.Uint32(end[12:]) {
		return nil, indexf("checksum mismatch")
	}
	br := readerPool.Get().(*bufio.Reader)
	defer func() {
		br.Reset(nil)
		readerPool.Put(br)
	}()
	br.Reset(io.NewSectionReader(r, 0, size-indexTrailer))
	if magic, err := br.Peek(len(indexMagic)); err != nil || string(magic) != indexMagic {
		return nil, indexf("not an index")
	}
	br.Discard(len(indexMagic))
	if got := int64(binary.BigEndian.Uint64(end[:])); got != tarSize {
		return nil, indexf("describes a tar of %d bytes, the tar has %d", got, tarSize)
	}
	n := binary.BigEndian.Uint32(end[8:])
	if n > maxMembers || int64(n) > size {
		return nil, indexf("bad member count")
	}
	d := &indexDecoder{r: br}
	return d.members(int(n), tarSize)
}

// indexDecoder reads the records of an index with a sticky error.
type indexDecoder struct {
	r   *bufio.Reader
	err error
}

func (d *indexDecoder) members(n int, tarSize int64) ([]Member, error) {
	members := make([]Member, 0, n)
	chk := newChecker()
	chk.paths.reserve(n)
	var hdr tar.Header
	for {
		if _, err := d.r.Peek(1); err == io.EOF {
			break
		}
		m := d.member(&hdr)
		if d.err != nil {
			return nil, indexf("member %d: %v", len(members), d.err)
		}
		checked, ok, err := chk.check(&hdr)
		switch {
		case err != nil:
			return nil, err
		case !ok && checked.Name == m.Name && m.Type == tar.TypeDir: // a directory again
			earlier := &members[chk.index(m.Name)]
			earlier.Mode, earlier.MTime = m.Mode, m.MTime
			continue
		case !ok || checked.Name != m.Name:
			return nil, &MemberError{Name: m.Name, Err: indexf("not in canonical form")}
		case len(chk.parents) > 0:
			return nil, &MemberError{Name: m.Name, Err: indexf("parent %s not listed before it", termtext.Quote(chk.parents[0]))}
		case len(members) == n:
			return nil, indexf("more than the %d members it counts", n)
		}
		if err := checkRange(&m, tarSize); err != nil {
			return nil, err
		}
		members = append(members, m)
	}
	if len(members) != n {
		return nil, indexf("%d members, it counts %d", len(members), n)
	}
	return members, nil
}

// member decodes one member into m and, for the policy checker, into hdr.
func (d *indexDecoder) member(hdr *tar.Header) Member {
	var m Member
	m.Type = d.byte()
	m.Mode = d.mode()
	m.Size = int64(d.uvarint())
	m.Offset = int64(d.uvarint())
	m.MTime = d.varint()
	raw := d.bytes(int(min(d.uvarint(), maxIndexRecord+1)))
	if m.Type == tar.TypeDir { // the header's name, with its slash, holds the member's
		raw = append(raw[:len(raw):len(raw)], '/')
	}
	hname := string(raw)
	m.Name = hname
	if m.Type == tar.TypeDir {
		m.Name = hname[:len(hname)-1]
	}
	m.Linkname = d.string()
	if m.Type == tar.TypeReg {
		copy(m.SHA256[:], d.bytes(len(m.SHA256)))
	}
	*hdr = tar.Header{Typeflag: m.Type, Name: hname, Linkname: m.Linkname, Mode: int64(m.Mode), Size: m.Size, ModTime: time.Unix(m.MTime, 0)}
	return m
}

// checkRange refuses a member whose data would lie outside the tar or off its alignment.
func checkRange(m *Member, tarSize int64) error {
	switch {
	case m.Type != tar.TypeReg && (m.Size != 0 || m.Offset != 0):
		return &MemberError{Name: m.Name, Err: indexf("data on a non-regular member")}
	case m.Type == tar.TypeReg && (m.Size < 0 || m.Offset < blockSize || m.Offset > tarSize-m.Size):
		return &MemberError{Name: m.Name, Err: indexf("data outside the tar")}
	case m.Size >= Alignment && m.Offset%Alignment != 0:
		return &MemberError{Name: m.Name, Err: refusedf(ErrNotAligned, ": data at offset %d", m.Offset)}
	}
	return nil
}

func (d *indexDecoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("bad or truncated %s", what)
	}
}

func (d *indexDecoder) byte() byte {
	if d.err != nil {
		return 0
	}
	c, err := d.r.ReadByte()
	if err != nil {
		d.fail("type")
	}
	return c
}

func (d *indexDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(d.r)
	if err != nil || v > 1<<62 {
		d.fail("number")
		return 0
	}
	return v
}

// mode reads permission bits; anything more is damage.
func (d *indexDecoder) mode() fs.FileMode {
	v := d.uvarint()
	if v > 0o777 {
		d.fail("mode")
	}
	return fs.FileMode(v)
}

func (d *indexDecoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadVarint(d.r)
	if err != nil {
		d.fail("number")
		return 0
	}
	return v
}

// bytes returns the next n bytes, valid until the next read.
func (d *indexDecoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > maxIndexRecord {
		d.fail("string")
		return nil
	}
	b, err := d.r.Peek(n)
	if err != nil {
		d.fail("string")
		return nil
	}
	d.r.Discard(n)
	return b
}

func (d *indexDecoder) string() string {
	return string(d.bytes(int(min(d.uvarint(), maxIndexRecord+1))))
}

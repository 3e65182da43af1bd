package tarutil

import (
	"archive/tar"
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"time"

	"pkg/internal/termtext"
)

// An index lists the members of one aligned tar, with their data offsets and digests, so an
// installer learns all it needs without reading the tar. Layout: indexMagic, the tar's size
// and the member count as uvarints, then per member its type, mode, size, offset, mtime,
// name and link target (varints and length-prefixed strings) and, for a regular member, its
// sha256; last, the CRC-32C of everything before it.
const indexMagic = "pkgidx1\n"

// maxIndexRecord bounds one encoded member: two paths and a handful of numbers.
const maxIndexRecord = 2*maxPathLen + 128

var (
	// ErrIndex reports an index that is damaged or does not describe its tar.
	ErrIndex = errors.New("tarutil: index damaged")

	crcTable = crc32.MakeTable(crc32.Castagnoli)
)

// WriteIndex writes the index of an aligned tar of tarSize bytes holding members, which
// carry their digests. It encodes one member at a time, so that it holds no second copy of
// the names.
func WriteIndex(w io.Writer, tarSize int64, members []Member) error {
	crc := crc32.New(crcTable)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 64<<10)
	b := make([]byte, 0, maxIndexRecord)
	b = append(b, indexMagic...)
	b = binary.AppendUvarint(b, uint64(tarSize))
	b = binary.AppendUvarint(b, uint64(len(members)))
	bw.Write(b)
	for i := range members {
		bw.Write(appendMember(b[:0], &members[i]))
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(binary.BigEndian.AppendUint32(b[:0], crc.Sum32()))
	return err
}

func appendMember(b []byte, m *Member) []byte {
	b = append(b, m.Type)
	b = binary.AppendUvarint(b, uint64(m.Mode))
	b = binary.AppendUvarint(b, uint64(m.Size))
	b = binary.AppendUvarint(b, uint64(m.Offset))
	b = binary.AppendVarint(b, m.ModTime.Unix())
	b = binary.AppendUvarint(b, uint64(len(m.Name)))
	b = append(b, m.Name...)
	b = binary.AppendUvarint(b, uint64(len(m.Linkname)))
	b = append(b, m.Linkname...)
	if m.Type == tar.TypeReg {
		b = append(b, m.SHA256[:]...)
	}
	return b
}

// ReadIndex decodes an index and checks it against its tar's size: every member passes the
// same policy as Scan, and every data range lies inside the tar, aligned where it must be.
func ReadIndex(data []byte, tarSize int64) ([]Member, error) {
	if len(data) < len(indexMagic)+4 || !bytes.HasPrefix(data, []byte(indexMagic)) {
		return nil, fmt.Errorf("%w: not an index", ErrIndex)
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, crcTable) != binary.BigEndian.Uint32(data[len(body):]) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrIndex)
	}
	d := &indexDecoder{b: body[len(indexMagic):]}
	if size := d.uvarint(); size != uint64(tarSize) {
		return nil, fmt.Errorf("%w: describes a tar of %d bytes, the tar has %d", ErrIndex, size, tarSize)
	}
	n := d.uvarint()
	if d.err != nil || n > maxMembers || n > uint64(len(d.b)) {
		return nil, fmt.Errorf("%w: bad member count", ErrIndex)
	}
	return d.members(int(n), tarSize)
}

// indexDecoder reads an index body with a sticky error.
type indexDecoder struct {
	b   []byte
	err error
}

func (d *indexDecoder) members(n int, tarSize int64) ([]Member, error) {
	members := make([]Member, 0, n)
	chk := newChecker()
	var hdr tar.Header
	for range n {
		m := d.member(&hdr)
		if d.err != nil {
			return nil, fmt.Errorf("%w: member %d: %v", ErrIndex, len(members), d.err)
		}
		checked, ok, err := chk.check(&hdr)
		if err != nil {
			return nil, err
		}
		if !ok || checked.Name != m.Name {
			return nil, &MemberError{Name: m.Name, Err: fmt.Errorf("%w: not in canonical form", ErrIndex)}
		}
		if len(chk.parents) > 0 {
			return nil, &MemberError{Name: m.Name, Err: fmt.Errorf("%w: parent %s not listed before it", ErrIndex, termtext.Quote(chk.parents[0]))}
		}
		if err := checkRange(&m, tarSize); err != nil {
			return nil, err
		}
		members = append(members, m)
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the last member", ErrIndex, len(d.b))
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
	m.ModTime = time.Unix(d.varint(), 0)
	m.Name = d.string()
	m.Linkname = d.string()
	if m.Type == tar.TypeReg {
		copy(m.SHA256[:], d.bytes(len(m.SHA256)))
	}
	*hdr = tar.Header{Typeflag: m.Type, Name: m.Name, Linkname: m.Linkname, Mode: int64(m.Mode), Size: m.Size, ModTime: m.ModTime}
	if m.Type == tar.TypeDir {
		hdr.Name += "/"
	}
	return m
}

// checkRange refuses a member whose data would lie outside the tar or off its alignment.
func checkRange(m *Member, tarSize int64) error {
	switch {
	case m.Type != tar.TypeReg && (m.Size != 0 || m.Offset != 0):
		return &MemberError{Name: m.Name, Err: fmt.Errorf("%w: data on a non-regular member", ErrIndex)}
	case m.Type == tar.TypeReg && (m.Size < 0 || m.Offset < blockSize || m.Offset > tarSize-m.Size):
		return &MemberError{Name: m.Name, Err: fmt.Errorf("%w: data outside the tar", ErrIndex)}
	case m.Size >= Alignment && m.Offset%Alignment != 0:
		return &MemberError{Name: m.Name, Err: fmt.Errorf("%w: data at offset %d", ErrNotAligned, m.Offset)}
	}
	return nil
}

func (d *indexDecoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("bad or truncated %s", what)
	}
	d.b = nil
}

func (d *indexDecoder) byte() byte {
	if len(d.b) < 1 {
		d.fail("type")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *indexDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > 1<<62 {
		d.fail("number")
		return 0
	}
	d.b = d.b[n:]
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
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *indexDecoder) bytes(n int) []byte {
	if n < 0 || n > len(d.b) || n > maxIndexRecord {
		d.fail("string")
		return nil
	}
	s := d.b[:n]
	d.b = d.b[n:]
	return s
}

func (d *indexDecoder) string() string {
	return string(d.bytes(int(min(d.uvarint(), maxIndexRecord+1))))
}

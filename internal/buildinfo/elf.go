package buildinfo

import (
	"errors"
	"io"
	"syscall"
)

// The record's layout is the go command's (cmd/link writes it, debug/buildinfo reads it):
// a 32-byte header, then, where the header's flags say so, the Go version and the module
// text as varint-prefixed strings.
const (
	magic      = "\xff Go buildinf:"
	headerSize = 32
	flagInline = 0x2 // the strings follow the header (the go command since 1.18)

	sectionName = ".go.buildinfo"
	maxSections = 1 << 12  // more than a linker writes
	maxNames    = 1 << 20  // 1 MiB of section names
	maxRecord   = 16 << 20 // 16 MiB: the module text of a binary of thousands of modules
)

var errFormat = errors.New("buildinfo: no build record")

// read returns the Go version and module text recorded in the ELF file at path: the
// section named .go.buildinfo, as debug/buildinfo finds it in an ELF file.
func read(path string) (goVersion, modinfo string, err error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", "", err
	}
	defer syscall.Close(fd)
	f := file(fd)
	off, size, err := section(f, sectionName)
	if err != nil {
		return "", "", err
	}
	if size < headerSize || size > maxRecord {
		return "", "", errFormat
	}
	rec := make([]byte, size)
	if _, err := f.ReadAt(rec, int64(off)); err != nil {
		return "", "", err
	}
	return parseRecord(rec)
}

// file reads a descriptor with pread(2), without os.File's poller registration.
type file int

func (f file) ReadAt(b []byte, off int64) (int, error) {
	for n := 0; n < len(b); {
		m, err := syscall.Pread(int(f), b[n:], off+int64(n))
		switch {
		case err == syscall.EINTR:
		case err != nil:
			return n, err
		case m == 0:
			return n, io.ErrUnexpectedEOF
		default:
			n += m
		}
	}
	return len(b), nil
}

// parseRecord reads a .go.buildinfo section's contents.
func parseRecord(rec []byte) (goVersion, modinfo string, err error) {
	if len(rec) < headerSize || string(rec[:len(magic)]) != magic || rec[len(magic)+1]&flagInline == 0 {
		return "", "", errFormat
	}
	rest := rec[headerSize:]
	v, rest, ok := varintString(rest)
	if !ok {
		return "", "", errFormat
	}
	mod, _, ok := varintString(rest)
	if !ok {
		return "", "", errFormat
	}
	// The module text sits between two 16-byte sentinels (runtime/debug.modinfo strips them).
	if len(mod) < 33 || mod[len(mod)-17] != '\n' {
		return "", "", errFormat
	}
	return string(v), string(mod[16 : len(mod)-16]), nil
}

// varintString splits off a string prefixed by its length as an unsigned varint.
func varintString(b []byte) (s, rest []byte, ok bool) {
	var n uint64
	for i, shift := 0, 0; i < len(b) && shift < 64; i, shift = i+1, shift+7 {
		n |= uint64(b[i]&0x7f) << shift
		if b[i] < 0x80 {
			b = b[i+1:]
			if n > uint64(len(b)) {
				return nil, nil, false
			}
			return b[:n], b[n:], true
		}
	}
	return nil, nil, false
}

// section finds the named section of a little-endian ELF file, 64-bit (amd64, arm64) or
// 32-bit (386, arm): its offset and size in the file.
func section(r io.ReaderAt, name string) (off, size uint64, err error) {
	var h [64]byte // the file header (elf(5)); a 32-bit one is 52 bytes
	if _, err := r.ReadAt(h[:52], 0); err != nil || string(h[:4]) != "\x7fELF" || h[5] != 1 {
		return 0, 0, errFormat
	}
	var l layout
	switch h[4] {
	case 1:
		l = elf32
	case 2:
		l = elf64
		if _, err := r.ReadAt(h[52:], 52); err != nil {
			return 0, 0, errFormat
		}
	default:
		return 0, 0, errFormat
	}
	shoff := l.word(h[l.shoff:])
	entSize, num, strIndex := int(le16(h[l.shentsize:])), int(le16(h[l.shentsize+2:])), int(le16(h[l.shentsize+4:]))
	if entSize < l.headerSize || entSize > 2*l.headerSize || num == 0 || num > maxSections || strIndex >= num {
		return 0, 0, errFormat
	}
	headers := make([]byte, entSize*num)
	if _, err := r.ReadAt(headers, int64(shoff)); err != nil {
		return 0, 0, errFormat
	}
	_, _, strOff, strSize := l.sectionHeader(headers[strIndex*entSize:])
	if strSize > maxNames {
		return 0, 0, errFormat
	}
	names := make([]byte, strSize)
	if _, err := r.ReadAt(names, int64(strOff)); err != nil {
		return 0, 0, errFormat
	}
	for i := range num {
		nameOff, typ, off, size := l.sectionHeader(headers[i*entSize:])
		const progbits = 1 // SHT_PROGBITS: data in the file
		if typ == progbits && nameOff < uint64(len(names)) && cstring(names[nameOff:]) == name {
			return off, size, nil
		}
	}
	return 0, 0, errFormat
}

// layout is where an ELF class keeps what section reads (elf(5)).
type layout struct {
	wide       bool // 64-bit: addresses and offsets take 8 bytes, not 4
	shoff      int  // e_shoff in the file header
	shentsize  int  // e_shentsize, then e_shnum and e_shstrndx, 2 bytes each
	headerSize int  // a section header
	secOffset  int  // sh_offset in a section header, sh_size after it
}

var (
	elf32 = layout{wide: false, shoff: 0x20, shentsize: 0x2e, headerSize: 40, secOffset: 0x10}
	elf64 = layout{wide: true, shoff: 0x28, shentsize: 0x3a, headerSize: 64, secOffset: 0x18}
)

// word reads an address or offset.
func (l layout) word(b []byte) uint64 {
	if l.wide {
		return le64(b)
	}
	return uint64(le32(b))
}

// sectionHeader reads a section header's name offset, type, file offset and size.
func (l layout) sectionHeader(h []byte) (name uint64, typ uint32, off, size uint64) {
	n := 4
	if l.wide {
		n = 8
	}
	return uint64(le32(h)), le32(h[4:]), l.word(h[l.secOffset:]), l.word(h[l.secOffset+n:])
}

func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }
func le32(b []byte) uint32 { return uint32(le16(b)) | uint32(le16(b[2:]))<<16 }
func le64(b []byte) uint64 { return uint64(le32(b)) | uint64(le32(b[4:]))<<32 }

// cstring is b up to its first NUL.
func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

package fetch

import (
	"archive/tar"
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
)

// The archive formats pkg reads, each recognised by its first bytes: containers, whose
// members become a tar (a .deb's data member, a zip's files), and the compressions of a
// tar, none included. A new format is one file, with its magic and its reader, and one row
// of containers or of compressions.
var (
	containers = []container{
		{".deb", isDeb, inflateDeb},
		{".zip", isZip, inflateZip},
	}
	compressions = []compression{
		{".gz", isGzip, openGzip},
		{".zst", isZstd, openZstd},
		{".xz", isXZ, openXZ},
		{".bz2", isBzip2, openBzip2},
		{"", isTar, openPlain},
	}
)

// A container is an archive whose members inflate writes into plain as a tar, reading
// the archive from r, a buffer in front of the verified bytes.
type container struct {
	ext     string
	is      func(head []byte) bool
	inflate func(plain *pipe, r *bufio.Reader, cv conversion) error
}

// A compression is one of a tar. open returns the tar inside br, a buffer in front of
// src, which a decompressor may read past br's buffer; closing it releases the
// decompressor. ext is how a .deb's member name ends: "" for none.
type compression struct {
	ext  string
	is   func(head []byte) bool
	open func(br *bufio.Reader, src io.Reader) (io.ReadCloser, error)
}

// sniffLen is how many first bytes the formats are recognised by: a tar's first block.
const sniffLen = tarBlock

// maxWindow bounds the history a zstd frame or an xz block may make the decompressor keep.
const maxWindow = 64 << 20 // 64 MiB

// A ustar, pax or GNU tar header has "ustar" at this offset of its first block.
const (
	tarMagicAt  = 257
	tarMagicEnd = tarMagicAt + 5
	tarBlock    = 512
)

// errFormat is what the error for an archive in no format pkg reads is.
var errFormat = errors.New("fetch: archive in no format pkg reads")

// formatError is an errFormat saying which formats pkg reads: a tar's compressions, and,
// where the archive may be one (containers), a .deb or a .zip.
type formatError struct{ containers bool }

func (e *formatError) Error() string {
	if e.containers {
		return "not a tar (" + orList(compressionNames()) + "), " + orList(containerNames())
	}
	return "not a tar (" + orList(compressionNames()) + ")"
}

func (e *formatError) Is(target error) bool { return target == errFormat }

// notTarError is an errFormat for a compressed stream that holds no tar: its first block,
// of n bytes (tarBlock where whole), cannot begin one.
type notTarError struct {
	ext string // the compression's, without its dot
	n   int
}

func (e *notTarError) Error() string {
	switch {
	case e.n == 0:
		return "not a tar archive: its " + e.ext + " data are empty"
	case e.n < tarBlock:
		return "not a tar archive: its " + e.ext + " data hold " + strconv.Itoa(e.n) + " bytes, less than a tar header"
	}
	return "not a tar archive: its " + e.ext + " data do not begin with a tar header"
}

func (e *notTarError) Is(target error) bool { return target == errFormat }

// decompress returns the tar stream inside br, a buffer in front of src, recognising the
// compression by its first bytes. Closing it releases the decompressor.
func decompress(br *bufio.Reader, src io.Reader) (io.ReadCloser, error) {
	if c := compressionOf(br); c != nil {
		return c.open(br, src)
	}
	return nil, &formatError{}
}

// compressionOf returns the compression of the stream br begins, or nil.
func compressionOf(br *bufio.Reader) *compression {
	head, _ := br.Peek(sniffLen)
	for i := range compressions {
		if compressions[i].is(head) {
			return &compressions[i]
		}
	}
	return nil
}

// tarStart returns r, a decompressed stream, read from its start again, once its first
// block showed it may be a tar: not one (*notTarError) where that block, whole or where the
// stream ends cleanly before a whole block, does not begin a tar (isTar). The
// decompressor's own error (data cut short) is left to the tar's reader.
func tarStart(r io.Reader, ext string) (io.Reader, error) {
	head := make([]byte, tarBlock)
	n, err := readBlock(r, head)
	head = head[:n]
	if (err == nil || err == io.EOF) && !isTar(head) { // a last read may say io.EOF with its bytes
		return nil, &notTarError{ext: ext, n: n}
	}
	if err != nil {
		return io.MultiReader(bytes.NewReader(head), failedReader{err}), nil
	}
	return io.MultiReader(bytes.NewReader(head), r), nil
}

// readBlock reads r into b until b is full or r fails, returning r's error as it is: an
// io.EOF is the stream's clean end, which io.ReadFull would not tell from a decompressor's
// io.ErrUnexpectedEOF.
func readBlock(r io.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		if n += m; err != nil {
			return n, err
		}
	}
	return n, nil
}

// failedReader returns err at every read: what a stream said after the bytes read of it.
type failedReader struct{ err error }

func (f failedReader) Read([]byte) (int, error) { return 0, f.err }

// isTar reports whether head starts a tar: a ustar, pax or GNU header (its magic, even in
// a first block cut short, which the tar's reader calls truncated), the end of an empty
// one (a meta-package's, say), or a whole block archive/tar reads as a header. That is a
// V7 header (tar --format=v7), which has no magic: GNU tar and archive/tar know one by its
// checksum alone, and archive/tar refuses one whose numeric fields do not parse.
func isTar(head []byte) bool {
	switch {
	case len(head) >= tarMagicEnd && bytes.HasPrefix(head[tarMagicAt:], []byte("ustar")):
		return true
	case len(head) < tarBlock:
		return false
	case len(bytes.TrimLeft(head[:tarBlock], "\x00")) == 0:
		return true
	}
	_, err := tar.NewReader(bytes.NewReader(head[:tarBlock])).Next()
	return !errors.Is(err, tar.ErrHeader)
}

func openPlain(br *bufio.Reader, _ io.Reader) (io.ReadCloser, error) { return io.NopCloser(br), nil }

// inflate decompresses r, a buffer in front of src, into plain: the tar itself, or the
// one a container's members make.
func inflate(plain *pipe, r *bufio.Reader, src io.Reader, cv conversion) error {
	head, _ := r.Peek(sniffLen)
	for _, c := range containers {
		if c.is(head) {
			return c.inflate(plain, r, cv)
		}
	}
	if !slices.ContainsFunc(compressions, func(c compression) bool { return c.is(head) }) {
		err := error(&formatError{containers: true})
		plain.closeWrite(err)
		return err
	}
	return inflateTar(plain, r, src)
}

// inflateTar decompresses the tar in r, a buffer in front of src, into plain; a
// compressed stream whose first block cannot begin a tar is refused (tarStart).
func inflateTar(plain *pipe, r *bufio.Reader, src io.Reader) error {
	c := compressionOf(r)
	if c == nil {
		err := error(&formatError{})
		plain.closeWrite(err)
		return err
	}
	zr, err := c.open(r, src)
	if err != nil {
		plain.closeWrite(err)
		return err
	}
	defer zr.Close()
	var tr io.Reader = zr
	if c.ext != "" {
		if tr, err = tarStart(zr, c.ext[1:]); err != nil {
			plain.closeWrite(err)
			return err
		}
	}
	return plain.fill(tr)
}

// compressedTar reports whether name is prefix followed by the extension of a
// compression pkg reads ("data.tar.xz"), or by another one (known false).
func compressedTar(name, prefix string) (is, known bool) {
	ext, ok := strings.CutPrefix(name, prefix)
	if !ok || ext != "" && ext[0] != '.' {
		return false, false
	}
	for _, c := range compressions {
		if ext == c.ext {
			return true, true
		}
	}
	return true, false
}

// compressionNames names the compressions as messages do: "gz", ..., "plain".
func compressionNames() []string {
	var names []string
	for _, c := range compressions {
		if c.ext != "" {
			names = append(names, c.ext[1:])
		}
	}
	return append([]string{"plain"}, names...)
}

func containerNames() []string {
	names := make([]string, len(containers))
	for i, c := range containers {
		names[i] = "a " + c.ext
	}
	return names
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

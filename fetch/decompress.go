package fetch

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// maxWindow bounds the history a zstd frame or an xz block may make the decompressor keep.
const maxWindow = 64 << 20 // 64 MiB

var (
	magicGzip  = []byte{0x1f, 0x8b}
	magicZstd  = []byte{0x28, 0xb5, 0x2f, 0xfd}
	magicXz    = []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}
	magicBzip2 = []byte("BZh")
)

// A bzip2 stream is "BZh", the block size '1' to '9', then the magic of a block or, for
// an empty stream, of the end (bzip2's doc/manual, and compress/bzip2/bzip2.go).
var (
	bzip2Block = []byte{0x31, 0x41, 0x59, 0x26, 0x53, 0x59}
	bzip2End   = []byte{0x17, 0x72, 0x45, 0x38, 0x50, 0x90}
)

// A ustar, pax or GNU tar header has "ustar" at this offset of its first block.
const (
	tarMagicAt  = 257
	tarMagicEnd = tarMagicAt + 5
	tarBlock    = 512
)

// errFormat is returned for an archive that is not a tar, compressed or not, in a format pkg reads.
var errFormat = errors.New("fetch: archive is not a tar (plain, gz, zst, xz or bz2), a .deb or a .zip")

// decompress returns the tar stream inside br, a buffer in front of src, recognising the
// compression by its magic bytes. Closing it releases the decompressor.
func decompress(br *bufio.Reader, src io.Reader) (io.ReadCloser, error) {
	head, _ := br.Peek(10)
	switch {
	case bytes.HasPrefix(head, magicGzip):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return zr, nil
	case bytes.HasPrefix(head, magicZstd):
		// A single-segment frame's window is its content size, bounded by MaxMemory, not
		// MaxWindow (klauspost/compress zstd/framedec.go). Concurrency 1 decodes in the
		// caller's goroutine, which measured faster than handing blocks to others. The
		// frames' checksums are not checked: the sha256 of the archive covers every byte.
		// The decoder reads whole blocks into a buffer of its own: past what br holds
		// already, it reads src, which saves copying every byte through br.
		rest := io.LimitReader(br, int64(br.Buffered()))
		zr, err := zstd.NewReader(io.MultiReader(rest, src), zstd.WithDecoderMaxWindow(maxWindow), zstd.WithDecoderMaxMemory(maxWindow),
			zstd.WithDecoderConcurrency(1), zstd.IgnoreChecksum(true))
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		return zstdReader{zr.IOReadCloser()}, nil
	case bytes.HasPrefix(head, magicXz):
		return newXZReader(br), nil
	case isBzip2(head):
		return io.NopCloser(bzip2.NewReader(br)), nil
	}
	if tar, _ := br.Peek(tarMagicEnd); len(tar) == tarMagicEnd && bytes.HasPrefix(tar[tarMagicAt:], []byte("ustar")) {
		return io.NopCloser(br), nil
	}
	if end, _ := br.Peek(tarBlock); len(end) == tarBlock && len(bytes.TrimLeft(end, "\x00")) == 0 {
		return io.NopCloser(br), nil // an empty tar: its end (a meta-package's, say)
	}
	return nil, errFormat
}

// isBzip2 reports whether head, the first 10 bytes of a stream, start a bzip2 stream.
func isBzip2(head []byte) bool {
	if len(head) < 10 || !bytes.HasPrefix(head, magicBzip2) || head[3] < '1' || head[3] > '9' {
		return false
	}
	return bytes.Equal(head[4:], bzip2Block) || bytes.Equal(head[4:], bzip2End)
}

// zstdReader says what to do about a frame that needs more memory than pkg allows.
type zstdReader struct{ io.ReadCloser }

func (z zstdReader) Read(p []byte) (int, error) {
	n, err := z.ReadCloser.Read(p)
	if errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		err = fmt.Errorf("zstd: the archive needs a window over pkg's %d MiB limit (made with --long or --ultra?): recompress it without them: %w", maxWindow>>20, err)
	}
	return n, err
}

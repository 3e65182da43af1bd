package fetch

import (
	"bufio"
	"bytes"
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

// A ustar, pax or GNU tar header has "ustar" at this offset of its first block.
const (
	tarMagicAt  = 257
	tarMagicEnd = tarMagicAt + 5
	tarBlock    = 512
)

// ErrFormat is returned for an archive that is not a tar, compressed or not, in a format pkg reads.
var ErrFormat = errors.New("fetch: archive is not a tar, tar.gz, tar.zst or tar.xz")

// decompress returns the tar stream inside br, a buffer in front of src, recognising the
// compression by its magic bytes. Closing it releases the decompressor.
func decompress(br *bufio.Reader, src io.Reader) (io.ReadCloser, error) {
	head, _ := br.Peek(6)
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
	case bytes.HasPrefix(head, magicBzip2):
		return nil, fmt.Errorf("%w (bzip2 is not supported: recompress it with zstd)", ErrFormat)
	}
	if tar, _ := br.Peek(tarMagicEnd); len(tar) == tarMagicEnd && bytes.HasPrefix(tar[tarMagicAt:], []byte("ustar")) {
		return io.NopCloser(br), nil
	}
	if end, _ := br.Peek(tarBlock); len(end) == tarBlock && len(bytes.TrimLeft(end, "\x00")) == 0 {
		return io.NopCloser(br), nil // an empty tar: its end (a meta-package's, say)
	}
	return nil, ErrFormat
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

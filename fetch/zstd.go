package fetch

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

var magicZstd = []byte{0x28, 0xb5, 0x2f, 0xfd}

func isZstd(head []byte) bool { return bytes.HasPrefix(head, magicZstd) }

// openZstd reads a zstd stream. A single-segment frame's window is its content size,
// bounded by MaxMemory, not MaxWindow (klauspost/compress zstd/framedec.go). Concurrency 1
// decodes in the caller's goroutine, which measured faster than handing blocks to others.
// The frames' checksums are not checked: the sha256 of the archive covers every byte. The
// decoder reads whole blocks into a buffer of its own: past what br holds already, it
// reads src, which saves copying every byte through br.
func openZstd(br *bufio.Reader, src io.Reader) (io.ReadCloser, error) {
	rest := io.LimitReader(br, int64(br.Buffered()))
	zr, err := zstd.NewReader(io.MultiReader(rest, src), zstd.WithDecoderMaxWindow(maxWindow), zstd.WithDecoderMaxMemory(maxWindow),
		zstd.WithDecoderConcurrency(1), zstd.IgnoreChecksum(true))
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	return zstdReader{zr.IOReadCloser()}, nil
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

package fetch

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
)

var magicGzip = []byte{0x1f, 0x8b}

func isGzip(head []byte) bool { return bytes.HasPrefix(head, magicGzip) }

func openGzip(br *bufio.Reader, _ io.Reader) (io.ReadCloser, error) {
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return zr, nil
}

package fetch

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"io"
)

// A bzip2 stream is "BZh", the block size '1' to '9', then the magic of a block or, for
// an empty stream, of the end (bzip2's doc/manual, and compress/bzip2/bzip2.go).
var (
	magicBzip2 = []byte("BZh")
	bzip2Block = []byte{0x31, 0x41, 0x59, 0x26, 0x53, 0x59}
	bzip2End   = []byte{0x17, 0x72, 0x45, 0x38, 0x50, 0x90}
)

// isBzip2 reports whether head starts a bzip2 stream.
func isBzip2(head []byte) bool {
	if len(head) < 10 || !bytes.HasPrefix(head, magicBzip2) || head[3] < '1' || head[3] > '9' {
		return false
	}
	return bytes.Equal(head[4:10], bzip2Block) || bytes.Equal(head[4:10], bzip2End)
}

func openBzip2(br *bufio.Reader, _ io.Reader) (io.ReadCloser, error) {
	return io.NopCloser(bzip2.NewReader(br)), nil
}

package fetch

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
)

var magicGzip = []byte{0x1f, 0x8b}

func isGzip(head []byte) bool { return bytes.HasPrefix(head, magicGzip) }

// gzipReaders keeps decompressors for the process's next conversions: each holds a 32 KiB
// window and its tables, made anew for each of a cold install's packages otherwise.
var gzipReaders sync.Pool // of *gzip.Reader

func openGzip(br *bufio.Reader, _ io.Reader) (io.ReadCloser, error) {
	zr, ok := gzipReaders.Get().(*gzip.Reader)
	var err error
	if ok {
		err = zr.Reset(br)
	} else {
		zr, err = gzip.NewReader(br)
	}
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return pooledGzip{zr}, nil
}

// pooledGzip gives its decompressor back to gzipReaders when closed.
type pooledGzip struct{ *gzip.Reader }

func (z pooledGzip) Close() error {
	err := z.Reader.Close()
	gzipReaders.Put(z.Reader)
	return err
}

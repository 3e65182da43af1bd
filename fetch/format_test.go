package fetch

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestFormatRows checks that each archive format is recognised by its own row of the
// tables and no other, and that an archive in none is refused as errFormat.
func TestFormatRows(t *testing.T) {
	tarball := makeTar(t, testFiles())
	zw, _ := zstd.NewWriter(nil)
	bz2 := []byte("BZh9\x17\x72\x45\x38\x50\x90\x00\x00\x00\x00") // an empty bzip2 stream
	samples := map[string][]byte{
		"":     tarball,
		".gz":  gzipped(t, tarball),
		".zst": zw.EncodeAll(tarball, nil),
		".xz":  xzStream(t, tarball, 1<<20, 0x1),
		".bz2": bz2,
		".deb": arArchive(arMember{name: "debian-binary", data: []byte("2.0\n")}),
		".zip": makeZip(t, zipEntry{name: "a", data: "a"}),
	}
	for ext, data := range samples {
		head := data[:min(len(data), sniffLen)]
		var got []string
		for _, c := range containers {
			if c.is(head) {
				got = append(got, c.ext)
			}
		}
		for _, c := range compressions {
			if c.is(head) {
				got = append(got, c.ext)
			}
		}
		if len(got) != 1 || got[0] != ext {
			t.Errorf("%q sample recognised as %q, want only %q", ext, got, ext)
		}
	}
	_, err := convert(io.Discard, bytes.NewReader([]byte("not an archive")), conversion{})
	if !errors.Is(err, errFormat) {
		t.Errorf("convert(text) = %v, want errFormat", err)
	}
}

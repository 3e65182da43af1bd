package fetch

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
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

// badCRCZip returns a zip of one stored member, a, whose CRC-32 is not its data's.
func badCRCZip(t *testing.T) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "a", Method: zip.Store, CRC32: 1, CompressedSize64: 5, UncompressedSize64: 5})
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, "hello")
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestInspectRefusesOnce inspects files in no format pkg reads, and a zip whose central
// directory is garbage: each error is the reason's, names the file, and says what is wrong
// once, without a Go package's name before it.
func TestInspectRefusesOnce(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		data []byte
		is   error
		word string // says what is wrong, once
	}{
		{"text.tar", []byte("not an archive, just text\n"), errFormat, "not a tar"},
		{"random.tgz", bytes.Repeat([]byte{0x5a, 0x17, 0xc3}, 400), errFormat, "not a tar"},
		{"bad.zip", []byte("PK\x03\x04garbage, no central directory"), zip.ErrFormat, "zip:"},
		{"crc.zip", badCRCZip(t), zip.ErrChecksum, "zip"},
	} {
		path := filepath.Join(dir, tt.name)
		if err := os.WriteFile(path, tt.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Inspect(t.Context(), path)
		if !errors.Is(err, tt.is) {
			t.Errorf("Inspect(%s) = %v, want %v", tt.name, err, tt.is)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, path+": ") || strings.Count(strings.TrimPrefix(msg, path), tt.word) != 1 || strings.Contains(msg, "fetch:") {
			t.Errorf("Inspect(%s) says %q: want the file named, then %q once, and no package's name", tt.name, msg, tt.word)
		}
	}
}

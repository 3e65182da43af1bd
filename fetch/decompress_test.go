package fetch

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"

	"pkg/repo"
	"pkg/tarutil"
)

// inflateAll decompresses data the way a fetch does.
func inflateAll(data []byte) ([]byte, error) {
	src := bytes.NewReader(data)
	zr, err := decompress(bufio.NewReader(src), src)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	return io.ReadAll(zr)
}

// xzStream compresses data with ulikunitz/xz in blocks of blockSize.
func xzStream(t testing.TB, data []byte, blockSize int64, check byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := xz.WriterConfig{DictCap: 1 << 20, BlockSize: blockSize, CheckSum: check}.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// setDict sets the LZMA2 dictionary size property of an xz stream's first block to p and
// fixes the block header's CRC32.
func setDict(t testing.TB, stream []byte, p byte) []byte {
	t.Helper()
	s := bytes.Clone(stream)
	h := s[xzHeaderLen : xzHeaderLen+(int(s[xzHeaderLen])+1)*4]
	i := bytes.Index(h[2:], []byte{xzLZMA2, 1})
	if i < 0 {
		t.Fatalf("no LZMA2 filter in block header %x", h)
	}
	h[2+i+2] = p
	binary.LittleEndian.PutUint32(h[len(h)-4:], crc32.ChecksumIEEE(h[:len(h)-4]))
	return s
}

// somewhatRandom is data that LZMA compresses a little: text and noise.
func somewhatRandom(n int) []byte {
	rng := rand.New(rand.NewPCG(3, 4))
	b := make([]byte, 0, n)
	for len(b) < n {
		if rng.IntN(2) == 0 {
			b = append(b, "the quick brown fox jumps over the lazy dog "...)
		} else {
			for range 64 {
				b = append(b, byte(rng.Uint32()))
			}
		}
	}
	return b[:n]
}

// TestXZStreams decodes streams of several blocks and streams, with every check type,
// padding between streams, and dictionaries up to the limit.
func TestXZStreams(t *testing.T) {
	data := somewhatRandom(300 << 10)
	var cat []byte
	for _, check := range []byte{xz.None, xz.CRC32, xz.CRC64, xz.SHA256} {
		s := xzStream(t, data, 64<<10, check)
		got, err := inflateAll(s)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("check %d: %d bytes, %v", check, len(got), err)
		}
		cat = append(append(cat, s...), 0, 0, 0, 0)
	}
	got, err := inflateAll(cat)
	if err != nil || !bytes.Equal(got, bytes.Repeat(data, 4)) {
		t.Errorf("4 streams with padding: %d bytes, %v", len(got), err)
	}
	limit := setDict(t, xzStream(t, data, 1<<20, xz.CRC64), 28) // 64 MiB
	if got, err := inflateAll(limit); err != nil || !bytes.Equal(got, data) {
		t.Errorf("64 MiB dictionary: %d bytes, %v", len(got), err)
	}
}

// TestXZInterop reads what xz(1) writes, incompressible chunks included.
func TestXZInterop(t *testing.T) {
	needXZ(t)
	data := somewhatRandom(1 << 20)
	for _, args := range [][]string{{"-6"}, {"--check=sha256", "--block-size=100000"}, {"--check=none", "-0"}} {
		cmd := exec.Command("xz", append(args, "-c")...)
		cmd.Stdin = bytes.NewReader(data)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if got, err := inflateAll(out); err != nil || !bytes.Equal(got, data) {
			t.Errorf("xz %v: %d bytes, %v", args, len(got), err)
		}
	}
}

// TestXZDictionaryCap refuses xz blocks whose dictionary is over 64 MiB, before the xz
// reader allocates it.
func TestXZDictionaryCap(t *testing.T) {
	stream := xzStream(t, somewhatRandom(10000), 1<<20, xz.CRC64)
	for _, p := range []byte{29, 36, 40} { // 96 MiB, 1 GiB, 4 GiB - 1
		_, err := inflateAll(setDict(t, stream, p))
		if !errors.Is(err, errWindow) {
			t.Errorf("property %d: %v, want the dictionary refused", p, err)
		}
	}
}

// zstdFrame builds a zstd frame by hand: a frame header descriptor, the rest of the
// header, and data as one raw block.
func zstdFrame(fhd byte, header []byte, data []byte) []byte {
	f := append([]byte{0x28, 0xb5, 0x2f, 0xfd, fhd}, header...)
	bh := uint32(1 | len(data)<<3) // last block, raw
	f = append(f, byte(bh), byte(bh>>8), byte(bh>>16))
	return append(f, data...)
}

// TestZstdWindowCap refuses zstd frames that ask for a window over 64 MiB, as a window
// descriptor or as a single segment's content size.
func TestZstdWindowCap(t *testing.T) {
	data := []byte("hello")
	if got, err := inflateAll(zstdFrame(0, []byte{0x80}, data)); err != nil || string(got) != "hello" { // 64 MiB window
		t.Fatalf("hand-made frame: %q, %v", got, err)
	}
	tests := map[string][]byte{
		"128 MiB window":             zstdFrame(0, []byte{0x88}, data),
		"1 GiB single-segment frame": zstdFrame(0xa0, []byte{0, 0, 0, 0x40}, data),
	}
	for name, frame := range tests {
		_, err := inflateAll(frame)
		if !errors.Is(err, zstd.ErrWindowSizeExceeded) && !errors.Is(err, zstd.ErrDecoderSizeExceeded) ||
			!strings.Contains(fmt.Sprint(err), "over pkg's 64 MiB limit (made with --long or --ultra?)") {
			t.Errorf("%s: %v, want it refused for its size, saying what to do", name, err)
		}
	}
}

// TestLimits converts archives that break their index entry's installed_size or files.
func TestLimits(t *testing.T) {
	archive, p := testArchive(t)
	tests := []struct {
		edit func(*struct{ bytes, files int64 })
		want error
	}{
		{func(l *struct{ bytes, files int64 }) { l.bytes-- }, tarutil.ErrLimit},
		{func(l *struct{ bytes, files int64 }) { l.files-- }, tarutil.ErrLimit},
		{func(l *struct{ bytes, files int64 }) { l.bytes++ }, repo.ErrContents},
		{func(l *struct{ bytes, files int64 }) { l.files++ }, repo.ErrContents},
	}
	for _, tt := range tests {
		q := p
		l := struct{ bytes, files int64 }{q.InstalledSize, int64(q.Files)}
		tt.edit(&l)
		q.InstalledSize, q.Files = l.bytes, int(l.files)
		c := openCache(t)
		err := c.store(newVerifier(bytes.NewReader(archive), q, nil), q)
		if !errors.Is(err, tt.want) {
			t.Errorf("installed_size %d, files %d: %v, want %v", q.InstalledSize, q.Files, err, tt.want)
		}
		checkEmpty(t, c)
	}
}

// TestCorruptArchive flips a byte of the compressed archive: the decompressor fails, but
// what is reported is the sha256 mismatch that caused it.
func TestCorruptArchive(t *testing.T) {
	archive, p := testArchive(t)
	bad := bytes.Clone(archive)
	bad[len(bad)/2] ^= 0xff
	c := openCache(t)
	err := c.store(newVerifier(bytes.NewReader(bad), p, nil), p)
	if !errors.Is(err, ErrMismatch) {
		t.Errorf("error %v, want a sha256 mismatch", err)
	}
	checkEmpty(t, c)
}

// errDiskFull is the error of failAfter.
var errDiskFull = errors.New("disk full")

// failAfter is a writer that fails after n bytes.
type failAfter struct{ n int }

func (w *failAfter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errDiskFull
	}
	w.n -= len(p)
	return len(p), nil
}

// TestConvertWriteError fails writing the cache: that error is reported, and the rest of
// the archive is not read.
func TestConvertWriteError(t *testing.T) {
	archive, p := testArchive(t)
	p.Size += 64 << 20
	src := &countingReader{r: newVerifier(bytes.NewReader(append(archive, make([]byte, 64<<20)...)), p, nil)}
	_, err := convert(&failAfter{n: 100000}, src, conversion{})
	if !errors.Is(err, errDiskFull) {
		t.Errorf("error %v, want the write error", err)
	}
	if src.n > 32<<20 {
		t.Errorf("read %d bytes of the archive after the write failed", src.n)
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// FuzzXZ feeds arbitrary streams to the xz reader: it must not panic, and what it
// decodes without error ulikunitz/xz must decode the same.
func FuzzXZ(f *testing.F) {
	data := somewhatRandom(5000)
	f.Add(xzStream(f, data, 1000, xz.CRC32))
	f.Add(append(xzStream(f, data, 1<<20, xz.None), 0, 0, 0, 0))
	f.Add(setDict(f, xzStream(f, data, 1<<20, xz.SHA256), 40))
	f.Fuzz(func(t *testing.T, in []byte) {
		zr := newXZReader(bufio.NewReader(bytes.NewReader(in)))
		defer zr.Close()
		out, err := io.ReadAll(zr)
		if err != nil {
			return
		}
		xr, err := xz.NewReader(bytes.NewReader(in))
		if err != nil {
			t.Fatalf("decoded %d bytes of a stream ulikunitz/xz refuses: %v", len(out), err)
		}
		if want, err := io.ReadAll(xr); err != nil || !bytes.Equal(out, want) {
			t.Errorf("decoded %d bytes, ulikunitz/xz %d, %v", len(out), len(want), err)
		}
	})
}

// BenchmarkConvert converts an archive of 16 MiB of files, compressed each way, to
// io.Discard, and a gzip'd one of 30 files of 3 KiB, the size of an npm package of the
// peers tree (a cold install converts hundreds of them, one after another).
func BenchmarkConvert(b *testing.B) {
	files := []file{{"a", somewhatRandom(8 << 20)}, {"b", somewhatRandom(8 << 20)}}
	plain := makeTar(b, files)
	var small []file
	for i := range 30 {
		small = append(small, file{fmt.Sprintf("package/lib/f%d.js", i), somewhatRandom(3 << 10)})
	}
	smallTar := makeTar(b, small)
	b.Run("gz-small", func(b *testing.B) {
		archive := gzipped(b, smallTar)
		b.SetBytes(int64(len(smallTar)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := convert(io.Discard, bytes.NewReader(archive), conversion{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	var z bytes.Buffer
	zw, _ := zstd.NewWriter(&z)
	zw.Write(plain)
	zw.Close()
	for _, bc := range []struct {
		name    string
		archive []byte
	}{
		{"tar", plain},
		{"gz", gzipped(b, plain)},
		{"zst", z.Bytes()},
		{"xz", xzStream(b, plain, 1<<20, xz.CRC64)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(plain)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := convert(io.Discard, bytes.NewReader(bc.archive), conversion{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestRecordPadding converts a tar padded to a 2 MiB record (GNU tar -b 4096) and refuses
// one followed by more than maxTrailer bytes.
func TestRecordPadding(t *testing.T) {
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "f", Mode: 0o644, Size: 1})
	tw.Write([]byte("x"))
	tw.Close()
	for pad, ok := range map[int]bool{2<<20 - tb.Len(): true, maxTrailer + 1: false} {
		in := append(bytes.Clone(tb.Bytes()), make([]byte, pad)...)
		_, err := convert(io.Discard, bytes.NewReader(in), conversion{})
		if (err == nil) != ok {
			t.Errorf("tar followed by %d zero bytes: %v", pad, err)
		}
	}
}

// TestEmptyTar reads a tar with no members, as tar -cf x.tar -T /dev/null writes (a
// meta-package's), compressed or not; an empty file is not a tar.
func TestEmptyTar(t *testing.T) {
	var tb bytes.Buffer
	tar.NewWriter(&tb).Close()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(tb.Bytes())
	zw.Close()
	for name, in := range map[string][]byte{"tar": tb.Bytes(), "tar.gz": gz.Bytes()} {
		st, err := convert(io.Discard, bytes.NewReader(in), conversion{})
		if err != nil || len(st.Members) != 0 {
			t.Errorf("empty %s: %+v, %v", name, st, err)
		}
	}
	if _, err := convert(io.Discard, bytes.NewReader(nil), conversion{}); !errors.Is(err, errFormat) {
		t.Errorf("empty file: %v, want ErrFormat", err)
	}
}

// TestNotTarCompressed: a compressed stream that holds no tar (a text file, nothing, bytes
// whose first block is no tar header) is refused as not a tar archive, saying so once,
// where the tar's reader called it truncated or its header invalid; a tar cut short and
// then compressed whole is still truncated, and a V7 tar, which has no magic, is read.
func TestNotTarCompressed(t *testing.T) {
	b := v7Tar(nil)
	zst, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		in   []byte
		want string // "" for read, else what the error says after "not a tar archive: "
	}{
		{"text.tar.gz", gzipped(t, []byte("localhost\n")), "its gz data hold 10 bytes, less than a tar header"},
		{"text.tar.zst", zst.EncodeAll([]byte("localhost\n"), nil), "its zst data hold 10 bytes, less than a tar header"},
		{"text.tar.xz", xzStream(t, []byte("localhost\n"), 1<<20, 0x1), "its xz data hold 10 bytes, less than a tar header"},
		{"empty.tar.gz", gzipped(t, nil), "its gz data are empty"},
		{"random.tar.gz", gzipped(t, somewhatRandom(3000)), "its gz data do not begin with a tar header"},
		// One block exactly, whose last read says io.EOF with its bytes, as gzip's does.
		{"block.tar.gz", gzipped(t, bytes.Repeat([]byte("a"), 512)), "its gz data do not begin with a tar header"},
		{"block.tar.zst", zst.EncodeAll(bytes.Repeat([]byte("a"), 512), nil), "its zst data do not begin with a tar header"},
		{"v7.tar.gz", gzipped(t, b), ""},
	} {
		st, err := convert(io.Discard, bytes.NewReader(tt.in), conversion{})
		switch {
		case tt.want == "" && (err != nil || len(st.Members) != 1):
			t.Errorf("%s: %d members, %v; want one", tt.name, len(st.Members), err)
		case tt.want != "" && (!errors.Is(err, errFormat) || err.Error() != "not a tar archive: "+tt.want):
			t.Errorf("%s: %v; want errFormat saying %q", tt.name, err, "not a tar archive: "+tt.want)
		}
	}
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	tw.WriteHeader(&tar.Header{Name: "f", Mode: 0o644, Size: 2, Typeflag: tar.TypeReg})
	tw.Write([]byte("f\n"))
	tw.Close()
	if _, err := convert(io.Discard, bytes.NewReader(gzipped(t, tb.Bytes()[:300])), conversion{}); !errors.Is(err, tarutil.ErrTruncated) {
		t.Errorf("a tar cut in its first header, then gzipped: %v, want tarutil.ErrTruncated", err)
	}
}

// v7Tar returns a tar of one member, f, holding "f\n", whose header is V7's: no ustar
// magic, its checksum set after edit, if not nil, changed the header.
func v7Tar(edit func(hdr []byte)) []byte {
	var v7 bytes.Buffer
	tw := tar.NewWriter(&v7)
	tw.WriteHeader(&tar.Header{Name: "f", Mode: 0o644, Size: 2, Typeflag: tar.TypeReg, Format: tar.FormatUSTAR})
	tw.Write([]byte("f\n"))
	tw.Close()
	b := v7.Bytes()
	copy(b[257:265], make([]byte, 8)) // no "ustar\x0000"
	if edit != nil {
		edit(b[:512])
	}
	sum := 0
	for i, c := range b[:512] {
		if i >= 148 && i < 156 {
			c = ' '
		}
		sum += int(c)
	}
	copy(b[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

// TestV7Start: a tar whose first header has no ustar magic is read where archive/tar reads
// that header, as GNU tar does, by its checksum, plain or compressed alike, and refused
// as no tar, plain or compressed alike, where its checksum or a numeric field is wrong.
func TestV7Start(t *testing.T) {
	badSum := v7Tar(nil)
	badSum[148]++ // the checksum's first octal digit
	for _, tt := range []struct {
		name string
		tar  []byte
		read bool
	}{
		{"v7", v7Tar(nil), true},
		{"v7 bad checksum", badSum, false},
		{"v7 size not octal", v7Tar(func(h []byte) { copy(h[124:136], "0000000000z\x00") }), false},
		{"512 letters", bytes.Repeat([]byte("a"), 1024), false},
	} {
		for _, form := range []struct {
			ext string
			in  []byte
		}{{"", tt.tar}, {".gz", gzipped(t, tt.tar)}} {
			st, err := convert(io.Discard, bytes.NewReader(form.in), conversion{})
			switch {
			case tt.read && (err != nil || len(st.Members) != 1):
				t.Errorf("%s%s: %d members, %v; want one", tt.name, form.ext, len(st.Members), err)
			case !tt.read && !errors.Is(err, errFormat):
				t.Errorf("%s%s: %v; want errFormat", tt.name, form.ext, err)
			}
		}
	}
}

// TestTruncatedCompressed cuts a compressed tar short, as a download saved in part or a
// file copied in part: it is refused as truncated, as a plain tar or a .deb cut short is,
// not with the decompressor's bare "unexpected EOF", which named neither.
func TestTruncatedCompressed(t *testing.T) {
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	data := somewhatRandom(256 << 10)
	tw.WriteHeader(&tar.Header{Name: "data", Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg})
	tw.Write(data)
	tw.Close()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(tb.Bytes())
	zw.Close()
	zst, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	var xzb bytes.Buffer
	xw, err := xz.NewWriter(&xzb)
	if err != nil {
		t.Fatal(err)
	}
	xw.Write(tb.Bytes())
	xw.Close()
	for name, in := range map[string][]byte{"tar": tb.Bytes(), "tar.gz": gz.Bytes(), "tar.zst": zst.EncodeAll(tb.Bytes(), nil), "tar.xz": xzb.Bytes()} {
		_, err := convert(io.Discard, bytes.NewReader(in[:len(in)/2]), conversion{})
		if !errors.Is(err, tarutil.ErrTruncated) {
			t.Errorf("%s cut short: %v, want tarutil.ErrTruncated", name, err)
		}
	}
}

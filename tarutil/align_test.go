package tarutil

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

var sizes = []int{0, 1, 511, 4095, 4096, 4097, 100000}

// sized returns a file of each test size under dir.
func sized(dir string) []entry {
	var es []entry
	for _, n := range sizes {
		es = append(es, file(fmt.Sprintf("%sf%d", dir, n), n))
	}
	return es
}

func join(groups ...[]entry) []entry {
	var es []entry
	for _, g := range groups {
		es = append(es, g...)
	}
	return es
}

var (
	long1     = strings.Repeat("long-directory-name-", 6)  // 120 bytes
	long2     = strings.Repeat("long-file-name-", 8) + "x" // 121 bytes
	longName  = long1 + "/" + long2
	path4000  = deepPath(4000)
	utf8Names = []string{"ünïcödé/", "ünïcödé/日本語.txt", "ünïcödé/émoji-🙂", "ünïcödé/" + strings.Repeat("ü", 60)}
)

// deepPath returns a file name of exactly n bytes in 100-byte directories.
func deepPath(n int) string {
	var b strings.Builder
	for b.Len()+101 < n {
		b.WriteString(strings.Repeat("p", 100) + "/")
	}
	b.WriteString(strings.Repeat("f", n-b.Len()))
	return b.String()
}

// alignCases are well-formed archives in the shapes real tools write.
func alignCases(tb testing.TB) []struct {
	name string
	in   []byte
} {
	return []struct {
		name string
		in   []byte
	}{
		{"ustar", makeTar(tb, tar.FormatUSTAR, join(
			[]entry{dir("d/")}, sized("d/"),
			[]entry{symlink("d/link", "f4096"), hardlink("d/hard", "d/f100000"), fileMode("d/exec", 10, 0o755)},
		)...)},
		{"pax", makeTar(tb, tar.FormatPAX, join(
			[]entry{dir("p/")}, sized("p/"),
			[]entry{file("p/"+longName, 5000), symlink("p/longlink", longName), hardlink("p/hard", "p/"+longName)},
			[]entry{dir(utf8Names[0]), file(utf8Names[1], 4096), file(utf8Names[2], 7), file(utf8Names[3], 4097)},
		)...)},
		{"gnu", makeTar(tb, tar.FormatGNU, join(
			[]entry{dir("g/")}, sized("g/"),
			[]entry{file("g/"+longName, 4097), hardlink("g/"+long2, "g/"+longName), symlink("g/"+long1+"-link", longName)},
		)...)},
		{"path4000", makeTar(tb, tar.FormatPAX, file(path4000, 4096), file(path4000[:3000]+"x", 1))},
		{"leading-dot", makeTar(tb, tar.FormatGNU, dir("./"), dir("./a/"), file("./a/f", 9000), file("./a/g", 3),
			symlink("./a/l", "./f"), hardlink("./a/h", "./a/f"))},
		{"no-dirs", makeTar(tb, tar.FormatUSTAR, file("x/y/z/f", 4096), file("x/y/g", 1), file("x/w", 8192), file("top", 0))},
		{"repeated-dirs", makeTar(tb, tar.FormatPAX, file("r/s/f", 1), dir("r/"), dir("r/s/"), dir("t/"), dir("t"), dir("./t/"))},
		{"global-header", makeTar(tb, tar.FormatUnknown, globalHeader(), file("a", 5000), globalHeader(), file("b", 5))},
		{"empty-files", makeTar(tb, tar.FormatUSTAR, file("e1", 0), file("e/e2", 0), dir("e/sub/"))},
		{"modes", makeTar(tb, tar.FormatPAX, fileMode("m400", 1, 0o400), fileMode("m777", 5000, 0o777), fileMode("m000", 0, 0))},
		{"mtimes", makeTar(tb, tar.FormatPAX, withTime(file("old", 5000), time.Unix(-100000, 0)),
			withTime(file("far", 5000), time.Unix(1<<34, 0)), withTime(file("frac", 1), time.Unix(1700000000, 5e8)))},
		{"symlinks", makeTar(tb, tar.FormatPAX, dir("s/"), dir("s/t/"), symlink("s/t/up", "../../s"), symlink("s/dot", "."),
			symlink("s/self", "t/up"), symlink("dirlink", "s/t"))},
		{"many-aligned", makeTar(tb, tar.FormatPAX, manyFiles(40)...)},
		{"regA", regA(tb)},
		{"empty", makeTar(tb, tar.FormatUSTAR)},
	}
}

func withTime(e entry, t time.Time) entry {
	e.hdr.ModTime = t
	return e
}

// manyFiles returns n files whose sizes walk the alignment arithmetic:
// every offset modulo 4096 and many pax record lengths.
func manyFiles(n int) []entry {
	var es []entry
	for i := range n {
		name := strings.Repeat("n", i*7%150) + strconv.Itoa(i)
		es = append(es, file(name, 4096+i*513))
	}
	return es
}

// regA is an archive whose members have the pre-POSIX type flag '\x00'.
func regA(tb testing.TB) []byte {
	b := makeTar(tb, tar.FormatUSTAR, file("old/a", 5000), file("old/b", 3))
	patchBlock(b, 0, func(blk []byte) { blk[offType] = 0 })
	patchBlock(b, 512+5120, func(blk []byte) { blk[offType] = 0 })
	return b
}

func TestAlign(t *testing.T) {
	for _, tc := range alignCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			roundTrip(t, tc.in)
		})
	}
}

func TestAlignDeterministic(t *testing.T) {
	for _, tc := range alignCases(t) {
		var a, b bytes.Buffer
		if _, err := Align(&a, bytes.NewReader(tc.in), Limits{}); err != nil {
			t.Fatal(err)
		}
		// The second reads in short pieces, through Align's own buffer (no ReadByte).
		if _, err := Align(&b, iotest.HalfReader(bytes.NewReader(tc.in)), Limits{}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: two conversions differ", tc.name)
		}
	}
}

// TestAlignSynthesized checks the directories Align writes for members
// whose parents the input lacks.
func TestAlignSynthesized(t *testing.T) {
	in := makeTar(t, tar.FormatUSTAR, file("a/b/c", 1), file("a/d", 1))
	var out bytes.Buffer
	if _, err := Align(&out, bytes.NewReader(in), Limits{}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range readTar(t, out.Bytes()) {
		got = append(got, fmt.Sprintf("%s %c %o %d", m.hdr.Name, m.hdr.Typeflag, m.hdr.Mode, m.hdr.ModTime.Unix()))
	}
	want := []string{"a/ 5 755 1700000000", "a/b/ 5 755 1700000000", "a/b/c 0 644 1700000000", "a/d 0 644 1700000000"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("members:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestAlignTruncated(t *testing.T) {
	in := makeTar(t, tar.FormatPAX, file("a", 100), file("b", 10000), file("c", 5))
	cuts := map[int]streamError{
		100:           {at: atHeader},
		512 + 50:      {at: atMember, member: "a"},
		512 + 150:     {at: atEnd, member: "a"},
		1024:          {at: atEnd, member: "a"},
		0:             {at: atEnd},
		len(in) - 512: {at: atEnd, member: "c"},
		1024 + 100:    {at: atHeader, member: "a"},
		1536 + 1000:   {at: atMember, member: "b"},
		len(in) - 10:  {at: atHeader, member: "c"},
	}
	for cut, where := range cuts {
		_, err := Align(io.Discard, bytes.NewReader(in[:cut]), Limits{})
		if !errors.Is(err, ErrTruncated) || !isAt(err, where) {
			t.Errorf("cut at %d: error %v, want ErrTruncated at %+v", cut, err, where)
		}
	}
}

// TestAlignTruncatedAfterMeta cuts archives right after the GNU long name or
// pax header of their only member, where archive/tar reports a plain end of
// archive.
func TestAlignTruncatedAfterMeta(t *testing.T) {
	for _, format := range []tar.Format{tar.FormatGNU, tar.FormatPAX} {
		in := makeTar(t, format, file(longName+longName, 1))
		_, err := Align(io.Discard, bytes.NewReader(in[:2*blockSize]), Limits{})
		if !errors.Is(err, ErrTruncated) || !isAt(err, streamError{at: atEnd}) {
			t.Errorf("%v: error %v, want truncated", format, err)
		}
	}
}

func TestAlignNotTar(t *testing.T) {
	_, err := Align(io.Discard, strings.NewReader(strings.Repeat("not a tar ", 100)), Limits{})
	if !errors.Is(err, tar.ErrHeader) || !isAt(err, streamError{at: atHeader}) {
		t.Errorf("error %v, want a read error", err)
	}
}

// errDiskFull is the error of failWriter.
var errDiskFull = errors.New("disk full")

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n < len(p) {
		return 0, errDiskFull
	}
	w.n -= len(p)
	return len(p), nil
}

func TestAlignWriteError(t *testing.T) {
	in := makeTar(t, tar.FormatPAX, file("a", 300000), file("b", 1))
	for _, n := range []int{0, 100000, 305000} {
		_, err := Align(&failWriter{n: n}, bytes.NewReader(in), Limits{})
		if !errors.Is(err, errDiskFull) || !strings.HasPrefix(err.Error(), "write ") {
			t.Errorf("writer failing after %d bytes: error %v", n, err)
		}
	}
}

// countWriter counts the bytes written to it.
type countWriter struct{ n int }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	return len(p), nil
}

// TestAlignLimits checks that a limit refuses the first member past it before
// copying its data, and that an archive exactly at its limits passes.
func TestAlignLimits(t *testing.T) {
	in := makeTar(t, tar.FormatPAX, dir("d"), file("d/a", 5000), symlink("d/l", "a"), file("d/big", 1<<20))
	tests := []struct {
		lim  Limits
		name string // member refused, "" for none
	}{
		{Limits{}, ""},
		{Limits{Bytes: 5000 + 1<<20, Files: 3}, ""},
		{Limits{Bytes: 5000 + 1<<20 - 1}, "d/big"},
		{Limits{Bytes: 4999}, "d/a"},
		{Limits{Files: 2}, "d/big"},
		{Limits{Files: 1}, "d/l"},
	}
	for _, tt := range tests {
		var w countWriter
		st, err := Align(&w, bytes.NewReader(in), tt.lim)
		if tt.name == "" {
			if err != nil || st.Files != 3 || len(st.Members) != 4 {
				t.Errorf("%+v: %+v, %v", tt.lim, st, err)
			}
			continue
		}
		wantRefused(t, err, tt.name, ErrLimit)
		if tt.name == "d/big" && w.n > 1<<20 {
			t.Errorf("%+v: wrote %d bytes, so copied data past the limit", tt.lim, w.n)
		}
	}
}

// TestCommentLen checks the padding arithmetic for every block offset within
// two alignment units and record lengths across the digit boundaries.
func TestCommentLen(t *testing.T) {
	for off := int64(0); off < 2*Alignment; off += blockSize {
		for r := 0; r < Alignment+1200; r++ {
			n := commentLen(off, r)
			rec := appendComment(nil, n)
			if len(rec) != n || n < minComment || n >= minComment+Alignment {
				t.Fatalf("off %d, r %d: comment of %d bytes, record %d", off, r, n, len(rec))
			}
			if (off+2*blockSize+int64(r)+int64(n))%Alignment != 0 {
				t.Fatalf("off %d, r %d: data not aligned", off, r)
			}
			checkRecord(t, rec)
		}
	}
}

func TestAppendRecord(t *testing.T) {
	for n := 0; n < 11000; n++ {
		checkRecord(t, appendRecord(nil, "path", strings.Repeat("a", n)))
	}
}

// checkRecord checks that a pax record's length prefix is its length.
func checkRecord(t *testing.T, rec []byte) {
	t.Helper()
	sp := bytes.IndexByte(rec, ' ')
	n, err := strconv.Atoi(string(rec[:sp]))
	if err != nil || n != len(rec) || rec[len(rec)-1] != '\n' || bytes.IndexByte(rec, '=') < 0 {
		t.Fatalf("bad record of %d bytes: %.40q", len(rec), rec)
	}
}

// TestHugeMember checks the header of a member too large for ustar's size
// field without writing its data.
func TestHugeMember(t *testing.T) {
	for _, size := range []int64{maxOctal, maxOctal + 1, 10 << 30} {
		var buf bytes.Buffer
		e := newEncoder(&buf)
		e.out.off = 3 * blockSize
		m := Member{Name: "huge", Type: tar.TypeReg, Mode: 0o644, Size: size, MTime: testTime.Unix()}
		if err := e.writeHeader(&m); err != nil {
			t.Fatal(err)
		}
		if err := e.out.bw.Flush(); err != nil {
			t.Fatal(err)
		}
		hdr, err := tar.NewReader(&buf).Next()
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Size != size || hdr.Name != "huge" || (e.out.off)%Alignment != 0 {
			t.Errorf("size %d: read %q size %d, data at %d", size, hdr.Name, hdr.Size, e.out.off)
		}
	}
}

func TestSplitUSTAR(t *testing.T) {
	tests := []struct {
		name, prefix, rest string
		ok                 bool
	}{
		{"short", "", "short", true},
		{strings.Repeat("a", 100), "", strings.Repeat("a", 100), true},
		{strings.Repeat("a", 101), "", "", false},
		{"d/" + strings.Repeat("a", 100), "d", strings.Repeat("a", 100), true},
		{"d/" + strings.Repeat("a", 101), "", "", false},
		{strings.Repeat("p", 155) + "/x", strings.Repeat("p", 155), "x", true},
		{strings.Repeat("p", 156) + "/x", "", "", false},
		{strings.Repeat("p", 120) + "/", "", "", false},
		{"/" + strings.Repeat("a", 100), "", "", false},
	}
	for _, tt := range tests {
		prefix, rest, ok := splitUSTAR(tt.name)
		if prefix != tt.prefix || rest != tt.rest || ok != tt.ok {
			t.Errorf("splitUSTAR(%.20q...) = %.20q, %.20q, %v; want %.20q, %.20q, %v", tt.name, prefix, rest, ok, tt.prefix, tt.rest, tt.ok)
		}
	}
}

// TestAlignHashAside converts members on both sides of the sizes from which data bypass the
// stream buffer in chunks ending on copyBufSize boundaries, and are hashed on a second
// goroutine, and checks their digests and data.
func TestAlignHashAside(t *testing.T) {
	roundTrip(t, makeTar(t, tar.FormatPAX, file("a", hashAsideMin-1), file("b", hashAsideMin),
		file("c", 3*copyBufSize+5), file("d", 2*hashAsideMin+copyBufSize),
		file("e", copyBufSize-1), file("f", copyBufSize), file("g", hashAhead*copyBufSize+hashAsideMin+1)))
}

// offsetWriter records where each write starts and how long it is.
type offsetWriter struct {
	off    int64
	writes [][2]int64
}

func (w *offsetWriter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, [2]int64{w.off, int64(len(p))})
	w.off += int64(len(p))
	return len(p), nil
}

// TestAlignWritesOnBoundaries checks that the data of large members reach the file in writes
// that start or end on copyBufSize boundaries, the ones the page cache takes cheapest.
func TestAlignWritesOnBoundaries(t *testing.T) {
	in := makeTar(t, tar.FormatPAX, file("a", 5*copyBufSize+77), file("b", hashAsideMin+3*copyBufSize+1),
		file("small", 100), file("c", 2*copyBufSize))
	var w offsetWriter
	if _, err := Align(&w, bytes.NewReader(in), Limits{}); err != nil {
		t.Fatal(err)
	}
	big := 0
	for _, wr := range w.writes {
		start, end := wr[0], wr[0]+wr[1]
		if wr[1] <= 2*Alignment { // headers, padding, the small member's data
			continue
		}
		big++
		if start%copyBufSize != 0 && end%copyBufSize != 0 {
			t.Errorf("write of %d bytes at %d neither starts nor ends on a %d-byte boundary", wr[1], start, copyBufSize)
		}
	}
	if want := (5 + 8 + 3 + 2) - 1; big < want {
		t.Errorf("%d data writes, want at least %d", big, want)
	}
}

// ringLender is a Lender that writes to buf through a ring of buffers, lending a buffer
// again as soon as Hold allows, as a writer that reuses its buffers may.
type ringLender struct {
	bytes.Buffer
	ring  [][]byte
	i, n  int // the buffer being filled, and its bytes
	lends int
}

func newRingLender(bufs, size int) *ringLender {
	l := &ringLender{}
	for range bufs {
		l.ring = append(l.ring, make([]byte, size))
	}
	return l
}

func (l *ringLender) Lend(n int) []byte {
	l.lends++
	return l.ring[l.i][l.n:min(len(l.ring[l.i]), l.n+n)]
}

func (l *ringLender) Fill(k int) error {
	l.Buffer.Write(l.ring[l.i][l.n : l.n+k])
	if l.n += k; l.n == len(l.ring[l.i]) {
		l.i, l.n = (l.i+1)%len(l.ring), 0
	}
	return nil
}

func (l *ringLender) Hold() int { return (len(l.ring) - 1) * len(l.ring[0]) }

// TestAlignLender converts members of every copy path into a Lender that lends its
// buffers again as soon as it may: the output and the digests are those of a plain
// writer's. A Lender that holds its bytes too briefly for the hasher is not lent from.
// (That the hasher reads no byte lent again is by Hold: the race detector does not see
// sha256's assembly read.)
func TestAlignLender(t *testing.T) {
	in := makeTar(t, tar.FormatPAX, file("small", 1000), file("mid", 300<<10+7), file("big", 3<<20+5),
		file("d/big2", 2<<20), file("tail", 100))
	var plain bytes.Buffer
	want, err := Align(&plain, bytes.NewReader(in), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for bufs, lends := range map[int]bool{hashAhead + 1: true, hashAhead: false} { // Hold just enough, or not
		l := newRingLender(bufs, copyBufSize)
		got, err := Align(l, bytes.NewReader(in), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if (l.lends > 0) != lends {
			t.Errorf("Lender of %d buffers: lent from %d times; want lending %v", bufs, l.lends, lends)
		}
		if !bytes.Equal(l.Bytes(), plain.Bytes()) {
			t.Errorf("output through a Lender of %d buffers differs from the plain one", bufs)
		}
		if !slices.EqualFunc(got.Members, want.Members, func(a, b Member) bool { return a.Name == b.Name && a.SHA256 == b.SHA256 && a.Offset == b.Offset }) {
			t.Errorf("members through a Lender of %d buffers:\n%+v\nwant\n%+v", bufs, got.Members, want.Members)
		}
	}
}

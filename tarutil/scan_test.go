package tarutil

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func aligned(tb testing.TB, in []byte) []byte {
	tb.Helper()
	var out bytes.Buffer
	if _, err := Align(&out, bytes.NewReader(in), Limits{}); err != nil {
		tb.Fatal(err)
	}
	return out.Bytes()
}

func TestScanNotAligned(t *testing.T) {
	in := makeTar(t, tar.FormatPAX, file("small", 4095), file("big", 4096))
	_, err := Scan(bytes.NewReader(in))
	wantRefused(t, err, "big", ErrNotAligned)
}

func TestScanEnd(t *testing.T) {
	out := aligned(t, makeTar(t, tar.FormatPAX, file("a", 5000), file("b", 10)))
	tests := []struct {
		name  string
		b     []byte
		want  error
		where streamError // its place and member
	}{
		{"one-zero-block", out[:len(out)-blockSize], ErrNoEnd, streamError{at: atEnd, member: "b"}},
		{"no-zero-blocks", out[:len(out)-2*blockSize], ErrNoEnd, streamError{at: atEnd, member: "b"}},
		{"extra-zero-block", append(bytes.Clone(out), zeros[:blockSize]...), ErrTrailing, streamError{at: atEnd, member: "b"}},
		{"trailing-byte", append(bytes.Clone(out), 'x'), ErrTrailing, streamError{at: atEnd, member: "b"}},
		{"truncated-end", out[:len(out)-2*blockSize+blockSize/2], ErrTruncated, streamError{at: atHeader, member: "b"}},
		{"truncated-padding", out[:len(out)-2*blockSize-blockSize/2], ErrNoEnd, streamError{at: atEnd, member: "b"}},
		{"empty-file", nil, ErrNoEnd, streamError{at: atEnd}},
	}
	for _, tt := range tests {
		_, err := Scan(bytes.NewReader(tt.b))
		if !errors.Is(err, tt.want) || !isAt(err, tt.where) {
			t.Errorf("%s: error %v, want %v at %+v", tt.name, err, tt.want, tt.where)
		}
	}
}

// TestScanTruncated cuts an aligned tar at every block and in between: Scan
// must refuse every prefix.
func TestScanTruncated(t *testing.T) {
	out := aligned(t, makeTar(t, tar.FormatPAX, file("a", 5000), dir("d/"), file("d/"+longName, 9000), symlink("l", "a")))
	for cut := 0; cut < len(out); cut += blockSize / 4 {
		if _, err := Scan(bytes.NewReader(out[:cut])); err == nil {
			t.Errorf("Scan of the first %d of %d bytes succeeded", cut, len(out))
		}
	}
}

// readCounter counts the bytes read from a ReadSeeker.
type readCounter struct {
	io.ReadSeeker
	n int64
}

func (r *readCounter) Read(p []byte) (int, error) {
	n, err := r.ReadSeeker.Read(p)
	r.n += int64(n)
	return n, err
}

// TestScanSeeks checks that Scan skips member data instead of reading it.
func TestScanSeeks(t *testing.T) {
	var es []entry
	for i := range 16 {
		es = append(es, file(strings.Repeat("f", i+1), 1<<20))
	}
	out := aligned(t, makeTar(t, tar.FormatPAX, es...))
	rc := &readCounter{ReadSeeker: bytes.NewReader(out)}
	ms, err := Scan(rc)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != len(es) || rc.n > int64(len(es)+1)*scanBufSize {
		t.Errorf("Scan found %d members and read %d of %d bytes", len(ms), rc.n, len(out))
	}
}

// TestScanFromStart checks that offsets count from the start of the file
// wherever r was.
func TestScanFromStart(t *testing.T) {
	out := aligned(t, makeTar(t, tar.FormatPAX, file("a", 5000)))
	r := bytes.NewReader(out)
	if _, err := r.Seek(1000, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	ms, err := Scan(r)
	if err != nil || len(ms) != 1 || ms[0].Offset != Alignment {
		t.Errorf("Scan = %+v, %v; want one member at %d", ms, err, Alignment)
	}
}

func TestSeekReader(t *testing.T) {
	data := content("seek", 3*scanBufSize)
	s := &seekReader{rs: bytes.NewReader(data), buf: make([]byte, 100)}
	for _, skip := range []int64{0, 10, 90, 5, 1000, 0, scanBufSize} {
		if pos, err := s.Seek(skip, io.SeekCurrent); err != nil || pos != s.pos {
			t.Fatalf("Seek(%d) = %d, %v", skip, pos, err)
		}
		b := make([]byte, 37)
		if _, err := io.ReadFull(s, b); err != nil {
			t.Fatal(err)
		}
		want := data[s.pos-37 : s.pos]
		if !bytes.Equal(b, want) {
			t.Fatalf("after Seek(%d): read %x, want %x", skip, b, want)
		}
	}
	s = &seekReader{rs: bytes.NewReader(data), buf: make([]byte, 100)}
	if n, err := io.ReadFull(s, make([]byte, 1000)); n != 1000 || err != nil || s.pos != 1000 {
		t.Errorf("direct read: %d, %v at %d", n, err, s.pos)
	}
	if _, err := s.Seek(-1, io.SeekCurrent); err == nil {
		t.Error("Seek backwards succeeded")
	}
	if _, err := s.Seek(0, io.SeekStart); err == nil {
		t.Error("Seek from start succeeded")
	}
}

// isAt reports whether err is a *streamError at want's place and member.
func isAt(err error, want streamError) bool {
	se := (*streamError)(nil)
	return errors.As(err, &se) && se.at == want.at && se.member == want.member
}

// TestDataFiles: only regular members with data count, not empty files, directories or links.
func TestDataFiles(t *testing.T) {
	ms := []Member{
		{Type: tar.TypeReg, Size: 1},
		{Type: tar.TypeReg, Size: 0},
		{Type: tar.TypeDir},
		{Type: tar.TypeSymlink, Size: 5},
		{Type: tar.TypeLink, Size: 5},
		{Type: tar.TypeReg, Size: 1 << 20},
	}
	if got := DataFiles(ms); got != 2 {
		t.Errorf("DataFiles = %d, want 2", got)
	}
}

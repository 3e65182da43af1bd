package tarutil

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"errors"
	"reflect"
	"testing"
)

// indexed aligns a small archive and returns the aligned bytes and its members, with
// digests, as Scan and the data give them.
func indexed(t testing.TB) ([]byte, []Member) {
	t.Helper()
	in := makeTar(t, tar.FormatPAX, dir("d/"), file("d/big", 10000), file("d/small", 10),
		hardlink("d/same", "d/big"), symlink("d/link", "big"), file("top", 0))
	var out bytes.Buffer
	if _, err := Align(&out, bytes.NewReader(in), Limits{}); err != nil {
		t.Fatal(err)
	}
	b := out.Bytes()
	members, err := Scan(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	for i := range members {
		if m := &members[i]; m.Type == tar.TypeReg {
			m.SHA256 = sha256.Sum256(b[m.Offset : m.Offset+m.Size])
		}
	}
	return b, members
}

func TestIndexRoundTrip(t *testing.T) {
	b, members := indexed(t)
	var idx bytes.Buffer
	if err := writeIndex(&idx, int64(len(b)), members); err != nil {
		t.Fatal(err)
	}
	got, err := readIndex(idx.Bytes(), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, members) {
		t.Errorf("ReadIndex = %+v\nwant %+v", got, members)
	}
}

// readIndex is ReadIndex of an index in memory.
func readIndex(data []byte, tarSize int64) ([]Member, error) {
	return ReadIndex(bytes.NewReader(data), int64(len(data)), tarSize)
}

// TestAlignIndex checks that AlignEdit, given an index, writes the tar Align writes and, as the members
// pass, the index of the members Align lists: a directory written again, with another
// mode, takes its last mode in both.
func TestAlignIndex(t *testing.T) {
	d := dir("d/")
	d.hdr.Mode = 0o700
	in := makeTar(t, tar.FormatPAX, file("d/big", 10000), symlink("d/link", "big"), d, file("top", 3))
	var tar1, tar2, idx bytes.Buffer
	st1, err := Align(&tar1, bytes.NewReader(in), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	st2, err := AlignEdit(&tar2, &idx, bytes.NewReader(in), Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(tar1.Bytes(), tar2.Bytes()) || st2.Members != nil || st2.Files != st1.Files || st2.Bytes != st1.Bytes {
		t.Fatalf("AlignEdit wrote another tar (%d bytes, Align %d) or stats %+v", tar2.Len(), tar1.Len(), st2)
	}
	got, err := readIndex(idx.Bytes(), int64(tar2.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, st1.Members) {
		t.Errorf("index of AlignEdit = %+v\nAlign's members %+v", got, st1.Members)
	}
	if got[0].Name != "d" || got[0].Mode != 0o700 {
		t.Errorf("first member %+v, want d with mode 0700", got[0])
	}
}

func TestIndexRefuses(t *testing.T) {
	b, members := indexed(t)
	size := int64(len(b))
	encode := func(ms []Member) []byte {
		var idx bytes.Buffer
		if err := writeIndex(&idx, size, ms); err != nil {
			t.Fatal(err)
		}
		return idx.Bytes()
	}
	good := encode(members)
	edit := func(i int, f func(m *Member)) []byte {
		ms := append([]Member(nil), members...)
		f(&ms[i])
		return encode(ms)
	}
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 1
	tests := []struct {
		name   string
		data   []byte
		size   int64
		target error
	}{
		{"flipped byte", flipped, size, ErrIndex},
		{"truncated", good[:len(good)-5], size, ErrIndex},
		{"other tar size", good, size + 512, ErrIndex},
		{"empty", nil, size, ErrIndex},
		{"escaping name", edit(1, func(m *Member) { m.Name = "../big" }), size, ErrUnsafePath},
		{"data past the end", edit(1, func(m *Member) { m.Offset = size - 100 }), size, ErrIndex},
		{"unaligned data", edit(1, func(m *Member) { m.Offset += 512 }), size, ErrNotAligned},
		{"data on a directory", edit(0, func(m *Member) { m.Size = 5 }), size, ErrIndex},
		{"symlink escape", edit(4, func(m *Member) { m.Linkname = "../../x" }), size, ErrSymlinkEscape},
		{"hardlink to a later member", edit(3, func(m *Member) { m.Linkname = "top" }), size, ErrHardlink},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := readIndex(tt.data, tt.size); !errors.Is(err, tt.target) {
				t.Errorf("ReadIndex: %v, want %v", err, tt.target)
			}
		})
	}
}

func FuzzReadIndex(f *testing.F) {
	b, members := indexed(f)
	var idx bytes.Buffer
	if err := writeIndex(&idx, int64(len(b)), members); err != nil {
		f.Fatal(err)
	}
	f.Add(idx.Bytes(), int64(len(b)))
	f.Fuzz(func(t *testing.T, data []byte, size int64) {
		ms, err := readIndex(data, size)
		if err != nil {
			return
		}
		var again bytes.Buffer
		if err := writeIndex(&again, size, ms); err != nil {
			t.Fatal(err)
		}
		// A directory listed again is folded into its first record.
		if ms2, err := readIndex(again.Bytes(), size); err != nil || !reflect.DeepEqual(ms2, ms) {
			t.Errorf("accepted index re-encodes to one that reads back as %v, %v", ms2, err)
		}
	})
}

func BenchmarkReadIndex(b *testing.B) {
	ms := make([]Member, 0, 30000)
	for i := range 30000 {
		ms = append(ms, Member{Name: "dir/file" + string(rune('a'+i%26)) + itoa(i), Type: tar.TypeReg, Mode: 0o644, Size: 1024, Offset: int64(1024 + i*2048)})
	}
	ms = append([]Member{{Name: "dir", Type: tar.TypeDir, Mode: 0o755}}, ms...)
	var idx bytes.Buffer
	size := int64(1024 + 30000*2048 + 1024)
	if err := writeIndex(&idx, size, ms); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := readIndex(idx.Bytes(), size); err != nil {
			b.Fatal(err)
		}
	}
}

func itoa(i int) string {
	var buf [20]byte
	n := len(buf)
	for {
		n--
		buf[n] = byte('0' + i%10)
		if i /= 10; i == 0 {
			return string(buf[n:])
		}
	}
}

// BenchmarkValidate applies the policy to the list of an index of 30,000 files, as a
// Stage does before creating anything.
func BenchmarkValidate(b *testing.B) {
	ms := make([]Member, 0, 30100)
	for d := range 100 {
		ms = append(ms, Member{Name: "dir/d" + itoa(d), Type: tar.TypeDir, Mode: 0o755})
	}
	for i := range 30000 {
		ms = append(ms, Member{Name: "dir/d" + itoa(i%100) + "/file" + itoa(i), Type: tar.TypeReg, Mode: 0o644, Size: 1024, Offset: int64(1024 + i*2048)})
	}
	ms = append([]Member{{Name: "dir", Type: tar.TypeDir, Mode: 0o755}}, ms...)
	b.ReportAllocs()
	for b.Loop() {
		if err := Validate(ms); err != nil {
			b.Fatal(err)
		}
	}
}

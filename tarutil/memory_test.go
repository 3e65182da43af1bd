package tarutil

import (
	"archive/tar"
	"bytes"
	"strconv"
	"testing"
	"unsafe"
)

// An installer holds a Member for each of up to maxMembers entries: at 2^20, each 8 bytes
// is 8 MiB of its peak (bench/names.sh).
func TestMemberSize(t *testing.T) {
	if got := unsafe.Sizeof(Member{}); got > 96 {
		t.Errorf("a Member takes %d bytes, more than 96", got)
	}
}

// allocatedBy returns the bytes f allocates.
func allocatedBy(f func()) uint64 {
	before, _ := allocated()
	f()
	after, _ := allocated()
	return after - before
}

// manyMembers returns n members, regular files in 100 directories, as ReadIndex gives
// them, and the bytes of their names.
func manyMembers(n int) ([]Member, int) {
	ms := make([]Member, 0, n)
	names := 0
	for d := range 100 {
		ms = append(ms, Member{Name: "d" + strconv.Itoa(d), Type: tar.TypeDir, Mode: 0o755})
	}
	for i := range n - len(ms) {
		ms = append(ms, Member{Name: "d" + strconv.Itoa(i%100) + "/file-" + strconv.Itoa(i), Type: tar.TypeReg, Mode: 0o644,
			Size: 1, Offset: blockSize * int64(2*i+1)})
	}
	for i := range ms {
		names += len(ms[i].Name)
	}
	return ms, names
}

// TestMemoryPerMember bounds what reading, validating and spot-checking a list of members
// allocate besides the list and its names: with 2^20 members each byte is a MiB of an
// install's peak. At 50,000 members ReadIndex allocated 72 bytes a member besides its Member
// and name, Validate 34 and SpotCheck's sample 39, before its table of paths (30, 27 and 4).
func TestMemoryPerMember(t *testing.T) {
	const n = 50000
	ms, names := manyMembers(n)
	tarSize := ms[len(ms)-1].Offset + 3*blockSize
	var idx bytes.Buffer
	if err := writeIndex(&idx, tarSize, ms); err != nil {
		t.Fatal(err)
	}
	var err error
	// Each name is a string of its own: Go rounds its allocation up to a size class.
	list := uint64(n)*uint64(unsafe.Sizeof(Member{})) + uint64(names)*5/4
	for _, tc := range []struct {
		name      string
		f         func()
		perMember uint64 // bytes a member, besides list
		list      bool   // the members and their names are allocated
	}{
		{"ReadIndex", func() { _, err = readIndex(idx.Bytes(), tarSize) }, 40, true},
		{"Validate", func() { err = Validate(ms) }, 32, false},
		{"SpotCheck", func() { err = SpotCheck(zeroTar(tarSize), tarSize, ms, 0) }, 8, false},
	} {
		got := allocatedBy(tc.f)
		if err != nil && tc.name != "SpotCheck" { // a tar of zeros: damaged, once its sample is made
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.list {
			got -= min(got, list)
		}
		t.Logf("%s: %d bytes a member besides the list", tc.name, got/n)
		if limit := tc.perMember*n + 64<<10; got > limit {
			t.Errorf("%s of %d members allocated %d bytes besides the list, more than %d", tc.name, n, got, limit)
		}
	}
}

// zeroTar is a ReaderAt of size zero bytes.
type zeroTar int64

func (z zeroTar) ReadAt(p []byte, off int64) (int, error) {
	clear(p)
	return len(p), nil
}

func TestPathSet(t *testing.T) {
	var s pathSet
	const n = 20000
	for i := range n {
		typ := byte(tar.TypeReg)
		if i%7 == 0 {
			typ = tar.TypeDir
		}
		s.add("p/"+strconv.Itoa(i), typ)
	}
	if s.len() != n {
		t.Fatalf("len %d, want %d", s.len(), n)
	}
	for i := range n {
		num, typ, ok := s.find("p/" + strconv.Itoa(i))
		if want := byte(tar.TypeReg); i%7 == 0 && typ != tar.TypeDir || i%7 != 0 && typ != want || !ok || num != i {
			t.Fatalf("find p/%d = %d, %q, %v", i, num, typ, ok)
		}
	}
	for _, name := range []string{"p/" + strconv.Itoa(n), "p", "", "p/-1"} {
		if _, _, ok := s.find(name); ok {
			t.Errorf("find %q: found, never added", name)
		}
	}
}

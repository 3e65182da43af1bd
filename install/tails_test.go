package install

import (
	"archive/tar"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"pkg/internal/testfs"
	"pkg/tarutil"
)

// writeTails writes, beside the aligned tar at tarPath, the tail files fetch.Cache keeps
// (tarutil.Member.Tail) of its members but those named in skip, and one a byte too long
// for each named in long.
func writeTails(t *testing.T, tarPath string, members []tarutil.Member, skip, long []string) string {
	t.Helper()
	data, err := os.ReadFile(tarPath)
	if err != nil {
		t.Fatal(err)
	}
	dir := strings.TrimSuffix(tarPath, ".tar") + ".tails"
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		off, n := m.Tail()
		if n == 0 || contains(skip, m.Name) {
			continue
		}
		b := data[off : off+n]
		if contains(long, m.Name) {
			b = append(b[:n:n], 'x')
		}
		if err := os.WriteFile(filepath.Join(dir, strconv.FormatInt(off, 10)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// TestTailClones: on XFS, where the cache keeps tails, a file under a block and the last
// partial block of a larger one are cloned from their tail files (FIEMAP: on the tail
// file's very blocks), the whole blocks from the tar; a file whose tail file is missing or of the wrong size
// gets the tar's bytes instead. The installed files hold the archive's data and verify
// clean, by extents and by hashing.
func TestTailClones(t *testing.T) {
	base := testfs.Mount(t, "xfs")
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	big := randomData(31, 3*tarutil.Alignment+123)
	es := []entry{
		{name: "opt/", typ: tar.TypeDir, mode: 0o755},
		{name: "opt/small", typ: tar.TypeReg, mode: 0o644, data: randomData(32, 3000)},
		{name: "opt/big", typ: tar.TypeReg, mode: 0o644, data: big},
		{name: "opt/blocks", typ: tar.TypeReg, mode: 0o644, data: randomData(33, 2*tarutil.Alignment)},
		{name: "opt/missing", typ: tar.TypeReg, mode: 0o644, data: randomData(34, 3000)},
		{name: "opt/long", typ: tar.TypeReg, mode: 0o644, data: randomData(35, 3000)},
	}
	tarPath := alignedTar(t, base, es)
	members := digestsOf(t, tarPath)
	tails := writeTails(t, tarPath, members, []string{"opt/missing"}, []string{"opt/long"})
	res := applyStaged(t, r, stageMembers(t, r, tarPath, prefixPkg("a", "1"), members))
	if want := int64(2 * 3000); res[0].Copied != want {
		t.Errorf("copied %d bytes, want %d (the files whose tail files are wrong)", res[0].Copied, want)
	}
	for _, e := range es {
		if e.typ != tar.TypeReg {
			continue
		}
		got, err := os.ReadFile(r.path("pkgs/a/" + e.name))
		if err != nil || string(got) != e.data {
			t.Errorf("%s: %d bytes (%v), want the archive's %d", e.name, len(got), err, len(e.data))
		}
	}
	onTailBlock(t, r, members, tails, "opt/small", 0)
	onTailBlock(t, r, members, tails, "opt/big", 3*tarutil.Alignment)
	shared, _, err := testfs.SharedBytes(r.path("pkgs/a/opt/big"))
	if err != nil || shared < 3*tarutil.Alignment {
		t.Errorf("opt/big: %d bytes shared (%v), want all %d", shared, err, len(big))
	}
	for _, c := range []Cache{testCache(tarPath), nil} {
		problems, err := r.VerifyWith(c)
		if err != nil || len(problems) != 0 {
			t.Errorf("verify: %v, %v", problems, err)
		}
	}
}

// onTailBlock checks that the installed file name of package a has its tail, which begins
// at at in the file, on the block of its tail file in tails (FIEMAP).
func onTailBlock(t *testing.T, r *Root, members []tarutil.Member, tails, name string, at int64) {
	t.Helper()
	off, n := members[lookupMember(t, members, name)].Tail()
	file, err := testfs.Extents(r.path("pkgs/a/"+name), at, n)
	if err != nil {
		t.Fatal(err)
	}
	tail, err := testfs.Extents(filepath.Join(tails, strconv.FormatInt(off, 10)), 0, n)
	if err != nil {
		t.Fatal(err)
	}
	if p := testfs.PhysicalAt(file, at); p < 0 || p != testfs.PhysicalAt(tail, 0) {
		t.Errorf("%s: its tail at %d is not on its tail file's block (%+v, %+v)", name, at, file, tail)
	}
}

// lookupMember returns the index of the member name.
func lookupMember(t *testing.T, members []tarutil.Member, name string) int {
	t.Helper()
	for i := range members {
		if members[i].Name == name {
			return i
		}
	}
	t.Fatalf("no member %s", name)
	return -1
}

// TestTailClonesBtrfs: on btrfs, where the cache keeps the tails over tarutil.MaxInline and
// those of files under a block, each is cloned whole from its tail file, writing no data:
// a file under a block too large for an inline extent and a larger file's tail of more than
// MaxInline bytes on the tail file's block (FIEMAP), a file small enough copied as its inline
// extent; a larger file's shorter tail, though its tail file is there, and one whose tail
// file is missing, come from the tar, their last block cloned and truncated (shared).
func TestTailClonesBtrfs(t *testing.T) {
	base := testfs.Mount(t, "btrfs")
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	es := []entry{
		{name: "opt/", typ: tar.TypeDir, mode: 0o755},
		{name: "opt/small", typ: tar.TypeReg, mode: 0o644, data: randomData(41, 3000)},
		{name: "opt/inline", typ: tar.TypeReg, mode: 0o644, data: randomData(42, 100)},
		{name: "opt/big", typ: tar.TypeReg, mode: 0o644, data: randomData(43, 3*tarutil.Alignment+123)},
		{name: "opt/bigtail", typ: tar.TypeReg, mode: 0o644, data: randomData(44, 2*tarutil.Alignment+tarutil.MaxInline+1)},
		{name: "opt/missing", typ: tar.TypeReg, mode: 0o644, data: randomData(45, tarutil.Alignment+3000)},
	}
	tarPath := alignedTar(t, base, es)
	members := digestsOf(t, tarPath)
	tails := writeTails(t, tarPath, members, []string{"opt/missing"}, nil)
	res := applyStaged(t, r, stageMembers(t, r, tarPath, prefixPkg("a", "1"), members))
	if res[0].Copied != 0 {
		t.Errorf("copied %d bytes, want none", res[0].Copied)
	}
	for _, e := range es {
		if got, err := os.ReadFile(r.path("pkgs/a/" + e.name)); e.typ == tar.TypeReg && (err != nil || string(got) != e.data) {
			t.Errorf("%s: %d bytes (%v), want the archive's %d", e.name, len(got), err, len(e.data))
		}
	}
	onTailBlock(t, r, members, tails, "opt/small", 0)
	onTailBlock(t, r, members, tails, "opt/bigtail", 2*tarutil.Alignment)
	// A clone of its short tail file at an offset past 0 would copy it (not shared).
	if shared, _, err := testfs.SharedBytes(r.path("pkgs/a/opt/big")); err != nil || shared < 4*tarutil.Alignment {
		t.Errorf("opt/big: %d bytes shared (%v), want its 4 blocks, the last cloned from the tar", shared, err)
	}
	problems, err := r.VerifyWith(testCache(tarPath))
	if err != nil || len(problems) != 0 {
		t.Errorf("verify: %v, %v", problems, err)
	}
}

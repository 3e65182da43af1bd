package tarutil

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
	"time"
)

var testTime = time.Unix(1700000000, 0)

// entry is one member of a test archive.
type entry struct {
	hdr  tar.Header
	data []byte
}

func file(name string, size int) entry {
	return entry{tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(size), ModTime: testTime}, content(name, size)}
}

func fileMode(name string, size int, mode int64) entry {
	e := file(name, size)
	e.hdr.Mode = mode
	return e
}

func dir(name string) entry {
	return entry{hdr: tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755, ModTime: testTime}}
}

func symlink(name, target string) entry {
	return entry{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777, ModTime: testTime}}
}

func hardlink(name, target string) entry {
	return entry{hdr: tar.Header{Typeflag: tar.TypeLink, Name: name, Linkname: target, Mode: 0o644, ModTime: testTime}}
}

func special(name string, typ byte) entry {
	return entry{hdr: tar.Header{Typeflag: typ, Name: name, Mode: 0o644, ModTime: testTime}}
}

func globalHeader() entry {
	return entry{hdr: tar.Header{Typeflag: tar.TypeXGlobalHeader, PAXRecords: map[string]string{"comment": "made by a test"}}}
}

// content is deterministic data that differs by name and by offset.
func content(name string, size int) []byte {
	seed := byte(len(name))
	for _, c := range []byte(name) {
		seed = seed*31 + c
	}
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(i) ^ byte(i>>8)*7 ^ byte(i>>16)*13 ^ seed
	}
	return b
}

// makeTar writes entries with archive/tar.Writer, in format unless it is
// FormatUnknown.
func makeTar(tb testing.TB, format tar.Format, entries ...entry) []byte {
	tb.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := e.hdr
		if hdr.Typeflag != tar.TypeXGlobalHeader {
			hdr.Format = format
		}
		if err := tw.WriteHeader(&hdr); err != nil {
			tb.Fatalf("write header %q: %v", hdr.Name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			tb.Fatalf("write data %q: %v", hdr.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// patchBlock edits the header block at offset off of a tar and fixes its checksum.
func patchBlock(b []byte, off int, edit func(blk []byte)) {
	blk := b[off : off+blockSize]
	edit(blk)
	putChecksum(blk)
}

// member is a tar entry as archive/tar reads it, with its data's digest.
type member struct {
	hdr *tar.Header
	sum [32]byte
}

func readTar(tb testing.TB, b []byte) []member {
	tb.Helper()
	var ms []member
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return ms
		}
		if err != nil {
			tb.Fatalf("read tar: %v", err)
		}
		h := sha256.New()
		if _, err := io.Copy(h, tr); err != nil {
			tb.Fatalf("read %q: %v", hdr.Name, err)
		}
		ms = append(ms, member{hdr, [32]byte(h.Sum(nil))})
	}
}

// want is the member Align should write for an input entry.
type want struct {
	name, link string
	typ        byte
	mode       fs.FileMode
	size       int64
	mtime      int64
	sum        [32]byte
}

// expect returns what Align should write for the input, in order, without
// synthesized directories: cleaned names, no root, first of repeated
// directories only.
func expect(in []member) []want {
	var ws []want
	seen := map[string]bool{}
	dirs := map[string]int{} // index in ws of each directory the input lists
	for _, m := range in {
		name := path.Clean(m.hdr.Name)
		if m.hdr.Typeflag == tar.TypeXGlobalHeader || name == "." {
			continue
		}
		w := want{name: name, typ: m.hdr.Typeflag, mode: fs.FileMode(m.hdr.Mode & 0o777), mtime: m.hdr.ModTime.Unix(), sum: m.sum}
		if seen[name] {
			// A directory listed again, or after a member under it: its last entry's mode
			// and time are what tar extracts.
			if i, ok := dirs[name]; ok {
				ws[i].mode, ws[i].mtime = w.mode, w.mtime
			} else if w.typ == tar.TypeDir {
				dirs[name] = len(ws)
				ws = append(ws, w)
			}
			continue
		}
		for d := name; d != "."; d = path.Dir(d) {
			seen[d] = true
		}
		switch w.typ {
		case tar.TypeReg:
			w.size = m.hdr.Size
		case tar.TypeSymlink:
			w.link = m.hdr.Linkname
		case tar.TypeLink:
			w.link = path.Clean(m.hdr.Linkname)
		case tar.TypeDir:
			dirs[name] = len(ws)
		}
		ws = append(ws, w)
	}
	return ws
}

// effective returns the members as tar extracts them: a directory listed again keeps its
// first place and takes the mode and time of its last entry.
func effective(ms []member) []want {
	var ws []want
	dirs := map[string]int{}
	for _, m := range ms {
		w := gotWant(m)
		if i, ok := dirs[w.name]; ok && w.typ == tar.TypeDir {
			ws[i].mode, ws[i].mtime = w.mode, w.mtime
			continue
		}
		if w.typ == tar.TypeDir {
			dirs[w.name] = len(ws)
		}
		ws = append(ws, w)
	}
	return ws
}

func gotWant(m member) want {
	w := want{name: strings.TrimSuffix(m.hdr.Name, "/"), typ: m.hdr.Typeflag, mode: fs.FileMode(m.hdr.Mode), size: m.hdr.Size,
		mtime: m.hdr.ModTime.Unix(), link: m.hdr.Linkname, sum: m.sum}
	if w.typ != tar.TypeReg {
		w.size = 0
	}
	return w
}

// roundTrip aligns in, checks the output against the input member by member
// with archive/tar, and checks Scan's view of it. It returns the output.
func roundTrip(tb testing.TB, in []byte) []byte {
	tb.Helper()
	var out bytes.Buffer
	stats, err := Align(&out, bytes.NewReader(in), Limits{})
	if err != nil {
		tb.Fatalf("Align: %v", err)
	}
	b := out.Bytes()
	ws := expect(readTar(tb, in))
	got := readTar(tb, b)
	checkMembers(tb, ws, got)
	checkStats(tb, stats, ws)
	checkScan(tb, b, got)
	checkMembersScan(tb, stats, b)
	if len(b)%blockSize != 0 || !bytes.Equal(b[len(b)-2*blockSize:], zeros[:]) {
		tb.Errorf("output of %d bytes does not end with two zero blocks", len(b))
	}
	return b
}

// checkMembers compares the output, as extracted, with the input's wants: the same
// members, files in the same order; any other output member must be a synthesized
// directory.
func checkMembers(tb testing.TB, ws []want, got []member) {
	tb.Helper()
	for _, g := range got {
		if g.hdr.Uid != 0 || g.hdr.Gid != 0 || g.hdr.Uname != "" || g.hdr.Gname != "" {
			tb.Errorf("member %q: ownership %d/%d %q/%q not dropped", g.hdr.Name, g.hdr.Uid, g.hdr.Gid, g.hdr.Uname, g.hdr.Gname)
		}
	}
	out := map[string]want{}
	var outFiles, inFiles []string
	for _, g := range effective(got) {
		out[g.name] = g
		if g.typ != tar.TypeDir {
			outFiles = append(outFiles, g.name)
		}
	}
	for _, w := range ws {
		if w.typ != tar.TypeDir {
			inFiles = append(inFiles, w.name)
		}
		if g, ok := out[w.name]; !ok {
			tb.Errorf("input member %+v missing from the output", w)
		} else if g != w {
			tb.Errorf("member %q:\n got %+v\nwant %+v", w.name, g, w)
		}
		delete(out, w.name)
	}
	for _, g := range out {
		if g.typ != tar.TypeDir || g.mode != 0o755 {
			tb.Errorf("unexpected member %+v", g)
		}
	}
	if !slices.Equal(outFiles, inFiles) {
		tb.Errorf("files in the output in the order %q, input %q", outFiles, inFiles)
	}
}

func checkStats(tb testing.TB, got Stats, ws []want) {
	tb.Helper()
	var w Stats
	var wantSums, gotSums [][32]byte
	for _, m := range ws {
		if m.typ != tar.TypeDir {
			w.Files++
		}
		if m.typ == tar.TypeReg {
			wantSums = append(wantSums, m.sum)
		}
		w.Bytes += m.size
	}
	for _, m := range got.Members {
		if m.Type == tar.TypeReg {
			gotSums = append(gotSums, m.SHA256)
		}
	}
	if got.Files != w.Files || got.Bytes != w.Bytes || !slices.Equal(gotSums, wantSums) {
		tb.Errorf("Stats = %d files, %d bytes, digests %x; want %d, %d, %x", got.Files, got.Bytes, gotSums, w.Files, w.Bytes, wantSums)
	}
}

// checkMembersScan compares the members Align reported with what Scan finds in its output.
func checkMembersScan(tb testing.TB, st Stats, b []byte) {
	tb.Helper()
	scanned, err := Scan(bytes.NewReader(b))
	if err != nil {
		tb.Fatalf("Scan: %v", err)
	}
	if len(scanned) != len(st.Members) {
		tb.Fatalf("Align reported %d members, Scan found %d", len(st.Members), len(scanned))
	}
	for i, m := range st.Members {
		s := scanned[i]
		if s.Name != m.Name || s.Type != m.Type || s.Mode != m.Mode || s.Size != m.Size || s.Offset != m.Offset || s.Linkname != m.Linkname {
			tb.Errorf("member %d: Align reported %+v, Scan found %+v", i, m, s)
		}
	}
}

// checkScan scans the aligned tar b and compares its members with got, the
// members archive/tar reads, reading data at each Offset.
func checkScan(tb testing.TB, b []byte, got []member) {
	tb.Helper()
	ms, err := Scan(bytes.NewReader(b))
	if err != nil {
		tb.Fatalf("Scan: %v", err)
	}
	eff := effective(got)
	if len(ms) != len(eff) {
		tb.Fatalf("Scan found %d members, archive/tar %d (as extracted)", len(ms), len(eff))
	}
	for i, m := range ms {
		g := eff[i]
		sw := want{name: m.Name, typ: m.Type, mode: m.Mode, size: m.Size, mtime: m.MTime, link: m.Linkname, sum: g.sum}
		if m.Type == tar.TypeReg {
			sw.sum = sha256.Sum256(b[m.Offset : m.Offset+m.Size])
		}
		if sw != g {
			tb.Errorf("Scan member %d:\n got %+v\nwant %+v", i, sw, g)
		}
		if m.Size >= Alignment && m.Offset%Alignment != 0 {
			tb.Errorf("member %q: data at %d, not aligned", m.Name, m.Offset)
		}
	}
}

// wantRefused checks that err is a *MemberError for name wrapping target.
func wantRefused(tb testing.TB, err error, name string, target error) {
	tb.Helper()
	var me *MemberError
	if !errors.As(err, &me) {
		tb.Fatalf("error %v, want a *MemberError", err)
	}
	if me.Name != name || !errors.Is(err, target) {
		tb.Errorf("error %q: member %q, want member %q refused with %q", err, me.Name, name, target)
	}
}

func writeFile(tb testing.TB, name string, data []byte, mode fs.FileMode) {
	tb.Helper()
	if err := os.WriteFile(name, data, mode); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chmod(name, mode); err != nil {
		tb.Fatal(err)
	}
}

// writeIndex writes the index of an aligned tar of tarSize bytes holding members, which
// carry their digests, as AlignEdit writes it.
func writeIndex(w io.Writer, tarSize int64, members []Member) error {
	x := newIndexWriter(w)
	for i := range members {
		x.add(&members[i], false)
	}
	return x.finish(tarSize)
}

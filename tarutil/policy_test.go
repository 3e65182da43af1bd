package tarutil

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// paxHeader returns an entry that becomes a pax extended header with the
// given records once its type flag is patched (see rawPAX): archive/tar
// does not write GNU.sparse records.
func paxHeader(records ...string) entry {
	var recs []byte
	for _, r := range records {
		k, v, _ := strings.Cut(r, "=")
		recs = appendRecord(recs, k, v)
	}
	e := file("PaxHeader", 0)
	e.hdr.Size, e.data = int64(len(recs)), recs
	return e
}

// rawPAX builds an archive of a pax header with records followed by next.
func rawPAX(tb testing.TB, next entry, records ...string) []byte {
	b := makeTar(tb, tar.FormatUSTAR, paxHeader(records...), next)
	patchBlock(b, 0, func(blk []byte) { blk[offType] = tar.TypeXHeader })
	return b
}

// hardlinkWithSize builds an archive of a file f and a hardlink h to it
// whose size field claims data.
func hardlinkWithSize(tb testing.TB) []byte {
	b := makeTar(tb, tar.FormatUSTAR, file("f", 1), hardlink("h", "f"))
	patchBlock(b, 2*blockSize, func(blk []byte) { putOctal(blk[offSize:offSize+12], 5) })
	return b
}

func oldGNUSparse(tb testing.TB) []byte {
	b := makeTar(tb, tar.FormatGNU, file("s", 0))
	patchBlock(b, 0, func(blk []byte) { blk[offType] = tar.TypeGNUSparse })
	return b
}

func withRecords(e entry, kv ...string) entry {
	e.hdr.PAXRecords = map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		e.hdr.PAXRecords[kv[i]] = kv[i+1]
	}
	return e
}

// TestBreakouts checks that each hostile archive is refused, by Align and by
// Scan, naming the offending member and the rule it breaks.
func TestBreakouts(t *testing.T) {
	gnu := func(es ...entry) []byte { return makeTar(t, tar.FormatGNU, es...) }
	pax := func(es ...entry) []byte { return makeTar(t, tar.FormatPAX, es...) }
	tests := []struct {
		name   string
		in     []byte
		member string
		err    error
	}{
		{"absolute", pax(file("ok", 1), file("/etc/passwd", 1)), "/etc/passwd", ErrUnsafePath},
		{"dotdot", pax(file("a/../../x", 1)), "a/../../x", ErrUnsafePath},
		{"dotdot-leading", pax(file("../x", 1)), "../x", ErrUnsafePath},
		{"dotdot-dir", pax(dir("../")), "../", ErrUnsafePath},
		{"dotdot-only", pax(dir("..")), "..", ErrUnsafePath},
		{"dotdot-inside", pax(file("a/../b", 1)), "a/../b", ErrUnsafePath},
		{"dotdot-trailing", pax(dir("a/..")), "a/..", ErrUnsafePath},
		{"root-as-file", pax(file(".", 1)), ".", ErrUnsafePath},
		{"empty-name", gnu(file("", 1)), "", ErrName},
		{"not-utf8", gnu(file("bad\xff", 1)), "bad\xff", ErrName},
		{"control-char", gnu(file("a\x01b", 1)), "a\x01b", ErrName},
		{"newline", gnu(file("a\nb", 1)), "a\nb", ErrName},
		{"del", gnu(file("a\x7fb", 1)), "a\x7fb", ErrName},
		{"duplicate-file", pax(file("a", 1), file("a", 2)), "a", ErrDuplicate},
		{"duplicate-dot-slash", pax(file("a", 1), file("./a", 2)), "./a", ErrDuplicate},
		{"dir-over-file", pax(file("a", 1), dir("a/")), "a/", ErrDuplicate},
		{"file-over-dir", pax(dir("a/"), file("a", 1)), "a", ErrDuplicate},
		{"file-over-synthesized-dir", pax(file("a/b", 1), file("a", 1)), "a", ErrDuplicate},
		{"symlink-over-file", pax(file("a", 1), symlink("a", "b")), "a", ErrDuplicate},
		{"under-symlink", pax(dir("d/"), symlink("l", "d"), file("l/x", 1)), "l/x", ErrParent},
		{"under-symlink-deep", pax(symlink("l", "."), file("l/a/b", 1)), "l/a/b", ErrParent},
		{"under-file", pax(file("f", 1), file("f/x", 1)), "f/x", ErrParent},
		{"under-hardlink", pax(file("f", 1), hardlink("h", "f"), dir("h/d/")), "h/d/", ErrParent},
		{"char-device", pax(special("dev/null", tar.TypeChar)), "dev/null", ErrType},
		{"block-device", pax(special("dev/sda", tar.TypeBlock)), "dev/sda", ErrType},
		{"fifo", pax(special("pipe", tar.TypeFifo)), "pipe", ErrType},
		{"contiguous", pax(special("cont", tar.TypeCont)), "cont", ErrType},
		{"unknown-type", pax(special("what", 'Z')), "what", ErrType},
		{"gnu-volume", gnu(special("label", 'V')), "label", ErrType},
		{"gnu-sparse", oldGNUSparse(t), "s", ErrSparse},
		{"pax-sparse", rawPAX(t, file("s", 5), "GNU.sparse.name=s"), "s", ErrSparse},
		{"xattr-schily", pax(withRecords(file("x", 1), "SCHILY.xattr.user.a", "1")), "x", ErrXattr},
		{"xattr-libarchive", pax(withRecords(file("x", 1), "LIBARCHIVE.xattr.user.a", "MQ==")), "x", ErrXattr},
		{"setuid", pax(fileMode("su", 1, 0o4755)), "su", ErrSpecialBits},
		{"setgid-dir", pax(withMode(dir("sg/"), 0o2755)), "sg/", ErrSpecialBits},
		{"sticky-dir", pax(withMode(dir("tmp/"), 0o1777)), "tmp/", ErrSpecialBits},
		{"symlink-absolute", pax(symlink("l", "/etc")), "l", ErrSymlinkEscape},
		{"symlink-escape", pax(symlink("l", "../x")), "l", ErrSymlinkEscape},
		{"symlink-escape-deep", pax(dir("a/b/"), symlink("a/b/l", "../../../x")), "a/b/l", ErrSymlinkEscape},
		{"symlink-empty", pax(symlink("l", "")), "l", ErrSymlinkEscape},
		{"symlink-climb-after-name", pax(dir("d/"), symlink("d/l", ".."), symlink("d/m", "l/..")), "d/m", ErrSymlinkEscape},
		{"symlink-control", gnu(symlink("l", "a\nb")), "l", ErrName},
		{"symlink-too-long", pax(symlink("l", strings.Repeat("a/", 2048)+"x")), "l", ErrLimit},
		{"symlink-past-xfs", pax(symlink("l", strings.Repeat("a/", maxLinkLen/2)+"xy")), "l", ErrLimit},
		{"hardlink-later", pax(hardlink("h", "f"), file("f", 1)), "h", ErrHardlink},
		{"hardlink-dir", pax(dir("d/"), hardlink("h", "d")), "h", ErrHardlink},
		{"hardlink-synthesized-dir", pax(file("d/f", 1), hardlink("h", "d")), "h", ErrHardlink},
		{"hardlink-symlink", pax(file("f", 1), symlink("s", "f"), hardlink("h", "s")), "h", ErrHardlink},
		{"hardlink-hardlink", pax(file("f", 1), hardlink("h", "f"), hardlink("h2", "h")), "h2", ErrHardlink},
		{"hardlink-missing", pax(hardlink("h", "nope")), "h", ErrHardlink},
		{"hardlink-absolute", pax(hardlink("h", "/etc/passwd")), "h", ErrHardlink},
		{"hardlink-escape", pax(file("f", 1), hardlink("h", "../f")), "h", ErrHardlink},
		{"hardlink-self", pax(hardlink("h", "h")), "h", ErrHardlink},
		{"hardlink-data", hardlinkWithSize(t), "h", ErrHardlink},
		{"backslash", pax(file(`..\..\x`, 1)), `..\..\x`, ErrUnsafePath},
		{"unc", pax(file(`\\server\share\x`, 1)), `\\server\share\x`, ErrUnsafePath},
		{"drive", pax(file("C:/Windows/x", 1)), "C:/Windows/x", ErrUnsafePath},
		{"drive-relative", pax(file("c:x", 1)), "c:x", ErrUnsafePath},
		{"c1-control", pax(file("a\u0085b", 1)), "a\u0085b", ErrName},
		{"bidi-override", pax(file("evil\u202etxt.exe", 1)), "evil\u202etxt.exe", ErrName},
		{"symlink-backslash", pax(symlink("l", `..\..\etc`)), "l", ErrSymlinkEscape},
		{"symlink-drive", pax(symlink("l", "C:/Windows")), "l", ErrSymlinkEscape},
		{"symlink-bidi", pax(symlink("l", "a\u202eb")), "l", ErrName},
		{"hardlink-dotdot-inside", pax(file("f", 1), dir("d/"), hardlink("h", "d/../f")), "h", ErrHardlink},
		{"xattr-acl", pax(withRecords(file("x", 1), "SCHILY.acl.access", "user::rwx")), "x", ErrXattr},
		{"xattr-selinux", pax(withRecords(file("x", 1), "RHT.security.selinux", "system_u:object_r:bin_t")), "x", ErrXattr},
		{"path-too-long", pax(file(deepPath(maxPathLen+1), 1)), deepPath(maxPathLen + 1), ErrLimit},
		{"too-deep", pax(file(strings.Repeat("a/", maxDepth)+"f", 1)), strings.Repeat("a/", maxDepth) + "f", ErrLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Align(io.Discard, bytes.NewReader(tt.in), Limits{})
			wantRefused(t, err, tt.member, tt.err)
			_, err = Scan(bytes.NewReader(tt.in))
			wantRefused(t, err, tt.member, tt.err)
		})
	}
}

func withMode(e entry, mode int64) entry {
	e.hdr.Mode = mode
	return e
}

// TestPolicyAllows checks members at the edges of the policy.
func TestPolicyAllows(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"path-at-limit", makeTar(t, tar.FormatPAX, file(deepPath(maxPathLen), 1))},
		{"symlink-at-xfs-limit", makeTar(t, tar.FormatPAX, symlink("l", strings.Repeat("a/", maxLinkLen/2)+"x"))},
		{"depth-at-limit", makeTar(t, tar.FormatPAX, file(strings.Repeat("a/", maxDepth-1)+"f", 1))},
		{"symlink-to-root", makeTar(t, tar.FormatPAX, symlink("a/b/l", "../.."), symlink("a/b/m", "./../../a"))},
		{"root-entries", makeTar(t, tar.FormatGNU, dir("./"), dir("."), file("f", 1), withMode(dir("./"), 0o2755))},
		{"dot-components", makeTar(t, tar.FormatPAX, file("./a/./b", 1), hardlink("c", "./a//b"))},
		{"dirs-after-files", makeTar(t, tar.FormatPAX, file("d/f", 1), withMode(dir("d/"), 0o700), dir("e/"), withMode(dir("e/"), 0o750), dir("e/"))},
	} {
		t.Run(tc.name, func(t *testing.T) { roundTrip(t, tc.in) })
	}
}

func TestMemberLimit(t *testing.T) {
	c := newChecker()
	for i := range maxMembers - 1 {
		c.paths.add(strconv.Itoa(i), tar.TypeReg)
	}
	if _, _, err := c.check(&tar.Header{Typeflag: tar.TypeReg, Name: "last"}); err != nil {
		t.Fatalf("member %d: %v", maxMembers, err)
	}
	_, _, err := c.check(&tar.Header{Typeflag: tar.TypeReg, Name: "one-more"})
	wantRefused(t, err, "one-more", ErrLimit)
}

func TestEntryAndByteLimits(t *testing.T) {
	c := newChecker()
	c.entries = maxEntries - 1
	if _, _, err := c.check(&tar.Header{Typeflag: tar.TypeDir, Name: "./"}); err != nil {
		t.Fatalf("entry %d: %v", maxEntries, err)
	}
	_, _, err := c.check(&tar.Header{Typeflag: tar.TypeDir, Name: "./"})
	wantRefused(t, err, "./", ErrLimit)

	c = newChecker()
	if _, _, err := c.check(&tar.Header{Typeflag: tar.TypeReg, Name: "a", Size: maxBytes - 1}); err != nil {
		t.Fatal(err)
	}
	_, _, err = c.check(&tar.Header{Typeflag: tar.TypeReg, Name: "b", Size: 2})
	wantRefused(t, err, "b", ErrLimit)
	// A size that takes the sum past math.MaxInt64 is refused too, not wrapped round.
	_, _, err = c.check(&tar.Header{Typeflag: tar.TypeReg, Name: "c", Size: math.MaxInt64})
	wantRefused(t, err, "c", ErrLimit)
}

// TestNameBytesLimit checks that names, link targets and the parents a member needs count
// towards maxNameBytes, and that the member past it is refused.
func TestNameBytesLimit(t *testing.T) {
	c := newChecker()
	c.names = maxNameBytes - len("d/l") - len("d") - len("target")
	if _, _, err := c.check(&tar.Header{Typeflag: tar.TypeSymlink, Name: "d/l", Linkname: "target"}); err != nil {
		t.Fatalf("member at the limit: %v", err)
	}
	_, _, err := c.check(&tar.Header{Typeflag: tar.TypeReg, Name: "x"})
	wantRefused(t, err, "x", ErrLimit)
	if le := (*LimitError)(nil); !errors.As(err, &le) || le.Limit != "name bytes" || le.Max != maxNameBytes {
		t.Errorf("error %v, want a *LimitError of the names' bytes", err)
	}
}

// TestNameBytesAlign checks that Align refuses an archive past maxNameBytes while reading
// it, at the first member past the limit.
func TestNameBytesAlign(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 75 MB of headers")
	}
	dir := deepPath(maxPathLen - 256)
	name := func(i int) string { return fmt.Sprintf("%s/%0255d", dir, i) }
	parents := 0 // bytes of the directories the first member needs
	for d := dir; d != "."; d = path.Dir(d) {
		parents += len(d)
	}
	past := (maxNameBytes - parents) / maxPathLen // the first member past the limit
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		for i := range past + 2 {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name(i), Mode: 0o644, Format: tar.FormatPAX}); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(tw.Close())
	}()
	defer pr.Close()
	_, err := Align(io.Discard, pr, Limits{})
	var me *MemberError
	if !errors.As(err, &me) || !errors.Is(err, ErrLimit) {
		t.Fatalf("Align: %v, want a member refused for the name limit", err)
	}
	if me.Name != name(past) {
		t.Errorf("Align refused member %s, want %s", err, name(past)[len(dir)+1:])
	}
	if got := len(err.Error()); got > 400 {
		t.Errorf("error of %d bytes for a name of %d: %.400s", got, len(me.Name), err)
	}
}

// TestPAXHeaderSize checks that a pax header is bounded: archive/tar refuses one past 1 MiB
// before building its records, so no header can carry more than that into memory.
func TestPAXHeaderSize(t *testing.T) {
	in := rawPAX(t, file("f", 1), "comment="+strings.Repeat("x", 1<<20))
	for _, f := range []func() error{
		func() error { _, err := Align(io.Discard, bytes.NewReader(in), Limits{}); return err },
		func() error { _, err := Scan(bytes.NewReader(in)); return err },
	} {
		if err := f(); !errors.Is(err, tar.ErrFieldTooLong) {
			t.Errorf("archive with a pax header of 1 MiB: %v, want %v", err, tar.ErrFieldTooLong)
		}
	}
}

// TestFolded checks that names differing only in case or Unicode normalization pass Align,
// Scan and Validate, being distinct files where names are not folded, and that
// CheckFolded refuses the later of the two, naming both.
func TestFolded(t *testing.T) {
	pax := func(es ...entry) []byte { return makeTar(t, tar.FormatPAX, es...) }
	tests := []struct {
		name          string
		in            []byte
		member, other string
	}{
		{"case", pax(file("README", 1), file("readme", 1)), "readme", "README"},
		{"case-linux", pax(dir("n/"), file("n/xt_CONNMARK.h", 1), file("n/xt_connmark.h", 1)), "n/xt_connmark.h", "n/xt_CONNMARK.h"},
		{"case-dir-file", pax(dir("Bin/"), file("bin", 1)), "bin", "Bin"},
		{"case-parent", pax(file("A/x", 1), file("a/y", 1)), "a", "A"},
		{"case-symlink-dir", pax(symlink("D", "."), file("d/x", 1)), "d", "D"},
		{"kelvin", pax(file("k", 1), file("\u212a", 1)), "\u212a", "k"},
		{"nfc-nfd", pax(file("caf\u00e9", 1), file("cafe\u0301", 1)), "cafe\u0301", "caf\u00e9"},
		{"nfd-nfc-dir", pax(dir("e\u0301/"), symlink("\u00e9", ".")), "\u00e9", "e\u0301"},
		{"angstrom", pax(file("\u00c5", 1), file("\u212b", 1)), "\u212b", "\u00c5"},
		{"hangul", pax(file("\uac00", 1), file("\u1100\u1161", 1)), "\u1100\u1161", "\uac00"},
		{"sharp-s", pax(file("strasse", 1), file("stra\u00dfe", 1)), "stra\u00dfe", "strasse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var aligned bytes.Buffer
			st, err := Align(&aligned, bytes.NewReader(tt.in), Limits{})
			if err != nil {
				t.Fatalf("Align: %v", err)
			}
			members, err := Scan(bytes.NewReader(aligned.Bytes()))
			if err != nil {
				t.Fatalf("Scan: %v", err)
			}
			if err := Validate(members); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if len(members) != len(st.Members) {
				t.Fatalf("Scan: %d members, Align %d", len(members), len(st.Members))
			}
			err = CheckFolded(members)
			wantRefused(t, err, tt.member, ErrFolded)
			if fe := (*FoldedError)(nil); err != nil && (!errors.As(err, &fe) || fe.Other != tt.other || fe.Name != tt.member) {
				t.Errorf("error %q: want a *FoldedError of %q and %q", err, tt.other, tt.member)
			}
		})
	}
	if err := CheckFolded([]Member{{Name: "a"}, {Name: "b"}, {Name: "\u00e9"}, {Name: "\u00e8"}, {Name: "lib/libc.so.6"}}); err != nil {
		t.Errorf("CheckFolded of distinct names: %v", err)
	}
}

func TestFoldKey(t *testing.T) {
	same := [][2]string{
		{"readme", "README"}, {"k", "\u212a"}, {"s", "\u017f"}, {"caf\u00e9", "CAFE\u0301"}, {"\u00c5", "\u212b"},
		{"\u00c5", "A\u030a"}, {"\uac01", "\u1100\u1161\u11a8"}, {"\u304c", "\u304b\u3099"}, {"stra\u00dfe", "STRASSE"},
		{"\ufb01le", "file"}, {"a;", "a\u037e"}, {"\u01d6", "u\u0308\u0304"}, {"\u0130", "i\u0307"},
	}
	for _, p := range same {
		if a, b := foldKey(p[0]), foldKey(p[1]); a != b {
			t.Errorf("foldKey(%q) = %q, foldKey(%q) = %q; want equal", p[0], a, p[1], b)
		}
	}
	differ := [][2]string{{"a", "b"}, {"a/b", "ab"}, {"e\u0301", "e"}, {"\u00e9x", "\u00e9"}, {"d/\u0301", "d"},
		{"\u4e2d\u56fd.txt", "\u65e5\u672c.txt"}, {"locale/ru/\u0434\u0430", "locale/ru/\u043d\u0435"}, {"\u00e9", "\u00e8"}}
	for _, p := range differ {
		if a, b := foldKey(p[0]), foldKey(p[1]); a == b {
			t.Errorf("foldKey(%q) = foldKey(%q) = %q; want different", p[0], p[1], a)
		}
	}
	if s := "lib/x86_64-linux-gnu/libc.so.6"; foldKey(s) != s {
		t.Errorf("foldKey(%q) = %q", s, foldKey(s))
	}
}

func TestValidate(t *testing.T) {
	reg := func(name string) Member {
		return Member{Name: name, Type: tar.TypeReg, Mode: 0o644, Size: 1, Offset: 512}
	}
	dirm := func(name string) Member { return Member{Name: name, Type: tar.TypeDir, Mode: 0o755} }
	link := func(name, target string, typ byte) Member { return Member{Name: name, Type: typ, Linkname: target} }
	ok := []Member{dirm("d"), reg("d/f"), link("d/h", "d/f", tar.TypeLink), link("d/l", "f", tar.TypeSymlink), dirm("d/e")}
	if err := Validate(ok); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	tests := []struct {
		name    string
		members []Member
		member  string
		err     error
	}{
		{"missing-parent", []Member{reg("d/f")}, "d/f", ErrParent},
		{"not-clean", []Member{reg("./f")}, "./f", ErrName},
		{"trailing-slash", []Member{dirm("d/")}, "d/", ErrName},
		{"root", []Member{dirm(".")}, ".", ErrName},
		{"repeated-dir", []Member{dirm("d"), dirm("d")}, "d", ErrName},
		{"dotdot", []Member{reg("../f")}, "../f", ErrUnsafePath},
		{"setuid-filemode", []Member{{Name: "f", Type: tar.TypeReg, Mode: fs.ModeSetuid | 0o755}}, "f", ErrSpecialBits},
		{"hardlink-not-clean", []Member{reg("f"), link("h", "./f", tar.TypeLink)}, "h", ErrHardlink},
		{"data-on-dir", []Member{{Name: "d", Type: tar.TypeDir, Size: 5}}, "d", ErrType},
		{"data-on-symlink", []Member{{Name: "l", Type: tar.TypeSymlink, Linkname: "x", Size: 5}}, "l", ErrType},
		{"under-symlink", []Member{link("l", ".", tar.TypeSymlink), reg("l/f")}, "l/f", ErrParent},
		{"device", []Member{{Name: "null", Type: tar.TypeChar}}, "null", ErrType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantRefused(t, Validate(tt.members), tt.member, tt.err) })
	}
}

func TestMemberErrorText(t *testing.T) {
	in := makeTar(t, tar.FormatPAX, file("a/../../x", 1))
	_, err := Align(io.Discard, bytes.NewReader(in), Limits{})
	if got, want := err.Error(), `member "a/../../x": path escapes the package`; got != want {
		t.Errorf("error %q, want %q", got, want)
	}
	var me *MemberError
	if !errors.As(err, &me) || me.Unwrap() != ErrUnsafePath {
		t.Errorf("Unwrap of %v is not ErrUnsafePath", err)
	}
	setuid := file("s", 1)
	setuid.hdr.Mode = 0o4755
	truncated := makeTar(t, tar.FormatPAX, file("f", 600))
	for _, tt := range []struct {
		err    error
		reason error
		want   string
	}{
		{alignErr(t, symlink("l", "/etc/passwd")), ErrSymlinkEscape, `member "l": symlink target outside the package: absolute target "/etc/passwd"`},
		{alignErr(t, setuid), ErrSpecialBits, `member "s": setuid, setgid or sticky bit not allowed (mode 04755)`},
		// A reason said inside another's detail loses its prefix too.
		{alignErr(t, file("f", 1), hardlink("h", "/f")), ErrHardlink, `member "h": invalid hardlink: target "/f": path escapes the package: absolute path`},
		{alignErr(t, symlink("l", strings.Repeat("x", maxLinkLen+1))), ErrLimit, `member "l": limit exceeded: symlink target of 1024 bytes, longer than the 1023 XFS can create`},
		{CheckFolded([]Member{{Name: "A", Type: tar.TypeReg}, {Name: "a", Type: tar.TypeReg}}), ErrFolded, `member "a": names differ only in case or Unicode normalization: "A" and "a" are one file where names fold`},
		{&MemberError{Name: "s", Err: Refused(ErrType, "a %s", "socket")}, ErrType, `member "s": unsupported member type: a socket`},
		{&MemberError{Name: "s", Err: ErrType}, ErrType, `member "s": unsupported member type`},
		{alignErrOf(t, truncated[:1024]), ErrTruncated, `read member "f": archive truncated: unexpected EOF`},
	} {
		if got := tt.err.Error(); got != tt.want || !errors.Is(tt.err, tt.reason) {
			t.Errorf("error %q, want %q, and %v", got, tt.want, tt.reason)
		}
	}
	// Alone, a reason, and one with its detail, say the package's name.
	if got, want := Refused(ErrType, "a socket").Error(), "tarutil: unsupported member type: a socket"; got != want {
		t.Errorf("Refused(ErrType).Error() = %q, want %q", got, want)
	}
	if got, want := ErrTruncated.Error(), "tarutil: archive truncated"; got != want {
		t.Errorf("ErrTruncated.Error() = %q, want %q", got, want)
	}
}

// alignErr is Align's error for a tar of entries.
func alignErr(t *testing.T, entries ...entry) error {
	t.Helper()
	return alignErrOf(t, makeTar(t, tar.FormatPAX, entries...))
}

func alignErrOf(t *testing.T, in []byte) error {
	t.Helper()
	_, err := Align(io.Discard, bytes.NewReader(in), Limits{})
	if err == nil {
		t.Fatal("Align took the archive")
	}
	return err
}

func TestCleanName(t *testing.T) {
	tests := []struct {
		raw, want string
		err       error
	}{
		{"a", "a", nil},
		{"./a/", "a", nil},
		{"a//b/./c/", "a/b/c", nil},
		{"./", ".", nil},
		{"a/../b", "", ErrUnsafePath},
		{"a/..", "", ErrUnsafePath},
		{"a/./b/.", "a/b", nil},
		{"", "", ErrName},
		{"a\x00b", "", ErrName},
		{"a\x1fb", "", ErrName},
		{"\xc0\xaf", "", ErrName},
		{"/", "", ErrUnsafePath},
		{"/a", "", ErrUnsafePath},
		{"..", "", ErrUnsafePath},
		{"./../a", "", ErrUnsafePath},
		{"a/../../b", "", ErrUnsafePath},
		{longPath(maxPathLen), longPath(maxPathLen), nil},
		{"./" + longPath(maxPathLen), longPath(maxPathLen), nil},
		{longPath(maxPathLen + 1), "", ErrLimit},
		{strings.Repeat("x", maxNameLen), strings.Repeat("x", maxNameLen), nil},
		{"d/" + strings.Repeat("x", maxNameLen+1), "", ErrLimit},
	}
	for _, tt := range tests {
		got, err := cleanName(tt.raw)
		if got != tt.want || !errors.Is(err, tt.err) || (err != nil) != (tt.err != nil) {
			t.Errorf("cleanName(%.20q) = %.20q, %v; want %.20q, %v", tt.raw, got, err, tt.want, tt.err)
		}
	}
}

func TestClimbsAfterName(t *testing.T) {
	for p, want := range map[string]bool{
		"a": false, "../a": false, "../../a/b": false, "./../a": false, ".": false, "..": false,
		"a/..": true, "a/../b": true, "../a/../b": true, "a/./..": true, "a//..": true,
	} {
		if got := climbsAfterName(p); got != want {
			t.Errorf("climbsAfterName(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestInsecurePathDebug checks the policy error wins when archive/tar itself
// refuses non-local names (GODEBUG=tarinsecurepath=0).
func TestInsecurePathDebug(t *testing.T) {
	t.Setenv("GODEBUG", "tarinsecurepath=0")
	in := makeTar(t, tar.FormatPAX, file("ok", 1), file("/etc/passwd", 1))
	_, err := Align(io.Discard, bytes.NewReader(in), Limits{})
	wantRefused(t, err, "/etc/passwd", ErrUnsafePath)
	roundTrip(t, makeTar(t, tar.FormatPAX, file("a/./b", 1), dir("./")))
}

// longPath returns a path of n bytes in components Linux can create.
func longPath(n int) string {
	p := strings.Repeat(strings.Repeat("x", maxNameLen)+"/", (n-1)/(maxNameLen+1))
	return p + strings.Repeat("y", n-len(p))
}

// TestMemberErrorLongName shows the start of a long name, not all of it.
func TestMemberErrorLongName(t *testing.T) {
	err := &MemberError{Name: strings.Repeat("é", 3000), Err: ErrLimit}
	if s := err.Error(); len(s) > 300 || !strings.Contains(s, `é"… (6000 bytes)`) || !utf8.ValidString(s) {
		t.Errorf("error for a 6000-byte name: %d bytes: %q", len(s), s)
	}
}

// FuzzCleanName holds cleanName, which scans a name's components once, to the checks
// one at a time that it does: the same name, or an error of the same text.
func FuzzCleanName(f *testing.F) {
	for _, p := range []string{"a", "a/b", "a//b", "a/./b", "./a", "a/", "a/..", ".", "..", "", "a/.b", "...", "/", "../a", "a/../b", strings.Repeat("x/", maxDepth) + "y", strings.Repeat("x", maxNameLen+1), "./" + strings.Repeat("y", maxNameLen+1)} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := cleanName(raw)
		want, werr := cleanNameSteps(raw)
		if got != want || (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Errorf("cleanName(%q) = %q, %v; want %q, %v", raw, got, err, want, werr)
		}
	})
}

// cleanNameSteps is cleanName as a check at a time.
func cleanNameSteps(raw string) (string, error) {
	if err := checkText(raw); err != nil {
		return "", fmt.Errorf("%w: %s", ErrName, err)
	}
	if err := checkWindows(raw); err != nil {
		return "", fmt.Errorf("%w: %s", ErrUnsafePath, err)
	}
	if raw[0] == '/' {
		return "", fmt.Errorf("%w: absolute path", ErrUnsafePath)
	}
	for elem := range strings.SplitSeq(raw, "/") {
		if elem == ".." {
			return "", ErrUnsafePath
		}
	}
	name := path.Clean(raw)
	if len(name) > maxPathLen {
		return "", limitError("path length", maxPathLen, "path longer than %d bytes", maxPathLen)
	}
	if strings.Count(name, "/") >= maxDepth {
		return "", limitError("path depth", maxDepth, "path deeper than %d components", maxDepth)
	}
	for c := range strings.SplitSeq(name, "/") {
		if len(c) > maxNameLen {
			return "", limitError("component length", maxNameLen, "a path component longer than %d bytes, which Linux cannot create", maxNameLen)
		}
	}
	return name, nil
}

// TestParent checks Parent against path.Dir on the clean relative paths it is given.
func TestParent(t *testing.T) {
	for _, p := range []string{"", ".", "a", "a/b", "node_modules/.pnpm/a@1.0.0/node_modules/a/index.js", "@s/n/x"} {
		if got, want := Parent(p), path.Dir(p); got != want {
			t.Errorf("Parent(%q) = %q, want %q", p, got, want)
		}
	}
}

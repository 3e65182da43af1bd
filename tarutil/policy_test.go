package tarutil

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
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
		{"path-too-long", pax(file(deepPath(maxPathLen+1), 1)), deepPath(maxPathLen + 1), ErrLimit},
		{"too-deep", pax(file(strings.Repeat("a/", maxDepth)+"f", 1)), strings.Repeat("a/", maxDepth) + "f", ErrLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Align(io.Discard, bytes.NewReader(tt.in))
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
		{"depth-at-limit", makeTar(t, tar.FormatPAX, file(strings.Repeat("a/", maxDepth-1)+"f", 1))},
		{"symlink-to-root", makeTar(t, tar.FormatPAX, symlink("a/b/l", "../.."), symlink("a/b/m", "./../../a"))},
		{"root-entries", makeTar(t, tar.FormatGNU, dir("./"), dir("."), file("f", 1), withMode(dir("./"), 0o2755))},
		{"dotdot-inside", makeTar(t, tar.FormatPAX, file("a/../b", 1), hardlink("c", "a/../b"))},
	} {
		t.Run(tc.name, func(t *testing.T) { roundTrip(t, tc.in) })
	}
}

func TestMemberLimit(t *testing.T) {
	c := newChecker()
	for i := range maxMembers - 1 {
		c.kinds[strconv.Itoa(i)] = tar.TypeReg
	}
	if _, _, err := c.check(&tar.Header{Typeflag: tar.TypeReg, Name: "last"}); err != nil {
		t.Fatalf("member %d: %v", maxMembers, err)
	}
	_, _, err := c.check(&tar.Header{Typeflag: tar.TypeReg, Name: "one-more"})
	wantRefused(t, err, "one-more", ErrLimit)
}

func TestMemberErrorText(t *testing.T) {
	in := makeTar(t, tar.FormatPAX, file("a/../../x", 1))
	_, err := Align(io.Discard, bytes.NewReader(in))
	if got, want := err.Error(), `tarutil: member "a/../../x": path escapes the package`; got != want {
		t.Errorf("error %q, want %q", got, want)
	}
	var me *MemberError
	if !errors.As(err, &me) || me.Unwrap() != ErrUnsafePath {
		t.Errorf("Unwrap of %v is not ErrUnsafePath", err)
	}
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
		{"a/../b", "b", nil},
		{"a/..", ".", nil},
		{"", "", ErrName},
		{"a\x00b", "", ErrName},
		{"a\x1fb", "", ErrName},
		{"\xc0\xaf", "", ErrName},
		{"/", "", ErrUnsafePath},
		{"/a", "", ErrUnsafePath},
		{"..", "", ErrUnsafePath},
		{"./../a", "", ErrUnsafePath},
		{"a/../../b", "", ErrUnsafePath},
		{strings.Repeat("x", maxPathLen), strings.Repeat("x", maxPathLen), nil},
		{"./" + strings.Repeat("x", maxPathLen), strings.Repeat("x", maxPathLen), nil},
		{strings.Repeat("x", maxPathLen+1), "", ErrLimit},
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
	_, err := Align(io.Discard, bytes.NewReader(in))
	wantRefused(t, err, "/etc/passwd", ErrUnsafePath)
	roundTrip(t, makeTar(t, tar.FormatPAX, file("a/../b", 1), dir("./")))
}

package fetch

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/ulikunitz/xz"
)

// TestDebErrorText pins the wording of every refusal of a .deb: the reason without its
// package's prefix, what more is known after it, the member named once.
func TestDebErrorText(t *testing.T) {
	files := []file{{"usr/bin/hello", []byte("#!/bin/sh\n")}}
	plain := makeTar(t, files)
	data := gzipped(t, plain)
	control := gzipped(t, makeTar(t, []file{{"./control", []byte("Package: hello\nVersion: 1\n")}}))
	bin := arMember{"debian-binary", []byte("2.0\n"), 0}
	ctl := arMember{"control.tar.gz", control, 0}
	dat := arMember{"data.tar.gz", data, 0}
	deb := arArchive(bin, ctl, dat)
	big := makeTar(t, []file{{"./control", bytes.Repeat([]byte("x"), maxControl+1)}})
	cut := makeTar(t, []file{{"./control", bytes.Repeat([]byte("x"), 2000)}})[:1024]
	badHeader := bytes.Clone(deb)
	badHeader[len(arArchive(bin))+arHeaderLen-2] = 'x'
	window := setDict(t, xzStream(t, plain, 1<<20, xz.CRC64), 29)
	tests := []struct {
		name    string
		deb     []byte
		control bool // read the control file
		want    string
	}{
		{"bad header", badHeader, false, `deb: bad ar header after member "debian-binary"`},
		{"bad size", bytes.Replace(deb, []byte(fmt.Sprintf("%-10d`", len(data))), []byte("-1        `"), 1), false, `deb member "data.tar.gz": bad size "-1        " in its ar header`},
		{"truncated header", deb[:len(arArchive(bin))+30], false, `deb member "debian-binary": archive truncated`},
		{"no data", arArchive(bin, ctl), false, `deb: no data.tar member`},
		{"control compression", arArchive(bin, arMember{"control.tar.Z", control, 0}, dat), false, `deb member "control.tar.Z": compression not supported`},
		{"stranger", arArchive(bin, ctl, arMember{"evil", nil, 0}, dat), false, `deb member "evil": not a member of a .deb (want control.tar, then data.tar)`},
		{"data first", arArchive(bin, dat, ctl), false, `deb member "data.tar.gz": before the control.tar member`},
		{"lzma", arArchive(bin, ctl, arMember{"data.tar.lzma", data, 0}), false, `deb member "data.tar.lzma": compression not supported (pkg reads plain, gz, zst, xz or bz2)`},
		{"no debian-binary", arArchive(ctl, dat), false, `deb: first member not debian-binary: "control.tar.gz"`},
		{"format 3", arArchive(arMember{"debian-binary", []byte("3.0\n"), 0}, ctl, dat), false, `deb member "debian-binary": format not 2.x: "3.0\n"`},
		{"second data", arArchive(bin, ctl, dat, arMember{"data.tar.xz", data, 0}), false, `deb member "data.tar.xz": a second data member, after "data.tar.gz"`},
		{"data over its size", arArchive(bin, ctl, arMember{"data.tar.gz", data, len(data) - 10}), false, `deb member "data.tar.gz": compressed tar cut short at the member's end, 106 bytes as its ar header declares: unexpected EOF`},
		{"data under its size", arArchive(bin, ctl, arMember{"data.tar.gz", data, len(data) + 100}), false, `deb member "data.tar.gz": archive truncated`},
		{"data not a tar", arArchive(bin, ctl, arMember{"data.tar.gz", gzipped(t, []byte("hello")), 0}), false, `deb member "data.tar.gz": not a tar archive: its gz data hold 5 bytes, less than a tar header`},
		{"data window", arArchive(bin, ctl, arMember{"data.tar.xz", window, 0}), false, `deb member "data.tar.xz": xz block 1 at byte 12: fetch: decompression window over pkg's limit: dictionary of 96 MiB, over 64 MiB`},
		{"control not compressed", arArchive(bin, arMember{"control.tar.gz", []byte("hello"), 0}, dat), true, `deb member "control.tar.gz": not a tar (plain, gz, zst, xz or bz2)`},
		{"control not a tar", arArchive(bin, arMember{"control.tar.gz", gzipped(t, bytes.Repeat([]byte("x"), 1024)), 0}, dat), true, `deb member "control.tar.gz": archive/tar: invalid tar header`},
		{"no control file", arArchive(bin, arMember{"control.tar.gz", gzipped(t, makeTar(t, []file{{"./md5sums", nil}})), 0}, dat), true, `deb member "control.tar.gz": no control file`},
		{"control too big", arArchive(bin, arMember{"control.tar", big, 0}, dat), true, `deb member "control.tar": control file over 1048576 bytes`},
		{"control cut", arArchive(bin, arMember{"control.tar", cut, 0}, dat), true, `deb member "control.tar": unexpected EOF`},
		{"control member cut", arArchive(bin, ctl)[:len(arArchive(bin))+arHeaderLen+20], true, `deb member "control.tar.gz": archive truncated`},
		{"escape then second data", arArchive(bin, ctl, arMember{"data.tar", linkTar(t, "usr/", "usr/x -> /etc/passwd"), 0}, dat), false, `deb member "data.tar": member "usr/x": symlink target outside the package: absolute target "/etc/passwd", in none of the package's top-level directories`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cv conversion
			if tt.control {
				cv.control = new(*Control)
			}
			_, err := convert(io.Discard, bytes.NewReader(tt.deb), cv)
			if err == nil || err.Error() != tt.want {
				t.Errorf("convert: %v\nwant %s", err, tt.want)
			}
		})
	}
	_, err := newArReader(bufio.NewReader(strings.NewReader("!<arc")))
	if want := "deb: no ar magic"; err == nil || err.Error() != want {
		t.Errorf("newArReader: %v, want %s", err, want)
	}
}

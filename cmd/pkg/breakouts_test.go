package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"pkg/pkgtest/testrepo"
	"strconv"
	"strings"
	"testing"
	"time"

	"pkg/internal/termtext"
	"pkg/internal/testfs"

	"pkg/repo"
)

// ent is one member of a test archive written with archive/tar.
type ent struct {
	hdr  tar.Header
	data []byte
}

var breakoutTime = time.Unix(1700000000, 0)

func tf(name, data string) ent {
	return ent{tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: breakoutTime}, []byte(data)}
}

func td(name string) ent {
	return ent{hdr: tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755, ModTime: breakoutTime}}
}

func tl(name, target string) ent {
	return ent{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777, ModTime: breakoutTime}}
}

func th(name, target string) ent {
	return ent{hdr: tar.Header{Typeflag: tar.TypeLink, Name: name, Linkname: target, Mode: 0o644, ModTime: breakoutTime}}
}

func typed(name string, typ byte) ent {
	return ent{hdr: tar.Header{Typeflag: typ, Name: name, Mode: 0o644, ModTime: breakoutTime}}
}

func moded(e ent, mode int64) ent {
	e.hdr.Mode = mode
	return e
}

func withPAX(e ent, kv ...string) ent {
	e.hdr.PAXRecords = map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		e.hdr.PAXRecords[kv[i]] = kv[i+1]
	}
	return e
}

// stdTar writes entries with archive/tar in format.
func stdTar(t *testing.T, format tar.Format, entries ...ent) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := e.hdr
		hdr.Format = format
		if err := tw.WriteHeader(&hdr); err != nil {
			t.Fatalf("write header %q: %v", hdr.Name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			t.Fatalf("write %q: %v", hdr.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func pax(t *testing.T, entries ...ent) []byte { return stdTar(t, tar.FormatPAX, entries...) }

// rawTar writes header blocks byte by byte, for the shapes archive/tar will not write: odd
// names, NULs in pax records, GNU long names and sparse types, links carrying data.
type rawTar struct{ b []byte }

const (
	ustarMagic = "ustar\x0000"
	gnuMagic   = "ustar  \x00"
)

func (r *rawTar) header(magic, name string, typ byte, size int64, link string, mode int64) *rawTar {
	var blk [512]byte
	copy(blk[0:100], name)
	putOctalField(blk[100:108], mode)
	putOctalField(blk[108:116], 0)
	putOctalField(blk[116:124], 0)
	putOctalField(blk[124:136], size)
	putOctalField(blk[136:148], breakoutTime.Unix())
	blk[156] = typ
	copy(blk[157:257], link)
	copy(blk[257:265], magic)
	copy(blk[148:156], "        ")
	sum := 0
	for _, c := range blk {
		sum += int(c)
	}
	putOctalField(blk[148:155], int64(sum))
	blk[155] = ' '
	r.b = append(r.b, blk[:]...)
	return r
}

func putOctalField(b []byte, v int64) {
	s := strconv.FormatInt(v, 8)
	copy(b, strings.Repeat("0", len(b)-1-len(s))+s)
	b[len(b)-1] = 0
}

// data appends member data padded to a block.
func (r *rawTar) data(d string) *rawTar {
	r.b = append(r.b, d...)
	r.b = append(r.b, make([]byte, (512-len(d)%512)%512)...)
	return r
}

func (r *rawTar) file(name, data string) *rawTar {
	return r.header(ustarMagic, name, tar.TypeReg, int64(len(data)), "", 0o644).data(data)
}

// pax appends a pax extended header with records "key=value" for the next entry.
func (r *rawTar) pax(records ...string) *rawTar {
	var recs string
	for _, rec := range records {
		n := len(rec) + 2
		n += len(strconv.Itoa(n + len(strconv.Itoa(n))))
		recs += strconv.Itoa(n) + " " + rec + "\n"
	}
	return r.header(ustarMagic, "PaxHeader", tar.TypeXHeader, int64(len(recs)), "", 0o644).data(recs)
}

// gnuLong appends a GNU long name ('L') or long link ('K') entry for the next entry.
func (r *rawTar) gnuLong(typ byte, s string) *rawTar {
	return r.header(gnuMagic, "././@LongLink", typ, int64(len(s)+1), "", 0o644).data(s + "\x00")
}

func (r *rawTar) end() []byte { return append(r.b, make([]byte, 1024)...) }

// breakout is one hostile package: its archive, made knowing where the sentinel directory
// next to the root is, what its index entry claims, and what stderr must name.
type breakout struct {
	name    string
	archive func(t *testing.T, sentinel string) []byte
	member  string                // the member refused, as the archive names it; SENTINEL stands for its path
	want    string                // what stderr must contain, when not the quoted member
	meta    func(p *repo.Package) // index fields beyond name and version
	cached  bool                  // the archive passes the member policy: it may enter the cache
}

// breakoutCases are the hostile archives: one per rule of the member policy and the known
// bypasses of other extractors (named after their advisories).
func breakoutCases() []breakout {
	long := strings.Repeat("long/", 30)
	return []breakout{
		// Absolute paths and "..".
		{name: "absolute", member: "SENTINEL/x", archive: func(t *testing.T, s string) []byte { return pax(t, tf(s+"/x", "x")) }},
		{name: "absolute-double-slash", member: "/SENTINEL/x", archive: func(t *testing.T, s string) []byte { return pax(t, tf("/"+s+"/x", "x")) }},
		{name: "dotdot-CVE-2007-4559", member: "../../../sentinel/x", archive: func(t *testing.T, _ string) []byte {
			return pax(t, tf("../../../sentinel/x", "x"))
		}},
		{name: "dotdot-after-dir", member: "a/../../../../sentinel/x", archive: func(t *testing.T, _ string) []byte {
			return pax(t, td("a/"), tf("a/../../../../sentinel/x", "x"))
		}},
		{name: "dotdot-staying-inside", member: "a/../b", archive: func(t *testing.T, _ string) []byte { return pax(t, tf("a/../b", "x")) }},
		{name: "dot-dot-dotdot-node-tar", member: "././..", archive: func(t *testing.T, _ string) []byte {
			return pax(t, td("././.."), tf("././../sentinel/x", "x"))
		}},
		{name: "dotdot-dir", member: "../", archive: func(t *testing.T, _ string) []byte { return pax(t, td("../")) }},
		{name: "root-as-file", member: ".", archive: func(t *testing.T, _ string) []byte { return pax(t, tf(".", "x")) }},
		{name: "backslash-windows", member: `..\..\..\sentinel\x`, archive: func(t *testing.T, _ string) []byte {
			return pax(t, tf(`..\..\..\sentinel\x`, "x"))
		}},
		{name: "drive-absolute-windows", member: `C:\Windows\x`, archive: func(t *testing.T, _ string) []byte { return pax(t, tf(`C:\Windows\x`, "x")) }},
		{name: "drive-relative-CVE-2021-32804", member: "c:../../x", archive: func(t *testing.T, _ string) []byte { return pax(t, tf("c:../../x", "x")) }},
		{name: "unc-path", member: `\\server\share\x`, archive: func(t *testing.T, _ string) []byte { return pax(t, tf(`\\server\share\x`, "x")) }},

		// Names.
		{name: "empty-name", member: "", archive: func(t *testing.T, _ string) []byte {
			return (&rawTar{}).file("ok", "x").file("", "x").end()
		}, want: `member "": invalid name: empty`},
		{name: "not-utf8", member: "bad\xff", archive: func(t *testing.T, _ string) []byte { return (&rawTar{}).file("bad\xff", "x").end() }},
		{name: "control-char", member: "a\x01b", archive: func(t *testing.T, _ string) []byte { return (&rawTar{}).file("a\x01b", "x").end() }},
		{name: "newline", member: "a\nb", archive: func(t *testing.T, _ string) []byte { return pax(t, tf("a\nb", "x")) }},
		{name: "c1-control", member: "a\u0085b", archive: func(t *testing.T, _ string) []byte { return pax(t, tf("a\u0085b", "x")) }},
		{name: "bidi-override", member: "evil\u202ehs.txt", archive: func(t *testing.T, _ string) []byte { return pax(t, tf("evil\u202ehs.txt", "x")) }},
		// archive/tar refuses a NUL in a pax path before pkg sees the member, so the error
		// names the member before it.
		{name: "nul-in-pax-path", archive: func(t *testing.T, _ string) []byte {
			return (&rawTar{}).file("ok", "x").pax("path=evil\x00/../../x").file("x", "x").end()
		}, want: `header after member "ok": archive/tar: invalid tar header`},

		// Duplicates (names that differ in case or normalization: TestFoldedNames).
		{name: "duplicate", member: "a", archive: func(t *testing.T, _ string) []byte { return pax(t, tf("a", "1"), tf("a", "2")) },
			want: `member "a": duplicate path`},
		{name: "duplicate-dot-slash", member: "./a", archive: func(t *testing.T, _ string) []byte { return pax(t, tf("a", "1"), tf("./a", "2")) }},
		{name: "duplicate-trailing-slash", member: "d", archive: func(t *testing.T, _ string) []byte { return pax(t, td("d/"), tf("d", "2")) },
			want: `member "d": duplicate path`},

		// Members under symlinks and files.
		{name: "symlink-then-dir-CVE-2021-32803", member: "x/", archive: func(t *testing.T, _ string) []byte {
			return pax(t, td("sub/"), tl("x", "sub"), td("x/"), tf("x/f", "x"))
		}},
		{name: "under-symlink", member: "l/x", archive: func(t *testing.T, _ string) []byte {
			return pax(t, td("sub/"), tl("l", "sub"), tf("l/x", "x"))
		}},
		{name: "under-self-symlink", member: "a/a/a/x", archive: func(t *testing.T, _ string) []byte {
			return pax(t, tl("a", "."), tf("a/a/a/x", "x"))
		}},
		{name: "under-file", member: "f/x", archive: func(t *testing.T, _ string) []byte { return pax(t, tf("f", "1"), tf("f/x", "2")) }},

		// Symlink targets.
		{name: "symlink-absolute", member: "l", archive: func(t *testing.T, s string) []byte { return pax(t, tl("l", s), tf("l/x", "x")) }},
		{name: "symlink-escape", member: "l", archive: func(t *testing.T, _ string) []byte {
			return pax(t, tl("l", "../../../sentinel"), tf("l/x", "x"))
		}},
		{name: "symlink-escape-deep", member: "a/b/l", archive: func(t *testing.T, _ string) []byte {
			return pax(t, td("a/b/"), tl("a/b/l", "../../../x"))
		}},
		{name: "symlink-to-parent", member: "l", archive: func(t *testing.T, _ string) []byte { return pax(t, tl("l", "..")) }},
		{name: "symlink-chain-gnu-tar", member: "b", archive: func(t *testing.T, _ string) []byte {
			return pax(t, tl("a", "."), tl("b", "a/.."), tf("b/x", "x"))
		}},
		{name: "symlink-climb-CVE-2025-4517", member: "esc", archive: func(t *testing.T, _ string) []byte {
			return pax(t, td(long), tl(long+"l", "."), tl("esc", long+"l/../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../sentinel"))
		}},
		{name: "symlink-backslash", member: "l", archive: func(t *testing.T, _ string) []byte { return pax(t, tl("l", `..\..\..\sentinel`)) }},
		{name: "symlink-drive", member: "l", archive: func(t *testing.T, _ string) []byte { return pax(t, tl("l", `C:\Windows`)) }},
		{name: "symlink-past-xfs-limit", member: "l", archive: func(t *testing.T, _ string) []byte { // 1,024 bytes
			return pax(t, tl("l", strings.Repeat("a/", 511)+"xy"))
		}},

		// Hardlinks.
		{name: "hardlink-escape", member: "h", archive: func(t *testing.T, _ string) []byte {
			return pax(t, th("h", "../../../sentinel/x"))
		}},
		{name: "hardlink-absolute", member: "h", archive: func(t *testing.T, _ string) []byte { return pax(t, th("h", "/etc/passwd")) }},
		{name: "hardlink-later-member", member: "h", archive: func(t *testing.T, _ string) []byte { return pax(t, th("h", "f"), tf("f", "x")) }},
		{name: "hardlink-directory", member: "h", archive: func(t *testing.T, _ string) []byte { return pax(t, td("d/"), th("h", "d")) }},
		{name: "hardlink-to-symlink-PEP-706", member: "h", archive: func(t *testing.T, _ string) []byte {
			return pax(t, tf("x", "x"), tl("s", "x"), th("h", "s"))
		}},
		{name: "hardlink-carrying-data", member: "h", archive: func(t *testing.T, _ string) []byte {
			return (&rawTar{}).file("f", "x").header(ustarMagic, "h", tar.TypeLink, 5, "f", 0o644).data("evil!").end()
		}},
		{name: "hardlink-then-overwrite", member: "h", archive: func(t *testing.T, _ string) []byte {
			return pax(t, tf("f", "x"), th("h", "f"), tf("h", "overwrite"))
		}},

		// Types and attributes.
		{name: "char-device", member: "null", archive: func(t *testing.T, _ string) []byte { return pax(t, typed("null", tar.TypeChar)) }},
		{name: "block-device", member: "sda", archive: func(t *testing.T, _ string) []byte { return pax(t, typed("sda", tar.TypeBlock)) }},
		{name: "fifo", member: "pipe", archive: func(t *testing.T, _ string) []byte { return pax(t, typed("pipe", tar.TypeFifo)) }},
		{name: "unknown-type", member: "what", archive: func(t *testing.T, _ string) []byte { return pax(t, typed("what", 'Z')) }},
		{name: "gnu-sparse", member: "s", archive: func(t *testing.T, _ string) []byte {
			return (&rawTar{}).header(gnuMagic, "s", tar.TypeGNUSparse, 0, "", 0o644).end()
		}},
		{name: "pax-sparse", member: "s", archive: func(t *testing.T, _ string) []byte {
			return (&rawTar{}).pax("GNU.sparse.name=s").file("s", "x").end()
		}},
		{name: "xattr-capability", member: "x", archive: func(t *testing.T, _ string) []byte {
			return pax(t, withPAX(tf("x", "x"), "SCHILY.xattr.security.capability", "\x01\x00\x00\x02"))
		}},
		{name: "acl", member: "x", archive: func(t *testing.T, _ string) []byte {
			return pax(t, withPAX(tf("x", "x"), "SCHILY.acl.access", "user::rwx,other::rwx"))
		}},
		{name: "setuid", member: "su", archive: func(t *testing.T, _ string) []byte { return pax(t, moded(tf("su", "x"), 0o4755)) }},
		{name: "setgid-dir", member: "sg/", archive: func(t *testing.T, _ string) []byte { return pax(t, moded(td("sg/"), 0o2755)) }},
		{name: "sticky-dir", member: "tmp/", archive: func(t *testing.T, _ string) []byte { return pax(t, moded(td("tmp/"), 0o1777)) }},

		// Limits.
		{name: "more-files-than-index", member: "b", archive: func(t *testing.T, _ string) []byte { return pax(t, tf("a", "1"), tf("b", "2")) },
			meta: func(p *repo.Package) { p.Files = 1 }},
		{name: "more-bytes-than-index", member: "a", archive: func(t *testing.T, _ string) []byte { return pax(t, tf("a", strings.Repeat("x", 100))) },
			meta: func(p *repo.Package) { p.InstalledSize = 10 }},
		{name: "too-deep", member: strings.Repeat("d/", 256) + "f", archive: func(t *testing.T, _ string) []byte {
			return pax(t, tf(strings.Repeat("d/", 256)+"f", "x"))
		}},
		{name: "path-too-long", member: strings.Repeat("n", 4097), archive: func(t *testing.T, _ string) []byte {
			return pax(t, tf(strings.Repeat("n", 4097), "x"))
		}},

		// GNU and pax headers that override the ustar fields.
		{name: "gnu-long-name", member: long + "../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../sentinel/x",
			archive: func(t *testing.T, _ string) []byte {
				name := long + strings.Repeat("../", 32) + "sentinel/x"
				return (&rawTar{}).gnuLong(tar.TypeGNULongName, name).header(gnuMagic, "innocent", tar.TypeReg, 1, "", 0o644).data("x").end()
			}},
		{name: "gnu-long-link", member: "l", archive: func(t *testing.T, s string) []byte {
			return (&rawTar{}).gnuLong(tar.TypeGNULongLink, s+"/"+long).header(gnuMagic, "l", tar.TypeSymlink, 0, "harmless", 0o777).end()
		}},
		{name: "pax-path-overrides-header", member: "../../../sentinel/x", archive: func(t *testing.T, _ string) []byte {
			return (&rawTar{}).pax("path=../../../sentinel/x").file("innocent", "x").end()
		}},
		{name: "pax-linkpath-overrides-header", member: "l", archive: func(t *testing.T, s string) []byte {
			return (&rawTar{}).pax("linkpath="+s).header(ustarMagic, "l", tar.TypeSymlink, 0, "harmless", 0o777).end()
		}},

		// Other packages and bin/.
		{name: "into-other-package-dotdot", member: "../base/bin/hello", archive: func(t *testing.T, _ string) []byte {
			return pax(t, tf("../base/bin/hello", "#!/bin/sh\necho owned\n"))
		}},
		{name: "into-other-package-symlink", member: "b", archive: func(t *testing.T, _ string) []byte {
			return pax(t, tl("b", "../base"), tf("b/bin/hello", "owned"))
		}},
		{name: "bin-symlink-escape", member: "bin/tool", archive: func(t *testing.T, _ string) []byte {
			return pax(t, td("bin/"), tl("bin/tool", "../../base/bin/hello"))
		}, meta: func(p *repo.Package) { p.Bin = testrepo.Commands("bin/tool") }},
		{name: "bin-taken", archive: func(t *testing.T, _ string) []byte { return pax(t, td("bin/"), tf("bin/hello", "owned")) },
			meta: func(p *repo.Package) { p.Bin = testrepo.Commands("bin/hello") }, want: `command "hello" is already provided by package base`, cached: true},
		{name: "bin-directory", archive: func(t *testing.T, _ string) []byte { return pax(t, td("share/"), tf("share/x", "x")) },
			meta: func(p *repo.Package) { p.Bin = testrepo.Commands("share") }, want: `bin "share" is not a file in the package`, cached: true},
	}
}

// TestBreakouts installs each hostile package with the real CLI, next to an installed benign
// package, and checks that pkg refuses it, naming the member, and that nothing changed: no
// file appeared outside the root and the cache (the sentinel directory next to the root
// stays empty), the root's tree and database are as before, and the cache gained no entry.
func TestBreakouts(t *testing.T) {
	for _, bc := range breakoutCases() {
		t.Run(bc.name, func(t *testing.T) {
			base := t.TempDir()
			sentinel := filepath.Join(base, "sentinel")
			if err := os.Mkdir(sentinel, 0o755); err != nil {
				t.Fatal(err)
			}
			e := newEnv(t, base, filepath.Join(base, "repo"))
			addHostile(t, base, repo.Package{Name: "base", Version: "1.0", Bin: testrepo.Commands("bin/hello")},
				pax(t, td("bin/"), moded(tf("bin/hello", "#!/bin/sh\necho hello\n"), 0o755), tl("lib", "bin")))
			p := repo.Package{Name: "evil", Version: "1.0"}
			if bc.meta != nil {
				bc.meta(&p)
			}
			addHostile(t, base, p, bc.archive(t, sentinel))
			e.ok("install", "base")

			outside, root, cache, records := testfs.Tree(t, base, "root", "cache"), rootTree(t, e.root), testfs.Tree(t, filepath.Join(e.cache, "tars")), dbState(t, e)
			out, stderr, code := e.pkg("install", "evil")
			want := bc.want
			if want == "" {
				name := strings.ReplaceAll(bc.member, "SENTINEL", sentinel)
				if want = "member " + termtext.Quote(name); len(name) > 200 { // errors show the start of a long name
					want = "member " + termtext.Quote(name[:200]) + fmt.Sprintf("… (%d bytes)", len(name))
				}
			}
			if code == 0 || !strings.Contains(stderr, want) {
				t.Errorf("install evil: exit %d, stderr:\n%s\nwant a failure naming %s\nstdout:\n%s", code, stderr, want, out)
			}
			if ents, err := os.ReadDir(sentinel); err != nil || len(ents) != 0 {
				t.Errorf("sentinel directory next to the root: %v, %v", ents, err)
			}
			testfs.SameTree(t, "outside root and cache", testfs.Tree(t, base, "root", "cache"), outside)
			testfs.SameTree(t, "root", rootTree(t, e.root), root)
			if !bc.cached {
				testfs.SameTree(t, "cache", testfs.Tree(t, filepath.Join(e.cache, "tars")), cache)
			}
			if got := dbState(t, e); got != records {
				t.Errorf("database changed:\n got %s\nwant %s", got, records)
			}
			if got := names(t, filepath.Join(e.cache, "tmp")); got != "" {
				t.Errorf("cache tmp: %s", got)
			}
		})
	}
	if n := len(breakoutCases()); n < 40 {
		t.Errorf("%d hostile archives, want at least 40", n)
	}
}

// TestFoldedNames adds and installs, with the real CLI, a package whose names differ only in
// case or Unicode normalization, as the Linux source tree's do, in a root whose directories
// do not fold names: each is its own file, and nothing is written through a symlink whose
// name folds to a directory's.
func TestFoldedNames(t *testing.T) {
	base := t.TempDir()
	e := newEnv(t, base, filepath.Join(base, "repo"))
	archive := filepath.Join(base, "kernel.tar")
	files := map[string]string{"n/xt_CONNMARK.h": "upper", "n/xt_connmark.h": "lower", "caf\u00e9": "nfc", "cafe\u0301": "nfd", "d/x": "x"}
	tar := pax(t, td("n/"), tf("n/xt_CONNMARK.h", "upper"), tf("n/xt_connmark.h", "lower"),
		tf("caf\u00e9", "nfc"), tf("cafe\u0301", "nfd"), tl("D", "n"), tf("d/x", "x"))
	if err := os.WriteFile(archive, tar, 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok("repo", "add", e.repo, archive, "--name", "kernel", "--version", "6.1")
	e.ok("install", "kernel")
	dir := filepath.Join(e.root, "pkgs", "kernel")
	for name, want := range files {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
	if ents, err := os.ReadDir(filepath.Join(dir, "n")); err != nil || len(ents) != 2 {
		t.Errorf("n/ holds %v, %v; want the two headers", ents, err)
	}
}

// addHostile writes archive under base/src and adds it to the repository base/repo as p.
func addHostile(t *testing.T, base string, p repo.Package, archive []byte) {
	t.Helper()
	src := filepath.Join(base, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(src, p.Name+"-"+p.Version+".tar")
	if err := os.WriteFile(file, archive, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Add(t.Context(), filepath.Join(base, "repo"), file, p, false, nil); err != nil {
		t.Fatal(err)
	}
}

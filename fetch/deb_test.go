package fetch

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"

	"pkg/internal/testfs"
	"pkg/tarutil"
)

// writeTree writes, under dir, files of every kind a package may hold: an executable, a
// plain file, one big enough to be aligned, an empty directory and a symlink.
func writeTree(t *testing.T, dir string) {
	t.Helper()
	for _, f := range []struct {
		name string
		mode fs.FileMode
		data string
	}{
		{"usr/bin/hello", 0o755, "#!/bin/sh\necho hello\n"},
		{"usr/share/doc/hello/README", 0o644, "says hello\n"},
		{"usr/share/hello/big", 0o644, strings.Repeat("0123456789abcdef", 1000)},
	} {
		p := filepath.Join(dir, f.name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.data), f.mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, f.mode) // past the umask
	}
	if err := os.MkdirAll(filepath.Join(dir, "var/lib/hello"), 0o750); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(dir, "var/lib/hello"), 0o750)
	if err := os.Symlink("../share/hello/big", filepath.Join(dir, "usr/bin/big")); err != nil {
		t.Fatal(err)
	}
}

const debControl = `Package: hello
Version: 1.2.0-1
Architecture: all
Maintainer: Nobody <nobody@example.com>
Depends: libc6 (>= 2.34),
 libgreet1 | libgreet2
Description: says hello
 A longer description
 over two lines.
`

// buildDeb builds a .deb of writeTree's files with dpkg-deb, compressing its members
// with comp, and returns its path.
func buildDeb(t *testing.T, comp string) string {
	t.Helper()
	testfs.NeedTools(t, "dpkg-deb")
	base := t.TempDir()
	tree := filepath.Join(base, "hello")
	writeTree(t, tree)
	if err := os.MkdirAll(filepath.Join(tree, "DEBIAN"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "DEBIAN", "control"), []byte(debControl), 0o644); err != nil {
		t.Fatal(err)
	}
	deb := filepath.Join(base, "hello.deb")
	testfs.Run(t, base, "dpkg-deb", "--root-owner-group", "-Z", comp, "--build", tree, deb)
	return deb
}

// membersTree describes members as testfs.Tree describes an extracted tree, the package's
// root left out.
func membersTree(members []tarutil.Member) map[string]string {
	got := map[string]string{}
	for _, m := range members {
		switch m.Type {
		case tar.TypeDir:
			got[m.Name] = fmt.Sprintf("dir %v", m.Mode.Perm())
		case tar.TypeSymlink:
			got[m.Name] = "symlink " + m.Linkname
		default:
			got[m.Name] = fmt.Sprintf("file %v %s", m.Mode.Perm(), hex.EncodeToString(m.SHA256[:8]))
		}
	}
	return got
}

// extracted describes the tree a tool extracts into dir, its root left out.
func extracted(t *testing.T, dir string) map[string]string {
	tree := testfs.Tree(t, dir)
	delete(tree, ".")
	return tree
}

// TestDebFormats reads .debs made by dpkg-deb with each compression it offers, as an
// install and repo add do, and compares the members with what dpkg-deb -x extracts.
func TestDebFormats(t *testing.T) {
	for _, comp := range []string{"xz", "zstd", "gzip", "none"} {
		t.Run(comp, func(t *testing.T) {
			deb := buildDeb(t, comp)
			got, err := Inspect(t.Context(), deb)
			if err != nil {
				t.Fatal(err)
			}
			want := &Control{Package: "hello", Version: "1.2.0-1", Architecture: "all", Description: "says hello",
				Relations: map[string]string{"Depends": "libc6 (>= 2.34), libgreet1 | libgreet2"}}
			if !reflect.DeepEqual(got.Control, want) {
				t.Errorf("control: got %+v, want %+v", got.Control, want)
			}
			dir := t.TempDir()
			testfs.Run(t, dir, "dpkg-deb", "-x", deb, dir)
			testfs.SameTree(t, "members of "+comp+" .deb", membersTree(got.Members), extracted(t, dir))
		})
	}
}

// arMember is a member of a hand-made ar archive; size, if not 0, is what its header declares.
type arMember struct {
	name string
	data []byte
	size int
}

// arArchive writes members as an ar archive.
func arArchive(members ...arMember) []byte {
	b := bytes.NewBufferString(arMagic)
	for _, m := range members {
		size := m.size
		if size == 0 {
			size = len(m.data)
		}
		fmt.Fprintf(b, "%-16s%-12d%-6d%-6d%-8o%-10d`\n", m.name, 1700000000, 0, 0, 0o100644, size)
		b.Write(m.data)
		if len(m.data)%2 == 1 {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// TestDebRefused checks that .debs pkg cannot install are refused, naming the member, and
// that a hand-made one, with an odd-sized member and members pkg ignores, is read.
func TestDebRefused(t *testing.T) {
	files := []file{{"usr/bin/hello", []byte("#!/bin/sh\n")}, {"usr/share/big", bytes.Repeat([]byte("x"), 9000)}}
	data := gzipped(t, makeTar(t, files))
	control := gzipped(t, makeTar(t, []file{{"./control", []byte("Package: hello\nVersion: 1\n")}}))
	plain := makeTar(t, files)
	bin := arMember{"debian-binary", []byte("2.0\n"), 0}
	ctl := arMember{"control.tar.gz", control, 0}
	tests := []struct {
		name    string
		deb     []byte
		member  string // the member the error names, "" for the archive
		why     error  // its reason; nil for none, or any when member is set
		members int
	}{
		{"valid", arArchive(bin, arMember{"_extra", []byte("odd"), 0}, ctl, arMember{"data.tar.gz/", data, 0}, arMember{"_sig", nil, 0}), "", nil, 5},
		{"valid plain", arArchive(bin, ctl, arMember{"data.tar", plain, 0}), "", nil, 5},
		{"no data", arArchive(bin, ctl), "", errDebNoData, 0},
		{"second data", arArchive(bin, ctl, arMember{"data.tar.gz", data, 0}, arMember{"data.tar.xz", data, 0}), "data.tar.xz", errDebSecond, 0},
		{"lzma", arArchive(bin, ctl, arMember{"data.tar.lzma", data, 0}), "data.tar.lzma", errDebCompression, 0},
		{"control compression", arArchive(bin, arMember{"control.tar.Z", control, 0}, arMember{"data.tar.gz", data, 0}), "control.tar.Z", errDebCompression, 0},
		{"data over its size", arArchive(bin, ctl, arMember{"data.tar.gz", data, len(data) - 100}), "data.tar.gz", errDebCutShort, 0},
		{"plain data over its size", arArchive(bin, ctl, arMember{"data.tar", plain, len(plain) - 1024}), "data.tar", nil, 0},
		{"data under its size", arArchive(bin, ctl, arMember{"data.tar.gz", data, len(data) + 100}), "data.tar.gz", tarutil.ErrTruncated, 0},
		{"after the stream", arArchive(bin, ctl, arMember{"data.tar.gz", append(bytes.Clone(data), 0, 0), 0}), "data.tar.gz", errDebCutShort, 0},
		{"format 3", arArchive(arMember{"debian-binary", []byte("3.0\n"), 0}, ctl, arMember{"data.tar.gz", data, 0}), "debian-binary", errDebFormat, 0},
		{"no debian-binary", arArchive(ctl, arMember{"data.tar.gz", data, 0}), "", errDebFirst, 0},
		{"data first", arArchive(bin, arMember{"data.tar.gz", data, 0}, ctl), "data.tar.gz", errDebOrder, 0},
		{"stranger", arArchive(bin, ctl, arMember{"evil", nil, 0}, arMember{"data.tar.gz", data, 0}), "evil", errDebStranger, 0},
		{"bad size", bytes.Replace(arArchive(bin, ctl, arMember{"data.tar.gz", data, 0}), []byte(fmt.Sprintf("%-10d`", len(data))), []byte("-1        `"), 1),
			"data.tar.gz", errDebSize, 0},
		{"truncated header", arArchive(bin, ctl)[:len(arArchive(bin))+30], "debian-binary", tarutil.ErrTruncated, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := convert(io.Discard, bytes.NewReader(tt.deb), conversion{})
			refused := tt.member != "" || tt.why != nil
			var de *debError
			switch {
			case !refused && err != nil:
				t.Fatalf("convert: %v", err)
			case !refused:
				if len(st.Members) != tt.members {
					t.Errorf("%d members, want %d: %+v", len(st.Members), tt.members, st.Members)
				}
			case !errors.Is(err, errDeb) || !errors.As(err, &de) || de.member != tt.member || tt.why != nil && !errors.Is(err, tt.why):
				t.Errorf("convert: %#v\nwant errDeb of member %q for %v", err, tt.member, tt.why)
			case strings.Count(err.Error(), "deb member") > 1:
				t.Errorf("convert: %v names the member twice", err)
			}
		})
	}
}

// TestDebAfterStream refuses a data member with bytes after its compressed tar, in each
// compression: its decompressor reads the member to its end, past the 64 KiB the member's
// buffer holds, and refuses what follows its stream.
func TestDebAfterStream(t *testing.T) {
	plain := makeTar(t, []file{{"usr/share/big", bytes.Repeat([]byte("x"), 9000)}})
	var zs bytes.Buffer
	zw, _ := zstd.NewWriter(&zs)
	zw.Write(plain)
	zw.Close()
	control := gzipped(t, makeTar(t, []file{{"./control", []byte("Package: hello\nVersion: 1\n")}}))
	for ext, data := range map[string][]byte{
		".gz": gzipped(t, plain), ".zst": zs.Bytes(), ".xz": xzStream(t, plain, 1<<20, xz.CRC64),
	} {
		member := append(bytes.Clone(data), bytes.Repeat([]byte("x"), 100)...)
		deb := arArchive(arMember{"debian-binary", []byte("2.0\n"), 0}, arMember{"control.tar.gz", control, 0}, arMember{"data.tar" + ext, member, 0})
		_, err := convert(io.Discard, bytes.NewReader(deb), conversion{})
		if de := (*debError)(nil); !errors.As(err, &de) || de.member != "data.tar"+ext || !errors.Is(err, errDeb) {
			t.Errorf("%s with 100 bytes after its stream: %v, want ErrDeb naming the member", ext, err)
		}
	}
}

// TestDebControlRefused: repo add needs the control file; a .deb without one is refused.
func TestDebControlRefused(t *testing.T) {
	data := gzipped(t, makeTar(t, []file{{"a", []byte("a")}}))
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(makeTar(t, []file{{"./md5sums", nil}}))
	zw.Close()
	deb := arArchive(arMember{"debian-binary", []byte("2.0\n"), 0}, arMember{"control.tar.gz", b.Bytes(), 0}, arMember{"data.tar.gz", data, 0})
	var ctl *Control
	_, err := convert(io.Discard, bytes.NewReader(deb), conversion{control: &ctl})
	if de := (*debError)(nil); !errors.As(err, &de) || de.member != "control.tar.gz" || !errors.Is(err, errDebNoControl) || !errors.Is(err, errDeb) {
		t.Errorf("convert: %v, want errDebNoControl of control.tar.gz", err)
	}
}

// linkTar writes a tar of members "NAME" (a directory when it ends in "/", else a file)
// and "NAME -> TARGET" (a symlink), in the order given.
func linkTar(t *testing.T, members ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, m := range members {
		h := &tar.Header{Name: m, Typeflag: tar.TypeReg, Mode: 0o644, ModTime: time.Unix(1700000000, 0)}
		if name, target, ok := strings.Cut(m, " -> "); ok {
			h.Name, h.Typeflag, h.Linkname, h.Mode = name, tar.TypeSymlink, target, 0o777
		} else if strings.HasSuffix(m, "/") {
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// debOf wraps a data tar as a .deb.
func debOf(t *testing.T, data []byte) []byte {
	control := gzipped(t, makeTar(t, []file{{"./control", []byte("Package: hello\nVersion: 1\n")}}))
	return arArchive(arMember{"debian-binary", []byte("2.0\n"), 0}, arMember{"control.tar.gz", control, 0}, arMember{"data.tar.gz", gzipped(t, data), 0})
}

// TestDebAbsoluteLinks: a .deb's absolute symlinks into a top-level directory the package
// installs, listed before or after the link (members are not sorted in every .deb), are
// made relative to the link's directory, in the members and in the index alike; one into
// a directory the package does not install is refused naming the link, as is any absolute
// symlink of a plain tar.
func TestDebAbsoluteLinks(t *testing.T) {
	tests := []struct {
		name    string
		members []string
		want    map[string]string // link → its target once converted
		refused string            // the link refused, or ""
	}{
		{"python", []string{"./", "./usr/lib/python3.11/sitecustomize.py -> /etc/python3.11/sitecustomize.py", "./etc/python3.11/sitecustomize.py"},
			map[string]string{"usr/lib/python3.11/sitecustomize.py": "../../../etc/python3.11/sitecustomize.py"}, ""},
		{"libc6", []string{"./", "./lib64/", "./lib64/ld-linux-x86-64.so.2 -> /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "./lib/", "./lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"},
			map[string]string{"lib64/ld-linux-x86-64.so.2": "../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"}, ""},
		{"same tree", []string{"usr/lib/go/src -> /usr/share/go/src", "usr/share/go/src/", "usr/bin/up -> /usr//./bin/", "usr/bin/here -> /usr/bin"},
			map[string]string{"usr/lib/go/src": "../../share/go/src", "usr/bin/up": "./", "usr/bin/here": "."}, ""},
		{"top link", []string{"usr/", "lnk -> /usr"}, map[string]string{"lnk": "usr"}, ""},
		{"not installed", []string{"./usr/bin/tool", "./usr/bin/sh -> /bin/sh"}, nil, "./usr/bin/sh"},
		{"top is a file", []string{"opt", "usr/x -> /opt/y"}, nil, "usr/x"},
		{"top is a link", []string{"lib -> usr/lib", "usr/lib/a", "lib64/b -> /lib/a"}, nil, "lib64/b"},
		{"dot-dot", []string{"usr/lib/a", "usr/bin/x -> /usr/lib/../lib/a"}, nil, "usr/bin/x"},
		{"root", []string{"usr/bin/x -> /"}, nil, "usr/bin/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var idx bytes.Buffer
			var tarBuf bytes.Buffer
			st, err := convert(&tarBuf, bytes.NewReader(debOf(t, linkTar(t, tt.members...))), conversion{})
			var me *tarutil.MemberError
			if tt.refused != "" {
				if !errors.As(err, &me) || me.Name != tt.refused || !errors.Is(err, tarutil.ErrSymlinkEscape) {
					t.Fatalf("convert: %v, want a *tarutil.MemberError of %s for ErrSymlinkEscape", err, tt.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := convert(io.Discard, bytes.NewReader(debOf(t, linkTar(t, tt.members...))), conversion{idx: &idx}); err != nil {
				t.Fatal(err)
			}
			indexed, err := tarutil.ReadIndex(bytes.NewReader(idx.Bytes()), int64(idx.Len()), int64(tarBuf.Len()))
			if err != nil {
				t.Fatal(err)
			}
			scanned, err := tarutil.Scan(bytes.NewReader(tarBuf.Bytes()))
			if err != nil {
				t.Fatalf("scan of the aligned tar: %v", err)
			}
			for what, members := range map[string][]tarutil.Member{"members": st.Members, "index": indexed, "aligned tar": scanned} {
				got := map[string]string{}
				for _, m := range members {
					if m.Type == tar.TypeSymlink {
						got[m.Name] = m.Linkname
					}
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%s: links %q, want %q", what, got, tt.want)
				}
			}
		})
	}
	plain := linkTar(t, "etc/x", "usr/x -> /etc/x")
	if _, err := convert(io.Discard, bytes.NewReader(plain), conversion{}); !errors.Is(err, tarutil.ErrSymlinkEscape) {
		t.Errorf("convert of a plain tar with an absolute symlink: %v, want ErrSymlinkEscape", err)
	}
}

// TestTopOf checks the first component of member names as tars spell them.
func TestTopOf(t *testing.T) {
	for _, tt := range []struct {
		name   string
		top    string
		nested bool
	}{
		{"./usr/bin/x", "usr", true}, {"usr/", "usr", true}, {"lib64", "lib64", false}, {"/.//etc/x", "etc", true},
		{".hidden/x", ".hidden", true}, {"./", "", false}, {".", ".", false},
	} {
		if top, nested := topOf(tt.name); top != tt.top || nested != tt.nested {
			t.Errorf("topOf(%q) = %q, %v; want %q, %v", tt.name, top, nested, tt.top, tt.nested)
		}
	}
}

// FuzzRelativeTarget: a target made relative leads, from the link's directory, where the
// absolute one led, and never starts at "/".
func FuzzRelativeTarget(f *testing.F) {
	f.Add("usr/lib/python3.11/sitecustomize.py", "/etc/python3.11/sitecustomize.py")
	f.Add("lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2")
	f.Add("usr/bin/x", "/usr/bin/")
	f.Fuzz(func(t *testing.T, name, target string) {
		name = path.Clean("/" + name)[1:]
		if name == "" || !strings.HasPrefix(target, "/") {
			return
		}
		rel, top, ok := relativeTarget(name, target)
		if !ok {
			return
		}
		want := path.Clean(target)
		if got := path.Clean("/" + path.Join(path.Dir(name), rel)); strings.HasPrefix(rel, "/") || got != want || !strings.HasPrefix(want, "/"+top) {
			t.Fatalf("relativeTarget(%q, %q) = %q, %q: leads to %s, want %s", name, target, rel, top, got, want)
		}
	})
}

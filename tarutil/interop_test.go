package tarutil

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tool returns the path of an external tool, skipping the test when it is
// missing, unless CI=true.
func tool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required in CI: %v", name, err)
		}
		t.Skipf("%s not found", name)
	}
	return p
}

// run runs a command in dir and fails on an error or any output on stderr.
// It runs in a UTF-8 locale: libarchive converts pax paths, which are UTF-8,
// to the locale's charset, and fails on non-ASCII ones in the C locale.
func run(t testing.TB, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.Bytes())
	}
}

// node is one file of a tree, as compared across extractions.
type node struct {
	typ  byte // tar type flag; hardlinks show as the regular files they are
	mode fs.FileMode
	sum  [32]byte
	link string
}

// tree is a directory tree by slash-separated relative name, with groups of
// names that must be the same file.
type tree struct {
	nodes map[string]node
	links [][]string
}

// readTree reads the tree under dir through os.Root, so names longer than
// PATH_MAX from the test's working directory still resolve.
func readTree(t *testing.T, dir string) tree {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	tr := tree{nodes: map[string]node{}}
	inodes := map[uint64][]string{}
	walkRoot(t, root, "", tr.nodes, inodes)
	for _, names := range inodes {
		if len(names) > 1 {
			slices.Sort(names)
			tr.links = append(tr.links, names)
		}
	}
	slices.SortFunc(tr.links, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return tr
}

func walkRoot(t *testing.T, root *os.Root, prefix string, nodes map[string]node, inodes map[uint64][]string) {
	t.Helper()
	f, err := root.Open(".")
	if err != nil {
		t.Fatal(err)
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		fi, err := root.Lstat(name)
		if err != nil {
			t.Fatal(err)
		}
		rel := prefix + name
		n := node{mode: fi.Mode().Perm()}
		switch {
		case fi.IsDir():
			n.typ = tar.TypeDir
			sub, err := root.OpenRoot(name)
			if err != nil {
				t.Fatal(err)
			}
			walkRoot(t, sub, rel+"/", nodes, inodes)
			sub.Close()
		case fi.Mode()&fs.ModeSymlink != 0:
			n = node{typ: tar.TypeSymlink}
			if n.link, err = root.Readlink(name); err != nil {
				t.Fatal(err)
			}
		case fi.Mode().IsRegular():
			n.typ = tar.TypeReg
			data, err := root.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			n.sum = sha256.Sum256(data)
			ino := fi.Sys().(*syscall.Stat_t).Ino
			inodes[ino] = append(inodes[ino], rel)
		default:
			t.Fatalf("%s: unexpected file type %v", rel, fi.Mode())
		}
		nodes[rel] = n
	}
}

// tarTree is the tree archive/tar reads from an archive: what any tar
// should extract from it.
func tarTree(t *testing.T, b []byte) tree {
	tr := tree{nodes: map[string]node{}}
	groups := map[string][]string{}
	for _, m := range readTar(t, b) {
		name := strings.TrimSuffix(m.hdr.Name, "/")
		n := node{typ: m.hdr.Typeflag, mode: fs.FileMode(m.hdr.Mode).Perm()}
		switch n.typ {
		case tar.TypeReg:
			n.sum = m.sum
		case tar.TypeSymlink:
			n = node{typ: tar.TypeSymlink, link: m.hdr.Linkname}
		case tar.TypeLink:
			n = tr.nodes[m.hdr.Linkname]
			groups[m.hdr.Linkname] = append(groups[m.hdr.Linkname], name)
		}
		tr.nodes[name] = n
	}
	for target, names := range groups {
		names = append(names, target)
		slices.Sort(names)
		tr.links = append(tr.links, names)
	}
	slices.SortFunc(tr.links, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return tr
}

func compareTrees(t *testing.T, got, want tree) {
	t.Helper()
	for name, w := range want.nodes {
		if g, ok := got.nodes[name]; !ok {
			t.Errorf("%.80s: missing", name)
		} else if g != w {
			t.Errorf("%.80s: got %+v, want %+v", name, g, w)
		}
	}
	for name := range got.nodes {
		if _, ok := want.nodes[name]; !ok {
			t.Errorf("%.80s: unexpected", name)
		}
	}
	if !slices.EqualFunc(got.links, want.links, slices.Equal) {
		t.Errorf("hardlinked names %q, want %q", got.links, want.links)
	}
}

// extract extracts the archive b with a tar tool and returns the tree.
func extract(t *testing.T, toolPath string, b []byte) tree {
	t.Helper()
	dir := t.TempDir()
	name := filepath.Join(t.TempDir(), "aligned.tar")
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, toolPath, "-xpf", name)
	return readTree(t, dir)
}

// TestInterop extracts aligned archives with GNU tar and bsdtar, which must
// extract what archive/tar reads, silently.
func TestInterop(t *testing.T) {
	for _, name := range []string{"tar", "bsdtar"} {
		t.Run(name, func(t *testing.T) {
			p := tool(t, name)
			for _, tc := range alignCases(t) {
				if tc.name == "mtimes" && name == "tar" {
					continue // GNU tar warns about times before 1970 and in the future, rightly
				}
				t.Run(tc.name, func(t *testing.T) {
					out := roundTrip(t, tc.in)
					compareTrees(t, extract(t, p, out), tarTree(t, out))
				})
			}
		})
	}
}

// sourceTree writes a small tree of every allowed kind of member, with a
// name longer than ustar can hold when long is set.
func sourceTree(t testing.TB, long bool) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"a/b/c", "empty-dir"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := []struct {
		name string
		size int
		mode fs.FileMode
	}{
		{"small.txt", 10, 0o644}, {"exact.bin", 4096, 0o600}, {"big.bin", 100000, 0o755},
		{"empty", 0, 0o644}, {"odd.bin", 4097, 0o640}, {"a/b/c/deep.txt", 5000, 0o444},
	}
	if long {
		files = append(files, struct {
			name string
			size int
			mode fs.FileMode
		}{path.Join("long", long1, long2), 6000, 0o644})
		if err := os.MkdirAll(filepath.Join(dir, "long", long1), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		writeFile(t, filepath.Join(dir, f.name), content(f.name, f.size), f.mode)
	}
	for link, target := range map[string]string{"a/link": "b/c/deep.txt", "top": "a", "a/b/up": "../../small.txt"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(dir, "big.bin"), filepath.Join(dir, "a/hard")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// pack archives src with a tool and returns the archive.
func pack(t testing.TB, src, toolName string, args ...string) []byte {
	t.Helper()
	p := tool(t, toolName)
	name := filepath.Join(t.TempDir(), "in.tar")
	args = slices.Clone(args)
	for i, a := range args {
		args[i] = strings.NewReplacer("OUT", name, "SRC", src).Replace(a)
	}
	run(t, src, p, args...)
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const pythonPack = `import sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    t.add(sys.argv[2], arcname=".")`

// toolArchives are the archives real tools make of sourceTree, each with its provenance;
// TestToolArchives converts them and the fuzzers start from them.
var toolArchives = []struct {
	name string
	long bool
	tool string
	args []string
}{
	// GNU tar's own format: "./" names, ././@LongLink for long names.
	{"gnu-tar-gnu", true, "tar", []string{"--format=gnu", "-cf", "OUT", "."}},
	// POSIX pax from GNU tar: PaxHeaders.N entries with mtime, atime and ctime records.
	{"gnu-tar-pax", true, "tar", []string{"--format=pax", "-cf", "OUT", "."}},
	// Plain ustar: no long names possible.
	{"gnu-tar-ustar", false, "tar", []string{"--format=ustar", "-cf", "OUT", "."}},
	// libarchive's default, restricted pax: ustar unless a field needs pax.
	{"bsdtar", true, "bsdtar", []string{"-cf", "OUT", "."}},
	// Python's tarfile, pax format, members listed in sorted order.
	{"python-tarfile", true, "python3", []string{"-c", pythonPack, "OUT", "SRC"}},
}

// toolPresent reports whether a tool is installed, for seeding fuzzers where it is.
func toolPresent(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

// TestToolArchives aligns archives the real tools write and extracts the
// result with GNU tar, which must give back the source tree.
func TestToolArchives(t *testing.T) {
	for _, tt := range toolArchives {
		t.Run(tt.name, func(t *testing.T) {
			src := sourceTree(t, tt.long)
			in := pack(t, src, tt.tool, tt.args...)
			out := roundTrip(t, in)
			compareTrees(t, extract(t, tool(t, "tar"), out), readTree(t, src))
		})
	}
}

// TestToolRefused aligns archives in which GNU tar stored members the policy
// refuses.
func TestToolRefused(t *testing.T) {
	tests := []struct {
		name   string
		make   func(t *testing.T, dir string) // adds the refused member "x"
		args   []string
		member string
		err    error
	}{
		{"fifo", func(t *testing.T, dir string) { must(t, syscall.Mkfifo(filepath.Join(dir, "x"), 0o644)) },
			[]string{"--format=pax"}, "./x", ErrType},
		{"gnu-sparse", sparseFile, []string{"--format=gnu", "--sparse"}, "./x", ErrSparse},
		{"pax-sparse", sparseFile, []string{"--format=pax", "--sparse"}, "./x", ErrSparse},
		{"setuid", func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "x"), nil, fs.ModeSetuid|0o755) },
			[]string{"--format=gnu"}, "./x", ErrSpecialBits},
		{"symlink-escape", func(t *testing.T, dir string) { must(t, os.Symlink("../../etc/passwd", filepath.Join(dir, "x"))) },
			[]string{"--format=gnu"}, "./x", ErrSymlinkEscape},
		{"xattr", xattrFile, []string{"--format=pax", "--xattrs"}, "./x", ErrXattr},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := t.TempDir()
			tt.make(t, src)
			in := pack(t, src, "tar", append(tt.args, "-cf", "OUT", ".")...)
			_, err := Align(&bytes.Buffer{}, bytes.NewReader(in), Limits{})
			wantRefused(t, err, tt.member, tt.err)
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// sparseFile writes a 1 MiB file "x" of one hole and one byte.
func sparseFile(t *testing.T, dir string) {
	f, err := os.Create(filepath.Join(dir, "x"))
	must(t, err)
	_, err = f.WriteAt([]byte{1}, 1<<20-1)
	must(t, err)
	must(t, f.Close())
}

// xattrFile writes a file "x" with a user extended attribute.
func xattrFile(t *testing.T, dir string) {
	name := filepath.Join(dir, "x")
	writeFile(t, name, []byte("x"), 0o644)
	if err := syscall.Setxattr(name, "user.test", []byte("1"), 0); err != nil {
		t.Skipf("file system without user xattrs: %v", err)
	}
}

// TestDirectoryAfterItsFiles converts an archive that lists a directory after its files,
// as find -depth does, and repeats one with another mode: the member list, Scan of the
// output and GNU tar's extraction of it all give each directory the mode and time of its
// last entry, as tar extracting the input does.
func TestDirectoryAfterItsFiles(t *testing.T) {
	gnu := tool(t, "tar")
	later := testTime.Add(time.Hour)
	secret := withMode(dir("secret/"), 0o700)
	secret.hdr.ModTime = later
	in := makeTar(t, tar.FormatPAX, file("secret/f", 1), secret, dir("open/"), withMode(dir("open/"), 0o750))
	var out bytes.Buffer
	st, err := Align(&out, bytes.NewReader(in), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]fs.FileMode{"secret": 0o700, "open": 0o750}
	for _, m := range st.Members {
		if mode, ok := want[m.Name]; ok && (m.Mode != mode || m.Name == "secret" && m.MTime != later.Unix()) {
			t.Errorf("member %s: mode %v, time %d; want %v", m.Name, m.Mode, m.MTime, mode)
		}
	}
	scanned, err := Scan(bytes.NewReader(out.Bytes()))
	if err != nil || !slices.EqualFunc(scanned, st.Members, func(a, b Member) bool {
		return a.Name == b.Name && a.Mode == b.Mode && a.MTime == b.MTime
	}) {
		t.Errorf("Scan: %+v, %v; want %+v", scanned, err, st.Members)
	}
	dst := t.TempDir()
	archive := filepath.Join(t.TempDir(), "out.tar")
	if err := os.WriteFile(archive, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dst, gnu, "-xf", archive)
	for name, mode := range want {
		if info, err := os.Stat(filepath.Join(dst, name)); err != nil {
			t.Error(err)
		} else if info.Mode().Perm() != mode {
			t.Errorf("GNU tar extracted %s with mode %v; want %v", name, info.Mode().Perm(), mode)
		}
	}
}

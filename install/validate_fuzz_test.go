package install

import (
	"archive/tar"
	"bytes"
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pkg/tarutil"
)

// fuzzElems are the path components FuzzValidate builds names and link targets from: plain
// names, a case pair, NFC and NFD forms of é, KELVIN SIGN and k, "." and "..", and "" (which
// makes "//" and leading or trailing slashes).
var fuzzElems = []string{"a", "b", "A", "l", ".", "..", "", "\u00e9", "e\u0301", "k", "\u212a", "x"}

// fuzzBytes hands out the fuzzer's bytes, then zeros.
type fuzzBytes []byte

func (f *fuzzBytes) next() int {
	if len(*f) == 0 {
		return 0
	}
	c := (*f)[0]
	*f = (*f)[1:]
	return int(c)
}

func (f *fuzzBytes) path() string {
	parts := make([]string, 1+f.next()%4)
	for i := range parts {
		parts[i] = fuzzElems[f.next()%len(fuzzElems)]
	}
	p := strings.Join(parts, "/")
	switch f.next() % 8 {
	case 5:
		p = "/" + p
	case 6:
		p += "/"
	case 7:
		p = "./" + p
	}
	return p
}

// seedPath encodes a path for fuzzBytes.path: its components, then how it is decorated
// (5 absolute, 6 trailing slash, 7 "./" prefix, else plain).
func seedPath(decor int, elems ...string) []byte {
	b := []byte{byte(len(elems) - 1)}
	for _, e := range elems {
		b = append(b, byte(slices.Index(fuzzElems, e)))
	}
	return append(b, byte(decor))
}

// seedArchive encodes members for fuzzArchive, each a type (0 file, 1 directory, 2 symlink,
// 3 hardlink) followed by its path and its type's bytes.
func seedArchive(members ...[]byte) []byte {
	b := []byte{byte(len(members))}
	for _, m := range members {
		b = append(b, m...)
	}
	return b
}

func seedMember(typ byte, parts ...[]byte) []byte {
	return append([]byte{typ}, slices.Concat(parts...)...)
}

// fuzzArchive derives a tar of up to 12 members from in: files (some large enough to be
// cloned), directories (some read-only), symlinks and hardlinks, to earlier members or not.
func fuzzArchive(in []byte) ([]byte, bool) {
	f := fuzzBytes(in)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	var names []string
	for range f.next() % 13 {
		typ := f.next() % 4
		h := &tar.Header{Name: f.path(), Mode: 0o644, Format: tar.FormatPAX}
		var data []byte
		switch typ {
		case 0:
			h.Typeflag = tar.TypeReg
			data = bytes.Repeat([]byte{byte(len(names))}, f.next()%8)
			if f.next()%16 == 15 {
				data = bytes.Repeat([]byte{'x'}, tarutil.Alignment+100)
			}
			h.Size = int64(len(data))
		case 1:
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
			if f.next()%4 == 3 {
				h.Mode = 0o555
			}
		case 2:
			h.Typeflag, h.Linkname = tar.TypeSymlink, f.path()
		case 3:
			h.Typeflag, h.Linkname = tar.TypeLink, f.path()
			if k := f.next(); k%2 == 1 && len(names) > 0 {
				h.Linkname = names[k/2%len(names)]
			}
		}
		if tw.WriteHeader(h) != nil {
			return nil, false
		}
		tw.Write(data)
		names = append(names, h.Name)
	}
	err := tw.Close()
	return buf.Bytes(), err == nil
}

// FuzzValidate derives member lists from its input and runs them through the member policy
// (tarutil.Align over the archive they make, then tarutil.Validate over what it accepted).
// Every accepted list is staged by the real stager in a fresh directory, and then nothing
// may exist outside that directory, every member must exist with its type, no member's
// path may lead through a symlink, and no symlink may resolve outside the directory.
func FuzzValidate(f *testing.F) {
	file := func(p []byte, size byte) []byte { return seedMember(0, p, []byte{size, 0}) }
	bigFile := func(p []byte) []byte { return seedMember(0, p, []byte{3, 15}) }
	dir := func(p []byte, readOnly bool) []byte {
		return seedMember(1, p, []byte{map[bool]byte{true: 3}[readOnly]})
	}
	symlink := func(p, target []byte) []byte { return seedMember(2, p, target) }
	hardlink := func(p, target []byte, earlier byte) []byte { return seedMember(3, p, target, []byte{earlier}) }
	for _, seed := range [][]byte{
		seedArchive(dir(seedPath(6, "a"), false), file(seedPath(0, "a", "x"), 5), bigFile(seedPath(0, "a", "b")),
			symlink(seedPath(0, "a", "l"), seedPath(0, "x")), hardlink(seedPath(0, "k"), seedPath(0, "a"), 3),
			dir(seedPath(7, "b"), true)),
		seedArchive(symlink(seedPath(0, "l"), seedPath(0, ".")), file(seedPath(0, "l", "x"), 1)),
		seedArchive(symlink(seedPath(0, "l"), seedPath(0, "..", "x")), file(seedPath(0, "x"), 1)),
		seedArchive(file(seedPath(0, "\u00e9"), 1), file(seedPath(0, "e\u0301"), 1)),
		seedArchive(symlink(seedPath(0, "a"), seedPath(0, ".")), symlink(seedPath(0, "b"), seedPath(0, "a", ".."))),
		seedArchive(file(seedPath(0, "a"), 1), file(seedPath(0, "A"), 1), file(seedPath(0, "\u212a"), 1), file(seedPath(0, "k"), 1)),
		seedArchive(file(seedPath(0, "x"), 1), hardlink(seedPath(0, "l"), seedPath(0, "x"), 0), hardlink(seedPath(0, "b"), seedPath(0, "..", "x"), 0)),
		seedArchive(dir(seedPath(0, "a", "b"), true), symlink(seedPath(0, "a", "b", "l"), seedPath(0, "..", "..", "x")), file(seedPath(7, "x"), 2)),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		archive, ok := fuzzArchive(in)
		if !ok {
			return
		}
		var aligned bytes.Buffer
		st, err := tarutil.Align(&aligned, bytes.NewReader(archive), tarutil.Limits{})
		if err != nil {
			return
		}
		if err := tarutil.Validate(st.Members); err != nil {
			t.Fatalf("Align accepted what Validate refuses: %v\n%+v", err, st.Members)
		}
		base := t.TempDir()
		stage, sentinel := filepath.Join(base, "stage"), filepath.Join(base, "sentinel")
		for _, d := range []string{stage, sentinel} {
			if err := os.Mkdir(d, 0o700); err != nil {
				t.Fatal(err)
			}
		}
		src := filepath.Join(base, "src.tar")
		if err := os.WriteFile(src, aligned.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		stageFuzz(t, src, stage, st.Members)
		checkStaged(t, stage, st.Members)
		if got := dirNames(t, base); !slices.Equal(got, []string{"sentinel", "src.tar", "stage"}) {
			t.Errorf("directory around the staging directory holds %q", got)
		}
		if got := dirNames(t, sentinel); len(got) != 0 {
			t.Errorf("sentinel directory holds %q", got)
		}
	})
}

// stageFuzz stages members from the aligned tar src into stage, failing t if it cannot:
// whatever the policy accepts must install.
func stageFuzz(t *testing.T, src, stage string, members []tarutil.Member) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	s, err := stagerAt(context.Background(), f, info.Size(), stage, 0o022)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if err := s.stage(members); err != nil {
		t.Fatalf("stage accepted members: %v\n%+v", err, members)
	}
}

// checkStaged checks the staged tree against the members: the same paths with the same
// types, no member under a symlink, no symlink resolving outside stage.
func checkStaged(t *testing.T, stage string, members []tarutil.Member) {
	t.Helper()
	want := make(map[string]byte, len(members))
	for _, m := range members {
		want[m.Name] = m.Type
	}
	err := filepath.WalkDir(stage, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(stage, p)
		if _, ok := want[filepath.ToSlash(rel)]; !ok && rel != "." {
			t.Errorf("staged %q is no member", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		for dir := path.Dir(m.Name); dir != "."; dir = path.Dir(dir) {
			if info, err := os.Lstat(filepath.Join(stage, dir)); err != nil || !info.IsDir() {
				t.Errorf("member %q: parent %q is not a directory (%v)", m.Name, dir, err)
			}
		}
		info, err := os.Lstat(filepath.Join(stage, m.Name))
		if err != nil {
			t.Errorf("member %q not staged: %v", m.Name, err)
			continue
		}
		if got := fuzzType(info.Mode()); got != m.Type && !(m.Type == tar.TypeLink && got == tar.TypeReg) {
			t.Errorf("member %q of type %c staged as %c", m.Name, m.Type, got)
		}
		if m.Type == tar.TypeSymlink && resolvesOutside(stage, m.Name) {
			t.Errorf("symlink %q -> %q resolves outside the staging directory", m.Name, m.Linkname)
		}
	}
}

func fuzzType(mode fs.FileMode) byte {
	switch {
	case mode.IsDir():
		return tar.TypeDir
	case mode&fs.ModeSymlink != 0:
		return tar.TypeSymlink
	case mode.IsRegular():
		return tar.TypeReg
	}
	return '?'
}

// resolvesOutside resolves rel under root as the kernel would, following symlinks, and
// reports whether it ever climbs above root or meets an absolute target. A loop resolves
// nowhere; a missing component is taken as a directory, which only makes the check stricter.
func resolvesOutside(root, rel string) bool {
	var stack []string
	todo := strings.Split(rel, "/")
	for hops := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(stack) == 0 {
				return true
			}
			stack = stack[:len(stack)-1]
			continue
		}
		stack = append(stack, c)
		p := filepath.Join(append([]string{root}, stack...)...)
		info, err := os.Lstat(p)
		if err != nil || info.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		if hops++; hops > 40 {
			return false
		}
		target, err := os.Readlink(p)
		if err != nil || strings.HasPrefix(target, "/") {
			return true
		}
		stack = stack[:len(stack)-1]
		todo = append(strings.Split(target, "/"), todo...)
	}
	return false
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

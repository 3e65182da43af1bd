package repo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// writeArchive writes data to a file named name in a new directory and returns its path.
func writeArchive(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func readIndexFile(t *testing.T, dir string) *Index {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// checkDir fails unless dir holds exactly names: no temporary files are left behind.
func checkDir(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	slices.Sort(names)
	if !slices.Equal(got, names) {
		t.Errorf("%s holds %q, want %q", dir, got, names)
	}
}

func sum(data string) string {
	h := sha256.Sum256([]byte(data))
	return hex.EncodeToString(h[:])
}

func TestAddCreatesIndex(t *testing.T) {
	dir := t.TempDir()
	const data = "archive bytes"
	src := writeArchive(t, "hello-1.2.0.tar.zst", data)
	p := Package{Name: "hello", Version: "1.2.0", Depends: deps("libgreet>=1.0,<2"), Bin: bins("bin/hello"),
		Summary: "says <hello>", InstalledSize: 40960, Files: 12, Size: 99, SHA256: "stale", Archive: "x"}
	got, err := addUnsigned(dir, src, p)
	if err != nil {
		t.Fatal(err)
	}
	want := p
	want.Archive, want.Size, want.SHA256 = "hello-1.2.0.tar.zst", int64(len(data)), sum(data)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Add:\ngot  %+v\nwant %+v", got, want)
	}
	if ix := readIndexFile(t, dir); !reflect.DeepEqual(ix.Packages, []Package{want}) {
		t.Errorf("index holds %+v, want %+v", ix.Packages, want)
	}
	copied, err := os.ReadFile(filepath.Join(dir, "hello-1.2.0.tar.zst"))
	if err != nil || string(copied) != data {
		t.Errorf("archive copy: got %q, %v; want %q", copied, err, data)
	}
	checkDir(t, dir, "hello-1.2.0.tar.zst", "index.json")
	checkIndexText(t, dir)
}

// checkIndexText checks the index is indented, ends in a newline, does not escape
// constraints and is readable by all.
func checkIndexText(t *testing.T, dir string) {
	t.Helper()
	name := filepath.Join(dir, "index.json")
	text, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(text, []byte("{\n  \"format\": 1,\n")) || !bytes.HasSuffix(text, []byte("}\n")) {
		t.Errorf("index.json is not indented with a trailing newline:\n%s", text)
	}
	if !bytes.Contains(text, []byte(`"libgreet>=1.0,<2"`)) {
		t.Errorf("index.json escapes constraints:\n%s", text)
	}
	if fi, err := os.Stat(name); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("index.json mode: %v, %v; want 0644", fi.Mode(), err)
	}
}

func TestAddVersions(t *testing.T) {
	dir := t.TempDir()
	adds := []struct{ name, version, summary string }{
		{"hello", "1.10", "ten"},
		{"hello", "1.9", "nine"},
		{"abc", "1", "first"},
		{"hello", "1.10", "ten again"}, // replaces
	}
	for _, a := range adds {
		src := writeArchive(t, a.name+"-"+a.version+".tar", a.name+a.version)
		if _, err := addUnsigned(dir, src, Package{Name: a.name, Version: a.version, Summary: a.summary}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, p := range readIndexFile(t, dir).Packages {
		got = append(got, p.Name+" "+p.Version+" "+p.Summary)
	}
	want := []string{"abc 1 first", "hello 1.9 nine", "hello 1.10 ten again"}
	if !slices.Equal(got, want) {
		t.Errorf("index holds %q, want %q", got, want)
	}
	checkDir(t, dir, "abc-1.tar", "hello-1.9.tar", "hello-1.10.tar", "index.json")
}

func TestAddExistingArchive(t *testing.T) {
	dir := t.TempDir()
	inDir := filepath.Join(dir, "a-1.tar")
	if err := os.WriteFile(inDir, []byte("same"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{inDir, writeArchive(t, "a-1.tar", "same")} {
		got, err := addUnsigned(dir, src, Package{Name: "a", Version: "1"})
		if err != nil {
			t.Fatalf("Add(%s): %v", src, err)
		}
		if got.SHA256 != sum("same") {
			t.Errorf("Add(%s): sha256 %s, want %s", src, got.SHA256, sum("same"))
		}
	}
	checkDir(t, dir, "a-1.tar", "index.json")

	// A replaced entry's archive is never overwritten: the new one takes the next name,
	// after the replaced one's, and the replaced one is deleted, so that no name the
	// version's entry had comes back with other bytes. The same bytes keep their name.
	for _, tc := range []struct{ data, src, want string }{
		{"different", "a-1.tar", "a-1-2.tar"},
		{"more", "a-1.tar", "a-1-3.tar"},
		{"different", "a-1.tar", "a-1-4.tar"},
		{"different", "renamed.tgz", "a-1-4.tar"},
		{"same", "a.tgz", "a-1-5.tgz"},
	} {
		before, was := readFiles(t, dir), readIndexFile(t, dir).Packages[0].Archive
		res, err := Add(t.Context(), dir, writeArchive(t, tc.src, tc.data), Package{Name: "a", Version: "1"}, true, nil)
		if err != nil {
			t.Fatalf("Add %s of %q: %v", tc.src, tc.data, err)
		}
		if got := res.Package; got.Archive != tc.want || got.SHA256 != sum(tc.data) {
			t.Errorf("Add %s of %q: archive %s, sha256 %s; want %s, %s", tc.src, tc.data, got.Archive, got.SHA256, tc.want, sum(tc.data))
		}
		deleted := []string{was}
		if was == tc.want {
			deleted = nil
		}
		if len(res.Replaced) != 1 || res.Replaced[0].Archive != was || !slices.Equal(res.Deleted, deleted) {
			t.Errorf("Add %s of %q: replaced %+v, deleted %q; want the entry of %s, %q deleted", tc.src, tc.data, res.Replaced, res.Deleted, was, deleted)
		}
		for name, data := range before {
			if now, err := os.ReadFile(filepath.Join(dir, name)); err == nil && name != indexName && string(now) != data {
				t.Errorf("Add %s of %q: %s now holds %q, not %q", tc.src, tc.data, name, now, data)
			}
		}
		checkDir(t, dir, tc.want, "index.json")
	}
}

// TestAddAfterRemove: nothing records a name whose file is gone: the version replaced,
// removed and added again with other bytes takes NAME-VERSION.EXT, which its first archive
// had (docs/commands.md says so), as a version never added would.
func TestAddAfterRemove(t *testing.T) {
	dir := t.TempDir()
	for _, data := range []string{"one", "two"} {
		if _, err := addUnsigned(dir, writeArchive(t, "a.tar", data), Package{Name: "a", Version: "1"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Remove(t.Context(), dir, Removal{Name: "a"}, nil); err != nil {
		t.Fatal(err)
	}
	got, err := addUnsigned(dir, writeArchive(t, "a.tar", "three"), Package{Name: "a", Version: "1"})
	if err != nil || got.Archive != "a-1.tar" {
		t.Errorf("Add after Remove: %s, %v; want a-1.tar", got.Archive, err)
	}
}

// readFiles returns the contents of the files of dir by name.
func readFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := make(map[string]string)
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(data)
	}
	return files
}

// TestAddReplacedKept: the archive of an entry replaced stays where another entry names
// it, as an index written by hand may.
func TestAddReplacedKept(t *testing.T) {
	dir := t.TempDir()
	if _, err := addUnsigned(dir, writeArchive(t, "a.tar", "one"), Package{Name: "a", Version: "1"}); err != nil {
		t.Fatal(err)
	}
	ix := readIndexFile(t, dir)
	b := ix.Packages[0]
	b.Name = "b"
	ix.Packages = append(ix.Packages, b)
	if err := writeFile(dir, indexName, ix.encode); err != nil {
		t.Fatal(err)
	}
	res, err := Add(t.Context(), dir, writeArchive(t, "a.tar", "two"), Package{Name: "a", Version: "1"}, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Replaced) != 1 || res.Deleted != nil {
		t.Errorf("Add replacing an entry whose archive another names: replaced %+v, deleted %q; want one, none", res.Replaced, res.Deleted)
	}
	checkDir(t, dir, "a-1.tar", "a-1-2.tar", "index.json")
}

// TestAddOwnNames: archives are named by package and version, whatever their publishers
// named them, so two data.tar.xz or two foo.deb do not clash.
func TestAddOwnNames(t *testing.T) {
	dir := t.TempDir()
	adds := []struct{ src, name, version, want string }{
		{"data.tar.xz", "a", "1", "a-1.tar.xz"},
		{"data.tar.xz", "b", "2.0+1", "b-2.0+1.tar.xz"},
		{"foo.deb", "foo", "1.0", "foo-1.0.deb"},
		{"foo.deb", "foo", "1.1", "foo-1.1.deb"},
		{"v1.2.zip", "tool", "1.2", "tool-1.2.zip"},
		{"x.tar.bz2", "x", "3", "x-3.tar.bz2"},
		{"index.json", "y", "1", "y-1.json"},
		{"README", "z", "1", "z-1"},
	}
	var want []string
	for _, a := range adds {
		got, err := addUnsigned(dir, writeArchive(t, a.src, a.name+a.version), Package{Name: a.name, Version: a.version})
		if err != nil || got.Archive != a.want {
			t.Errorf("Add(%s as %s %s): archive %q, %v; want %q", a.src, a.name, a.version, got.Archive, err, a.want)
		}
		want = append(want, a.want)
	}
	for _, p := range readIndexFile(t, dir).Packages {
		if data, err := os.ReadFile(filepath.Join(dir, p.Archive)); err != nil || string(data) != p.Name+p.Version {
			t.Errorf("%s of %s %s holds %q, %v", p.Archive, p.Name, p.Version, data, err)
		}
	}
	checkDir(t, dir, append(want, "index.json")...)
}

func TestAddRefuses(t *testing.T) {
	src := writeArchive(t, "a-1.tar", "x")
	tests := []struct {
		name string
		src  string
		p    Package
		want string
	}{
		{"bad name", src, Package{Name: "A", Version: "1"}, `"A"`},
		{"bad version", src, Package{Name: "a", Version: "one"}, `"a"`},
		{"bad depends", src, Package{Name: "a", Version: "1", Depends: deps("b>>1")}, "a@1"},
		{"bad bin", src, Package{Name: "a", Version: "1", Bin: bins("../sh")}, "a@1"},
		{"negative files", src, Package{Name: "a", Version: "1", Files: -1}, "a@1"},
		{"missing archive", filepath.Join(t.TempDir(), "a-1.tar"), Package{Name: "a", Version: "1"}, "a@1"},
		{"archive name", writeArchive(t, "a.t\x01r", "x"), Package{Name: "a", Version: "1"}, "a@1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := addUnsigned(dir, tt.src, tt.p)
			if err == nil {
				t.Fatal("Add: no error")
			}
			checkError(t, err, tt.want)
			checkDir(t, dir)
		})
	}
}

func TestAddRefusesBadIndex(t *testing.T) {
	dir := t.TempDir()
	bad := `{"format": 3}`
	if err := os.WriteFile(filepath.Join(dir, "index.json"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := addUnsigned(dir, writeArchive(t, "a-1.tar", "x"), Package{Name: "a", Version: "1"})
	if err == nil {
		t.Fatal("Add: no error")
	}
	if !errors.Is(err, ErrFormat) {
		t.Errorf("Add to an index of format 3: %v, want ErrFormat", err)
	}
	checkError(t, err, "a@1")
	if data, _ := os.ReadFile(filepath.Join(dir, "index.json")); string(data) != bad {
		t.Errorf("index.json changed: %s", data)
	}
	if strings.Count(err.Error(), "add ") != 1 {
		t.Errorf("error %q repeats what it was doing", err)
	}
	checkDir(t, dir, "index.json")
}

// TestAddCycle adds packages that depend on each other in a cycle, as Debian's libc6
// and libgcc-s1 do: each is taken, and the index resolves to the cycle, after what it
// depends on, its packages by name.
func TestAddCycle(t *testing.T) {
	dir := t.TempDir()
	for _, line := range []string{"libgcc-s1 1 libc6>=2.35", "libc6 2.36 libgcc-s1", "gcc-base 1", "selfy 1 selfy", "app 1 libgcc-s1 selfy"} {
		if err := addLine(t, dir, line); err != nil {
			t.Fatalf("Add(%s): %v", line, err)
		}
	}
	ix, _, err := readIndex(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ix.Resolve(parseReqs(t, "app"))
	if want := "libc6 2.36, libgcc-s1 1, selfy 1, app 1"; err != nil || ids(got) != want {
		t.Errorf("Resolve(app) = %q, %v; want %q", ids(got), err, want)
	}
}

// addLine adds the package "name version depends..." to dir, with an archive of its own.
func addLine(t *testing.T, dir, line string) error {
	f := strings.Fields(line)
	_, err := addUnsigned(dir, writeArchive(t, f[0]+"-"+f[1]+".tar", line), Package{Name: f[0], Version: f[1], Depends: deps(f[2:]...)})
	return err
}

// archiveNames lists what a directory holds after adding the packages of index lines.
func archiveNames(index []string) []string {
	if len(index) == 0 {
		return nil
	}
	names := []string{"index.json"}
	for _, line := range index {
		f := strings.Fields(line)
		names = append(names, f[0]+"-"+f[1]+".tar")
	}
	return names
}

// TestAddConcurrent adds packages to one directory from many goroutines at once: each
// takes its turn, and the index lists them all.
func TestAddConcurrent(t *testing.T) {
	dir := t.TempDir()
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		archive := writeArchive(t, fmt.Sprintf("p%02d-1.tar", i), fmt.Sprintf("data %d", i))
		wg.Go(func() {
			_, err := addUnsigned(dir, archive, Package{Name: fmt.Sprintf("p%02d", i), Version: "1"})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := len(readIndexFile(t, dir).Packages); got != n {
		t.Errorf("index lists %d packages, want %d", got, n)
	}
}

// TestAddCleansBin records bin paths as members are named, however the caller wrote them,
// and leaves the caller's slice alone.
func TestAddCleansBin(t *testing.T) {
	dir := t.TempDir()
	bin := bins("./usr/bin/jq", "q=./usr/bin/jq")
	p, err := addUnsigned(dir, writeArchive(t, "jq.tar", "x"), Package{Name: "jq", Version: "1.7.1", Bin: bin})
	if want := bins("usr/bin/jq", "q=usr/bin/jq"); err != nil || !slices.Equal(p.Bin, want) {
		t.Fatalf("Add: bin %q, %v; want %q", p.Bin, err, want)
	}
	if got := readIndexFile(t, dir).Packages[0].Bin; !slices.Equal(got, p.Bin) {
		t.Errorf("index bin %q, want %q", got, p.Bin)
	}
	if bin[0].Path != "./usr/bin/jq" {
		t.Errorf("Add changed its argument: %q", bin)
	}
}

// addUnsigned is Add without a signer, replacing an entry of the same name and version,
// waiting as long as it takes.
func addUnsigned(dir, archivePath string, p Package) (Package, error) {
	res, err := Add(context.Background(), dir, archivePath, p, true, nil)
	if err != nil {
		return Package{}, err
	}
	return res.Package, nil
}

// TestAddRemovesLeftovers: an add, holding the directory's lock, removes the temporary
// files a killed add, remove or sign left (an archive's, the index's, the signature's),
// however new, and keeps every other file.
func TestAddRemovesLeftovers(t *testing.T) {
	dir := t.TempDir()
	left := []string{".a-1.tar.gz.tmp-2793416503", ".@s+b-2.1.0.tgz.tmp-1", ".index.json.tmp-12", ".index.json.sig.tmp-345"}
	kept := []string{".notes.tmp-1", ".a-1.tar.gz.tmp-x1", ".a-1.tar.gz.tmp-", "a-1.tar.gz.tmp-1", ".A+b-1.tar.tmp-1", "notes.txt"}
	for _, name := range append(slices.Clone(left), kept...) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := addUnsigned(dir, writeArchive(t, "c-1.tar", "c"), Package{Name: "c", Version: "1"}); err != nil {
		t.Fatal(err)
	}
	checkDir(t, dir, append([]string{"c-1.tar", indexName}, kept...)...)
}

// TestLeftover tells the temporary files of a repository directory's writers from others,
// and, where the directory could not be locked, a stale one from one another add may
// still be writing.
func TestLeftover(t *testing.T) {
	for _, tt := range []struct {
		name   string
		age    time.Duration
		locked bool
		want   bool
	}{
		{".a-1.tar.tmp-1", 0, true, true},
		{".a-1.tar.tmp-1", time.Hour, false, false},
		{".a-1.tar.tmp-1", staleAge + time.Second, false, true},
		{".index.json.tmp-1", 0, true, true},
		{".index.json.sig.tmp-1", 0, true, true},
		{".@eslint+js-9.1.0.tgz.tmp-1", 0, true, true},
		{".JSONStream-1.3.5.tgz.tmp-1", 0, true, true},
		{".pkg.lock.tmp-1", 0, true, false},
		{".tool-1.0_amd64.deb.tmp-5", 0, true, true},
		{".pkg-lock.json.tmp-123", 0, true, false}, // pkg lock -o DIR/pkg-lock.json's, not under the directory's lock
		{".release-key.tmp-42", 0, true, false},    // pkg repo keygen's
		{".my-notes.txt.tmp-1", 0, true, false},
		{".a-1.tar.tmp-1x", 0, true, false},
		{".a.tmp-1", 0, true, false},
		{"a-1.tar.tmp-1", 0, true, false},
	} {
		if got := leftover(tt.name, tt.age, tt.locked); got != tt.want {
			t.Errorf("leftover(%q, %v, locked %v) = %v, want %v", tt.name, tt.age, tt.locked, got, tt.want)
		}
	}
}

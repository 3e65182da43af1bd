package fetch

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"pkg/internal/testfs"
	"pkg/tarutil"
)

// zipEntry is a member of a zip made by makeZip.
type zipEntry struct {
	name string
	mode fs.FileMode // set as a Unix creator does; 0 for a member with no Unix mode
	data string
}

// makeZip writes entries as archive/zip does: with a Unix mode in the external attributes
// (FileHeader.SetMode) when mode is set, with none otherwise, as Go's module zips are.
func makeZip(t *testing.T, entries ...zipEntry) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: time.Unix(1700000000, 0)}
		if e.mode != 0 {
			h.SetMode(e.mode)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, e.data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

var zipEntries = []zipEntry{
	{"tool-1.0/", fs.ModeDir | 0o755, ""},
	{"tool-1.0/bin/tool", 0o755, "#!/bin/sh\necho tool\n"},
	{"tool-1.0/README", 0o644, "a tool\n"},
	{"tool-1.0/share/big", 0o600, strings.Repeat("big data ", 2000)},
	{"tool-1.0/share/empty/", fs.ModeDir | 0o750, ""},
	{"tool-1.0/bin/readme", fs.ModeSymlink | 0o777, "../README"},
}

// TestZip converts a zip as a fetch does, staged in a temporary directory left empty, and
// compares its members with what unzip extracts.
func TestZip(t *testing.T) {
	tests := []struct {
		name string
		zip  []byte
		want map[string]string // nil: what unzip extracts
	}{
		{"unix", makeZip(t, zipEntries...), nil},
		// Go's module zips (golang.org/x/mod/zip) are made by zip.Writer.Create: no modes.
		{"module", makeZip(t, zipEntry{"example.com/m@v1.0.0/go.mod", 0, "module example.com/m\n"},
			zipEntry{"example.com/m@v1.0.0/cmd/m/main.go", 0, "package main\n"}), map[string]string{
			"example.com":                        "dir -rwxr-xr-x",
			"example.com/m@v1.0.0":               "dir -rwxr-xr-x",
			"example.com/m@v1.0.0/cmd":           "dir -rwxr-xr-x",
			"example.com/m@v1.0.0/cmd/m":         "dir -rwxr-xr-x",
			"example.com/m@v1.0.0/go.mod":        plainFile("module example.com/m\n"),
			"example.com/m@v1.0.0/cmd/m/main.go": plainFile("package main\n"),
		}},
		{"no unix dir", makeZip(t, zipEntry{"d/", 0, ""}, zipEntry{"d/f", 0, "f"}), nil},
		{"empty", makeZip(t), map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			st, err := convert(io.Discard, bytes.NewReader(tt.zip), conversion{tmp: tmp})
			if err != nil {
				t.Fatal(err)
			}
			if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
				t.Errorf("%s holds %d files after the conversion, want none", tmp, len(ents))
			}
			want := tt.want
			if want == nil {
				want = unzipped(t, tt.zip)
			}
			testfs.SameTree(t, "members of the zip", membersTree(st.Members), want)
		})
	}
}

// plainFile describes a file of data with mode 0644 as testfs.Tree does.
func plainFile(data string) string {
	sum := sha256.Sum256([]byte(data))
	return "file -rw-r--r-- " + hex.EncodeToString(sum[:8])
}

// unzipped is what unzip extracts from data.
func unzipped(t *testing.T, data []byte) map[string]string {
	t.Helper()
	testfs.NeedTools(t, "unzip")
	dir := t.TempDir()
	path := filepath.Join(t.TempDir(), "a.zip")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	testfs.Run(t, dir, "unzip", "-q", path)
	return extracted(t, dir)
}

// TestZipByZip reads a zip made by Info-ZIP's zip, symlinks stored as such (-y), and
// compares its members with what unzip extracts.
func TestZipByZip(t *testing.T) {
	testfs.NeedTools(t, "zip")
	base := t.TempDir()
	writeTree(t, filepath.Join(base, "hello"))
	testfs.Run(t, base, "zip", "-q", "-r", "-y", "hello.zip", "hello")
	data, err := os.ReadFile(filepath.Join(base, "hello.zip"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Inspect(t.Context(), filepath.Join(base, "hello.zip"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Control != nil {
		t.Errorf("a zip has control fields: %+v", got.Control)
	}
	testfs.SameTree(t, "members of zip's zip", membersTree(got.Members), unzipped(t, data))
}

// TestZipInPlace reads a local zip, as Inspect does, from the file itself: its bytes are not
// also read in order, past what the pipes in front of the conversion hold (4 MiB).
func TestZipInPlace(t *testing.T) {
	f := storedZip(t, filepath.Join(t.TempDir(), "a.zip"), 32)
	src := &countingReader{r: f}
	f.Seek(0, io.SeekStart)
	if st, err := convert(io.Discard, src, conversion{local: &localArchive{f, t.Context(), 0}}); err != nil || len(st.Members) != 1 {
		t.Fatalf("convert: %d members, %v", len(st.Members), err)
	}
	if src.n > 8<<20 {
		t.Errorf("read %d bytes of a 32 MiB zip in order, besides reading it in place", src.n)
	}
}

// TestZipInspectCanceled stops the inspection of a local zip, read in place, once its
// context is done: the reads of the zip's members fail too, not only those of the pipe in
// front of the conversion, which stop once its 4 MiB are full.
func TestZipInspectCanceled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.zip")
	storedZip(t, path, 64)
	// Done after more reads than the pipe takes in order (16 chunks), long before the
	// 64 MiB member is read in place.
	ctx := &countdownContext{Context: t.Context(), left: 2 * pipeChunks, done: make(chan struct{})}
	result := make(chan error, 1)
	go func() { _, err := Inspect(ctx, path); result <- err }()
	var err error
	select {
	case err = <-result:
	case <-time.After(time.Minute): // a hang, not a slow machine
		t.Fatal("inspection still running a minute after its context was done")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Inspect with its context done during the zip: %v, want context.Canceled", err)
	}
}

// countdownContext is done from the left-th call of its Err on.
type countdownContext struct {
	context.Context
	mu   sync.Mutex
	left int
	done chan struct{}
}

func (c *countdownContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.left > 0 {
		if c.left--; c.left == 0 {
			close(c.done)
		}
	}
	if c.left == 0 {
		return context.Canceled
	}
	return c.Context.Err()
}

func (c *countdownContext) Done() <-chan struct{} { return c.done }

// TestZipRefused checks that a zip's members go through the checks a tar's do, and that
// what a zip alone can hold is refused, naming the member.
func TestZipRefused(t *testing.T) {
	corrupt := makeZip(t, zipEntry{"a", 0o644, strings.Repeat("a", 1000)})
	corrupt[bytes.Index(corrupt, []byte("PK\x01\x02"))+16]++ // the CRC-32 in the central directory
	encrypted := makeZip(t, zipEntry{"secret", 0o644, "x"})
	for _, at := range []int{6, bytes.Index(encrypted, []byte("PK\x01\x02")) + 8} { // general purpose flags, local and central
		encrypted[at] |= 1
	}
	tests := []struct {
		name   string
		zip    []byte
		want   error
		member string // the member refused, "" for the archive
	}{
		{"dotdot", makeZip(t, zipEntry{"../evil", 0o644, "x"}), tarutil.ErrUnsafePath, "../evil"},
		{"dotdot inside", makeZip(t, zipEntry{"a/../../evil", 0, "x"}), tarutil.ErrUnsafePath, "a/../../evil"},
		{"absolute", makeZip(t, zipEntry{"/etc/passwd", 0o644, "x"}), tarutil.ErrUnsafePath, "/etc/passwd"},
		{"backslash", makeZip(t, zipEntry{`..\evil`, 0, "x"}), tarutil.ErrUnsafePath, "..\\evil"},
		{"symlink out", makeZip(t, zipEntry{"l", fs.ModeSymlink | 0o777, "../../etc"}), tarutil.ErrSymlinkEscape, "l"},
		{"setuid", makeZip(t, zipEntry{"su", fs.ModeSetuid | 0o755, "x"}), tarutil.ErrSpecialBits, "su"},
		{"fifo", makeZip(t, zipEntry{"p", fs.ModeNamedPipe | 0o644, ""}), tarutil.ErrType, "p"},
		{"socket", makeZip(t, zipEntry{"s", fs.ModeSocket | 0o644, ""}), tarutil.ErrType, "s"},
		{"device", makeZip(t, zipEntry{"d", fs.ModeDevice | 0o644, ""}), tarutil.ErrType, "d"},
		{"duplicate", makeZip(t, zipEntry{"a", 0o644, "1"}, zipEntry{"a", 0o644, "2"}), tarutil.ErrDuplicate, "a"},
		{"under a file", makeZip(t, zipEntry{"a", 0o644, "1"}, zipEntry{"a/b", 0o644, "2"}), tarutil.ErrParent, "a/b"},
		{"checksum", corrupt, zip.ErrChecksum, "a"},
		{"encrypted", encrypted, errZipEncrypted, "secret"},
		{"truncated", makeZip(t, zipEntries...)[:200], zip.ErrFormat, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			_, err := convert(io.Discard, bytes.NewReader(tt.zip), conversion{tmp: tmp})
			var me *tarutil.MemberError
			var ze *zipError
			member := ""
			switch {
			case errors.As(err, &me):
				member = me.Name
			case errors.As(err, &ze):
				member = ze.member
			}
			if !errors.Is(err, tt.want) || member != tt.member {
				t.Errorf("convert: %#v\nwant %v of member %q", err, tt.want, tt.member)
			}
			if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
				t.Errorf("%s holds %d files after a refused zip, want none", tmp, len(ents))
			}
		})
	}
}

// TestFetchZip fetches zips over HTTP: the staged copy is gone after the entry is made, and
// after a zip whose sha256 is not the index's, which is reported as such, not by the
// member it would refuse.
func TestFetchZip(t *testing.T) {
	good, evil := makeZip(t, zipEntries...), makeZip(t, zipEntry{"../evil", 0o644, "x"})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		serveArchive(w, r, map[string][]byte{"/good.zip": good, "/evil.zip": evil}[r.URL.Path])
	})
	c := openCache(t)
	p := entry("good", good, nil)
	p.Archive, p.Files, p.InstalledSize = "good.zip", 0, 0
	if err := fetchOne(c, quick(t, srv.URL), p); err != nil {
		t.Fatal(err)
	}
	members, err := c.Members(p.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	testfs.SameTree(t, "cached zip", membersTree(members), unzipped(t, good))
	bad := entry("evil", evil, nil)
	bad.Archive, bad.SHA256 = "evil.zip", p.SHA256[:63]+"0"
	if err := fetchOne(c, quick(t, srv.URL), bad); !errors.Is(err, ErrMismatch) {
		t.Errorf("fetch of a zip with another sha256: %v, want ErrMismatch", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(c.dir, "tmp")); len(ents) != 0 {
		t.Errorf("cache tmp holds %d files, want none", len(ents))
	}
}

// TestZipTime reads MS-DOS times as unzip 6.0 extracted them (TZ=UTC), including a month
// of 0, as every member of a module zip from proxy.golang.org has.
func TestZipTime(t *testing.T) {
	utc := func(y int, mo time.Month, d, h, mi, s int) time.Time {
		return time.Date(y, mo, d, h, mi, s, 0, time.UTC)
	}
	// An extended timestamp (APPNOTE.TXT 4.6.1, 0x5455): flags, then the mtime in Unix seconds.
	ext := []byte{0x55, 0x54, 5, 0, 1, 0x00, 0xf1, 0x53, 0x65} // 1700000000
	tests := []struct {
		name       string
		date, time uint16
		extra      []byte
		want       time.Time
	}{
		{"zero", 0, 0, nil, utc(1979, time.December, 31, 0, 0, 0)},
		{"month 0", 5<<9 | 5, 0, nil, utc(1985, time.January, 5, 0, 0, 0)},
		{"day 0", 5<<9 | 3<<5, 0, nil, utc(1985, time.February, 28, 0, 0, 0)},
		{"month 13", 5<<9 | 13<<5 | 5, 0, nil, utc(1986, time.January, 5, 0, 0, 0)},
		{"overflow", 5<<9 | 2<<5 | 31, 25<<11 | 61<<5 | 31, nil, utc(1985, time.March, 4, 2, 2, 2)},
		{"plain", 44<<9 | 11<<5 | 14, 22<<11 | 13<<5 | 10, nil, utc(2024, time.November, 14, 22, 13, 20)},
		{"extended timestamp, month 0", 0, 0, ext, time.Unix(1700000000, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			zw := zip.NewWriter(&b)
			h := &zip.FileHeader{Name: "f", ModifiedDate: tt.date, ModifiedTime: tt.time, Extra: tt.extra}
			if _, err := zw.CreateHeader(h); err != nil {
				t.Fatal(err)
			}
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			zr, err := zip.NewReader(bytes.NewReader(b.Bytes()), int64(b.Len()))
			if err != nil {
				t.Fatal(err)
			}
			hdr, err := zipHeader(zr.File[0])
			if err != nil {
				t.Fatal(err)
			}
			if !hdr.ModTime.Equal(tt.want) {
				t.Errorf("mtime %v, want %v", hdr.ModTime.UTC(), tt.want)
			}
		})
	}
}

// storedZip writes at path a zip of one stored member, "big", of mib MiB of zeros, and
// returns it open, closed with the test.
func storedZip(t *testing.T, path string, mib int) *os.File {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	zw := zip.NewWriter(f)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "big", Method: zip.Store})
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for range mib {
		w.Write(chunk)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return f
}

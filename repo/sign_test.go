package repo

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// testSigner "signs" by prefixing the index with "sig of ", so tests can check what was signed.
func testSigner(name string, expires time.Time) *Signer {
	return &Signer{Name: name, Expires: expires, Sign: func(index []byte) []byte {
		return append([]byte("sig of "), index...)
	}}
}

// checkSigned fails unless dir's signature is of its index's exact bytes, and returns
// the index.
func checkSigned(t *testing.T, dir string) *Index {
	t.Helper()
	index, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := os.ReadFile(filepath.Join(dir, SignatureName))
	if err != nil || !bytes.Equal(sig, append([]byte("sig of "), index...)) {
		t.Fatalf("%s is not of index.json: %v", SignatureName, err)
	}
	return readIndexFile(t, dir)
}

func TestSign(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "main")
	expires := time.Date(2030, 1, 2, 3, 4, 5, 600, time.FixedZone("x", 3600))
	if _, err := Sign(t.Context(), dir, testSigner("", expires)); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), dir) {
		t.Errorf("Sign of a directory without an index: %v", err)
	}
	res, err := Add(t.Context(), dir, writeArchive(t, "a-1.tar", "a"), Package{Name: "a", Version: "1"}, false, testSigner("", expires))
	if err != nil {
		t.Fatal(err)
	}
	m := res.Meta
	want := Meta{Name: "main", Version: 1, Expires: time.Date(2030, 1, 2, 2, 4, 5, 0, time.UTC)}
	if m != want {
		t.Errorf("Add: meta %+v, want %+v", m, want)
	}
	if ix := checkSigned(t, dir); ix.Meta != want || len(ix.Packages) != 1 {
		t.Errorf("index after Add: %+v", ix)
	}
	ix, err := Sign(t.Context(), dir, testSigner("", expires.Add(time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	if ix.Name != "main" || ix.Version != 2 || !ix.Expires.Equal(want.Expires.Add(time.Hour)) {
		t.Errorf("Sign: %+v", ix.Meta)
	}
	if ix, err = Sign(t.Context(), dir, testSigner("renamed", expires)); err != nil || ix.Name != "renamed" || ix.Version != 3 {
		t.Errorf("Sign with a name: %+v, %v", ix, err)
	}
	if got := checkSigned(t, dir); got.Meta != ix.Meta || len(got.Packages) != 1 {
		t.Errorf("index after Sign: %+v", got)
	}
	checkDir(t, dir, "a-1.tar", "index.json", SignatureName)
}

// TestAddToSignedUnsigned refuses to rewrite a signed index without signing it, before
// anything changes.
func TestAddToSignedUnsigned(t *testing.T) {
	dir := t.TempDir()
	if _, err := Add(t.Context(), dir, writeArchive(t, "a-1.tar", "a"), Package{Name: "a", Version: "1"}, false, testSigner("r", time.Now())); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "index.json"))
	_, err := addUnsigned(dir, writeArchive(t, "b-1.tar", "b"), Package{Name: "b", Version: "1"})
	if !errors.Is(err, ErrSigned) {
		t.Errorf("unsigned Add to a signed repository: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "index.json")); !bytes.Equal(before, after) {
		t.Error("the index changed")
	}
	checkDir(t, dir, "a-1.tar", "index.json", SignatureName)
}

func TestSignBadName(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "My Repo")
	src := writeArchive(t, "a-1.tar", "a")
	for _, s := range []*Signer{testSigner("", time.Now()), testSigner("Bad", time.Now()), {Name: "ok", Sign: testSigner("", time.Time{}).Sign}} {
		if _, err := Add(t.Context(), dir, src, Package{Name: "a", Version: "1"}, false, s); err == nil {
			t.Errorf("Add with name %q, expires %v: no error", s.Name, s.Expires)
		}
	}
	if _, err := os.Stat(dir); err == nil {
		checkDir(t, dir)
	}
	if _, err := Add(t.Context(), dir, src, Package{Name: "a", Version: "1"}, false, testSigner("", time.Now())); !errors.Is(err, ErrUnnamed) {
		t.Errorf("signed Add to %q, whose index names no repository: %v, want ErrUnnamed", dir, err)
	}
}

func TestParseMeta(t *testing.T) {
	m, err := ParseMeta([]byte(`{"format": 1, "name": "demo", "version": 3, "expires": "2030-01-02T03:04:05Z", "packages": "not decoded"}`))
	if err != nil || m.Name != "demo" || m.Version != 3 || m.Expires.Year() != 2030 {
		t.Errorf("ParseMeta: %+v, %v", m, err)
	}
	for _, bad := range []string{`{"format": 3, "name": "demo"}`, `{"format": 1, "name": "Demo"}`,
		`{"format": 1, "version": -1}`, `{"format": 1, "expires": "tomorrow"}`} {
		if _, err := ParseMeta([]byte(bad)); err == nil {
			t.Errorf("ParseMeta(%s): no error", bad)
		}
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%s): no error", bad)
		}
	}
}

func FuzzParseMeta(f *testing.F) {
	f.Add([]byte(goodIndex))
	f.Add([]byte(`{"format": 1, "name": "demo", "version": 3, "expires": "2030-01-02T03:04:05+01:00", "packages": []}`))
	f.Add([]byte(`{"format": 1, "name": "", "version": 0, "expires": "0001-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"format": 1, "name": "demo", "version": 18446744073709551615, "packages": []}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMeta(data)
		ix, perr := Parse(data)
		switch {
		case perr == nil && err != nil:
			t.Fatalf("Parse accepts what ParseMeta refuses: %v", err)
		case perr == nil && !m.Expires.Equal(ix.Expires), perr == nil && (m.Name != ix.Name || m.Version != ix.Version):
			t.Fatalf("ParseMeta %+v, Parse %+v", m, ix.Meta)
		}
	})
}

// TestSignatureNotWritten: when the signature cannot be written after the index, the
// error says the repository now serves the index with the old signature, and what to run.
func TestSignatureNotWritten(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "main")
	if _, err := Add(t.Context(), dir, writeArchive(t, "a-1.tar", "a"), Package{Name: "a", Version: "1"}, false, testSigner("", time.Now().Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	sig := filepath.Join(dir, SignatureName)
	if err := os.Remove(sig); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(sig, "x"), 0o755); err != nil { // a rename cannot replace it
		t.Fatal(err)
	}
	_, err := Sign(t.Context(), dir, testSigner("", time.Now().Add(time.Hour)))
	var ue *UnsignedError
	if !errors.As(err, &ue) || ue.Dir != dir || ue.Err == nil {
		t.Errorf("Sign with the signature's place taken: %v", err)
	}
}

// TestSignLastVersion signs an index at the last version a signed index may have: Sign
// refuses it, naming the version, instead of writing one that no reader accepts.
func TestSignLastVersion(t *testing.T) {
	dir := t.TempDir()
	index := []byte(`{"format": 1, "name": "demo", "version": 9007199254740991, "packages": []}`)
	if err := os.WriteFile(filepath.Join(dir, "index.json"), index, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Sign(t.Context(), dir, testSigner("", time.Now().Add(time.Hour)))
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "index version 9007199254740991") {
		t.Errorf("Sign: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "index.json")); !bytes.Equal(got, index) {
		t.Errorf("index.json changed:\n%s", got)
	}
}

// TestSignFIFO: a FIFO given as the repository's directory is refused, not waited on for
// a writer.
func TestSignFIFO(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(dir, 0o644); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(5*time.Second, func() { panic("Sign of a FIFO still blocked after 5 s") })
	defer timer.Stop()
	if _, err := Sign(context.Background(), dir, &Signer{Sign: func([]byte) []byte { return nil }}); !errors.Is(err, unix.ENOTDIR) {
		t.Errorf("Sign of a FIFO: %v; want ENOTDIR", err)
	}
}

// fileState is a file's bytes and modification time.
type fileState struct {
	data  string
	mtime time.Time
}

// statFiles returns the state of each of names in dir, their times first set an hour
// back, so that a rewrite within the filesystem's timestamp granularity still shows.
func statFiles(t *testing.T, dir string, names ...string) []fileState {
	t.Helper()
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	var states []fileState
	for _, name := range names {
		p := filepath.Join(dir, name)
		if err := os.Chtimes(p, past, past); err != nil {
			t.Fatal(err)
		}
		states = append(states, readState(t, p))
	}
	return states
}

func readState(t *testing.T, p string) fileState {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fileState{string(data), fi.ModTime()}
}

// addOne adds the archive at src to dir as p, by Add or by AddAll, and returns whether it
// wrote the index and its Meta.
type addOne func(dir, src string, p Package, s *Signer) (written bool, m Meta, err error)

var addOnes = []struct {
	name string
	add  addOne
}{
	{"Add", func(dir, src string, p Package, s *Signer) (bool, Meta, error) {
		res, err := Add(context.Background(), dir, src, p, false, s)
		if err != nil {
			return false, Meta{}, err
		}
		return res.Written, res.Meta, nil
	}},
	{"AddAll", func(dir, src string, p Package, s *Signer) (bool, Meta, error) {
		res, err := AddAll(context.Background(), dir, []string{src}, []Package{p}, false, s)
		if err != nil {
			return false, Meta{}, err
		}
		return res.Written, res.Meta, nil
	}},
}

// TestAddSameAgainSigned adds to a signed repository an entry it has already, the same
// bytes from a file named otherwise: the index and its signature stay as they were, bytes
// and times, signed version 1 still.
func TestAddSameAgainSigned(t *testing.T) {
	for _, tt := range addOnes {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "main")
			p := Package{Name: "a", Version: "1", Depends: deps("b")}
			if _, _, err := tt.add(dir, writeArchive(t, "a-1.tar", "a"), p, testSigner("", time.Now().Add(time.Hour))); err != nil {
				t.Fatal(err)
			}
			before := statFiles(t, dir, "index.json", SignatureName)
			written, m, err := tt.add(dir, writeArchive(t, "copy.tar", "a"), p, testSigner("", time.Now().Add(2*time.Hour)))
			if err != nil {
				t.Fatal(err)
			}
			if written || m.Version != 1 {
				t.Errorf("the same entry again: written %v, version %d; want not written, version 1", written, m.Version)
			}
			for i, name := range []string{"index.json", SignatureName} {
				if got := readState(t, filepath.Join(dir, name)); got != before[i] {
					t.Errorf("%s changed: %q at %v, want %q at %v", name, got.data, got.mtime, before[i].data, before[i].mtime)
				}
			}
			checkDir(t, dir, "index.json", SignatureName, "a-1.tar")
		})
	}
}

// TestAddSameAgainOtherSignature: an entry added again with a signer whose signature of
// the index is not the one the repository holds (another key, as when a publisher moves
// to a new one and signs with both for a while, or an index edited by hand since it was
// signed) signs it again, a new version: keeping the old signature would leave clients
// that trust only the new key refusing it.
func TestAddSameAgainOtherSignature(t *testing.T) {
	other := func(expires time.Time) *Signer {
		return &Signer{Expires: expires, Sign: func(index []byte) []byte { return append([]byte("sig of "), append(index, "by the new key"...)...) }}
	}
	for _, tt := range addOnes {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "main")
			src, p := writeArchive(t, "a-1.tar", "a"), Package{Name: "a", Version: "1"}
			if _, _, err := tt.add(dir, src, p, testSigner("", time.Now().Add(time.Hour))); err != nil {
				t.Fatal(err)
			}
			written, m, err := tt.add(dir, src, p, other(time.Now().Add(time.Hour)))
			if err != nil || !written || m.Version != 2 {
				t.Fatalf("the same entry again, another key: written %v, %+v, %v; want written, version 2", written, m, err)
			}
			index, err := os.ReadFile(filepath.Join(dir, "index.json"))
			if err != nil {
				t.Fatal(err)
			}
			if sig, err := os.ReadFile(filepath.Join(dir, SignatureName)); err != nil || !bytes.Equal(sig, other(time.Time{}).Sign(index)) {
				t.Errorf("%s = %q, %v; want the new key's signature of index.json", SignatureName, sig, err)
			}
		})
	}
}

// TestAddSameAgainExpired: an entry added again with a signer to a repository whose
// signature has expired signs it again, a new version: an unchanged index would keep
// refusing every client.
func TestAddSameAgainExpired(t *testing.T) {
	for _, tt := range addOnes {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "main")
			src, p := writeArchive(t, "a-1.tar", "a"), Package{Name: "a", Version: "1"}
			if _, _, err := tt.add(dir, src, p, testSigner("", time.Now().Add(-time.Hour))); err != nil {
				t.Fatal(err)
			}
			written, m, err := tt.add(dir, src, p, testSigner("", time.Now().Add(time.Hour)))
			if err != nil || !written || m.Version != 2 || !time.Now().Before(m.Expires) {
				t.Fatalf("the same entry again, its signature expired: written %v, %+v, %v; want written, version 2, not expired", written, m, err)
			}
			checkSigned(t, dir)
		})
	}
}

// TestAddSameAgainResigns: an entry added again with a signer to a signed repository is
// signed again, a new version, where the signer names the repository otherwise or the
// signature is gone: the index is unchanged only under the name it is signed with.
func TestAddSameAgainResigns(t *testing.T) {
	for _, tt := range addOnes {
		for _, c := range []struct {
			name, signer, want string
			unsign             bool
		}{
			{"renamed", "other", "other", false},
			{"signature removed", "", "main", true},
		} {
			t.Run(tt.name+"/"+c.name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "main")
				src, p := writeArchive(t, "a-1.tar", "a"), Package{Name: "a", Version: "1"}
				if _, _, err := tt.add(dir, src, p, testSigner("", time.Now().Add(time.Hour))); err != nil {
					t.Fatal(err)
				}
				if c.unsign {
					if err := os.Remove(filepath.Join(dir, SignatureName)); err != nil {
						t.Fatal(err)
					}
				}
				written, m, err := tt.add(dir, src, p, testSigner(c.signer, time.Now().Add(time.Hour)))
				if err != nil || !written || m.Version != 2 || m.Name != c.want {
					t.Fatalf("the same entry again: written %v, %+v, %v; want written, %s version 2", written, m, err, c.want)
				}
				checkSigned(t, dir)
			})
		}
	}
}

// TestAddSameAgainSigns: an entry added again with a signer to an unsigned repository
// changes it, the index now signed.
func TestAddSameAgainSigns(t *testing.T) {
	for _, tt := range addOnes {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "main")
			src, p := writeArchive(t, "a-1.tar", "a"), Package{Name: "a", Version: "1"}
			if _, _, err := tt.add(dir, src, p, nil); err != nil {
				t.Fatal(err)
			}
			written, m, err := tt.add(dir, src, p, testSigner("", time.Now().Add(time.Hour)))
			if err != nil || !written || m.Version != 1 || m.Name != "main" {
				t.Fatalf("the same entry again, signed: written %v, %+v, %v; want written, main version 1", written, m, err)
			}
			checkSigned(t, dir)
		})
	}
}

// TestAddAllSomeAgain adds, to a signed repository, an archive it has already beside one
// it lacks, after adding the first again alone: each change of the index, and only those,
// is a signed version, so the index written once with the new entry is version 2.
func TestAddAllSomeAgain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "main")
	s := testSigner("", time.Now().Add(time.Hour))
	a, pa := writeArchive(t, "a-1.tar", "a"), Package{Name: "a", Version: "1"}
	for range 2 {
		if _, err := Add(context.Background(), dir, a, pa, false, s); err != nil {
			t.Fatal(err)
		}
	}
	before := inode(t, filepath.Join(dir, "index.json"))
	pb := Package{Name: "b", Version: "1"}
	res, err := AddAll(context.Background(), dir, []string{a, writeArchive(t, "b-1.tar", "b")}, []Package{pa, pb}, false, s)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Written || res.Meta.Version != 2 || len(res.New) != 1 || res.New[0].Name != "b" {
		t.Errorf("AddAll of a again and b: written %v, version %d, new %+v; want written, version 2, b new", res.Written, res.Meta.Version, res.New)
	}
	if inode(t, filepath.Join(dir, "index.json")) == before {
		t.Error("AddAll of a new entry left index.json as it was")
	}
	ix := checkSigned(t, dir)
	if ix.Version != 2 || len(ix.Packages) != 2 || ix.Packages[1].Name != "b" || ix.Packages[1].SHA256 != sum("b") {
		t.Errorf("index: version %d, %+v; want version 2 with a and b", ix.Version, ix.Packages)
	}
	checkDir(t, dir, "index.json", SignatureName, "a-1.tar", "b-1.tar")
}

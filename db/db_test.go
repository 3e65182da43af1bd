package db

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"pkg/pkgtest/testrepo"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"

	"pkg/internal/durable"
	"pkg/internal/testfs"
	"pkg/repo"
)

func open(t testing.TB, path string) *DB { return openWith(t, path, Options{}) }

// openHeld opens the database at path holding its file (Options.Hold).
func openHeld(t testing.TB, path string) *DB { return openWith(t, path, Options{Hold: true}) }

func openWith(t testing.TB, path string, o Options) *DB {
	t.Helper()
	o.Timeout = 200 * time.Millisecond
	d, err := Open(path, o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// lastTxID returns the id of the last transaction d's file holds.
func lastTxID(t *testing.T, d *DB) int {
	t.Helper()
	var id int
	if err := d.view(func(tx *bolt.Tx) error { id = tx.ID(); return nil }); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestCommitListFilesDelete(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "db"))
	p := &Record{Name: "hello", Version: "1.2.0", SHA256: "ab", Depends: testrepo.Requires("libgreet>=1"), Files: 2, Size: 10,
		Installed: time.Unix(1700000000, 0).UTC()}
	files := []File{{Path: "z", Type: '0', Mode: 0o644, Size: 10, SHA256: sha256.Sum256([]byte("0123456789"))}, {Path: "a", Type: '5', Mode: 0o755}}
	if err := d.SetIntents([]Intent{{Op: "install", Name: "hello", Staging: "s", Inode: 7}}); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit([]*Record{p}, []*FileList{writeFiles(t, d, files)}, nil); err != nil {
		t.Fatal(err)
	}
	got, err := d.Get("hello")
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Errorf("Get = %+v, %v; want %+v", got, err, p)
	}
	gotFiles, err := d.Files("hello")
	want := []File{files[1], files[0]}
	if err != nil || !reflect.DeepEqual(gotFiles, want) {
		t.Errorf("Files = %+v, %v; want %+v", gotFiles, err, want)
	}
	if ins, _ := d.Intents(); len(ins) != 0 {
		t.Errorf("Commit left intents %+v", ins)
	}
	if err := d.Commit(nil, nil, []string{"hello"}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get("hello"); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Get after Delete: %v, want ErrNotInstalled", err)
	}
	if ps, _ := d.List(); len(ps) != 0 {
		t.Errorf("List after Delete = %+v", ps)
	}
	if err := d.Check(); err != nil {
		t.Error(err)
	}
}

// TestFilesEncoding round-trips file records through their encoding: each record costs
// less than the old encoding's where paths share prefixes and files share contents, and a
// value cut anywhere but between records is refused rather than misread.
func TestFilesEncoding(t *testing.T) {
	var files []File
	for i := range 60 {
		f := File{Path: fmt.Sprintf("package/lib/%s/f%d.js", strings.Repeat("p", i%7), i), Type: '0', Mode: 0o755, Size: int64(i) << 33}
		f.SHA256 = sha256.Sum256([]byte(fmt.Sprint(i % 9)))
		files = append(files, f)
	}
	files = append(files, File{Path: "l", Type: '1', SHA256: files[7].SHA256}, File{Path: "s", Type: '2'},
		File{Path: "package", Type: '5', Mode: fs.ModeDir | fs.ModeSetgid | 0o2775}, File{Path: "n", Type: '0', Size: -1})
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	var (
		v      []byte
		enc    listEncoder
		ends   = map[int]int{0: 0} // records decoded from a value cut at each record's end
		oldLen int
	)
	for i := range files {
		v = enc.append(v, &files[i])
		ends[len(v)] = i + 1
		oldLen += len(appendOldFile(nil, &files[i]))
	}
	got, err := decodeList(nil, v)
	if err != nil || !reflect.DeepEqual(got, files) {
		t.Fatalf("decodeList of the encoding = %d files, %v; want %d files equal", len(got), err, len(files))
	}
	if len(v) >= oldLen/2 {
		t.Errorf("%d files encoded in %d bytes; the old encoding took %d", len(files), len(v), oldLen)
	}
	for n := range len(v) {
		got, err := decodeList(nil, v[:n])
		if k, end := ends[n]; end && (err != nil || !slices.Equal(got, files[:k])) || !end && err == nil {
			t.Errorf("value cut to %d bytes: %d files, %v", n, len(got), err)
		}
	}
	// A chunk's records refer to sha256s in the chunk only, not in the one before.
	before := []File{{Path: "a", Type: '0', SHA256: files[0].SHA256}}
	if _, err := decodeList(before, []byte{0, 1, 'b', '0', 0, 0, 2}); err == nil {
		t.Error("a sha256 referring before its chunk decoded without error")
	}
}

// FuzzDecodeList decodes any value without failing but with an error, and what it decodes
// encodes to a value that decodes the same.
func FuzzDecodeList(f *testing.F) {
	var enc listEncoder
	var v []byte
	for i, p := range []string{"a", "a/b", "a/c", "b"} {
		v = enc.append(v, &File{Path: p, Type: '0', Mode: 0o644, Size: int64(i), SHA256: sha256.Sum256([]byte{byte(i % 2)})})
	}
	f.Add(v)
	f.Add([]byte{0, 1, 'b', '0', 0, 0, 2})
	f.Fuzz(func(t *testing.T, v []byte) {
		files, err := decodeList(nil, v)
		if err != nil {
			return
		}
		var again []byte
		var enc listEncoder
		for i := range files {
			again = enc.append(again, &files[i])
		}
		if got, err := decodeList(nil, again); err != nil || !slices.Equal(got, files) {
			t.Errorf("decoded %d files; encoded again, %d files, %v", len(files), len(got), err)
		}
	})
}

func TestIntents(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "db"))
	in := Intent{Op: "remove", Name: "x", Staging: ".pkg/trash/x.1"}
	if err := d.SetIntents([]Intent{in}); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.Intents(); !reflect.DeepEqual(got, []Intent{in}) {
		t.Errorf("Intents = %+v", got)
	}
	if err := d.ClearIntents("x"); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.Intents(); len(got) != 0 {
		t.Errorf("Intents after clear = %+v", got)
	}
}

// TestOpenOnlyInTransactions checks that the file is locked only during a transaction:
// readers share it, a writer waits for them, and nothing holds it in between.
func TestOpenOnlyInTransactions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	d := open(t, path)
	if err := d.SetIntents([]Intent{{Op: "install", Name: "a", Staging: "s"}}); err != nil {
		t.Fatal(err)
	}
	other, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("another writer between transactions: %v", err)
	}
	var busy *BusyError
	if _, err := d.Intents(); !errors.As(err, &busy) || busy.Path != path || busy.Waited != 200*time.Millisecond {
		t.Errorf("read while another process writes: %v; want a *BusyError after 200ms", err)
	}
	other.Close()
	reader, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: 100 * time.Millisecond, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if ins, err := d.Intents(); err != nil || len(ins) != 1 {
		t.Errorf("read beside another reader: %v, %v", ins, err)
	}
	if err := d.ClearIntents("a"); !errors.As(err, new(*BusyError)) {
		t.Errorf("write while another process reads: %v; want a *BusyError", err)
	}
}

// TestWaitEndsWithContext checks that a transaction waiting for another process's, with
// no timeout, ends when its context is done, reads and writes alike (#30: an interrupt
// ends any command at any point).
func TestWaitEndsWithContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	if err := open(t, path).SetIntents([]Intent{{Op: "install", Name: "a", Staging: "s"}}); err != nil {
		t.Fatal(err)
	}
	other, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for _, tc := range []struct {
		name string
		fn   func(d *DB) error
	}{
		{"read", func(d *DB) error { _, err := d.Intents(); return err }},
		{"write", func(d *DB) error { return d.ClearIntents("a") }},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		d, err := Open(path, Options{Context: ctx})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- tc.fn(d) }()
		select {
		case err := <-done:
			t.Fatalf("%s ended while another process writes: %v", tc.name, err)
		case <-time.After(200 * time.Millisecond):
		}
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s after cancel: %v; want context.Canceled", tc.name, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s still waiting 5 s after its context ended", tc.name)
		}
	}
}

// TestNewDatabaseReads checks that a new database answers every query empty without a
// write transaction, and that the first write creates what it needs.
func TestNewDatabaseReads(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "db"))
	before := lastTxID(t, d)
	if ps, err := d.List(); err != nil || len(ps) != 0 {
		t.Errorf("List: %v, %v", ps, err)
	}
	if _, err := d.Get("a"); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Get: %v", err)
	}
	if _, err := d.Files("a"); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Files: %v", err)
	}
	if ins, err := d.Intents(); err != nil || len(ins) != 0 {
		t.Errorf("Intents: %v, %v", ins, err)
	}
	if _, ok, err := d.Repo("https://example.com/"); ok || err != nil {
		t.Errorf("Repo: %v, %v", ok, err)
	}
	if after := lastTxID(t, d); after != before {
		t.Errorf("reads wrote: transaction %d, then %d", before, after)
	}
	if err := d.SetIntents([]Intent{{Op: "install", Name: "a", Staging: "s"}}); err != nil {
		t.Fatal(err)
	}
	if ins, err := d.Intents(); err != nil || len(ins) != 1 {
		t.Errorf("Intents after the first write: %v, %v", ins, err)
	}
}

// TestCreateFull checks that a database whose creation fails for want of space leaves no
// file behind, and is created once there is space.
func TestCreateFull(t *testing.T) {
	dir := testfs.Tmpfs(t, 12<<10) // three pages of the four an empty database takes
	path := filepath.Join(dir, "db")
	if _, err := Open(path, Options{}); err == nil {
		t.Fatal("Open created a database in 12 KiB")
	}
	for _, p := range []string{path, path + ".new"} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("after a failed creation, %s: %v", p, err)
		}
	}
	if out, err := exec.Command("mount", "-o", "remount,size=1m", dir).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v: %s", err, out)
	}
	if ps, err := open(t, path).List(); err != nil || len(ps) != 0 {
		t.Errorf("List once there is space: %v, %v", ps, err)
	}
}

// TestInstalled checks that Installed returns the records and files of the named packages,
// or of all, sorted by name, and refuses a name without a record.
func TestInstalled(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "db"))
	var ps []*Record
	var files []*FileList
	for _, name := range []string{"zeta", "alpha", "mid"} {
		ps = append(ps, &Record{Name: name, Version: "1", Files: 1})
		files = append(files, writeFiles(t, d, []File{{Path: name + "/f", Type: '0', Mode: 0o644}}))
	}
	if err := d.Commit(ps, files, nil); err != nil {
		t.Fatal(err)
	}
	names := func(ps []Record, fs [][]File) (s []string) {
		for i, p := range ps {
			s = append(s, p.Name+":"+fs[i][0].Path)
		}
		return s
	}
	if got, fs, err := d.Installed(); err != nil || !slices.Equal(names(got, fs), []string{"alpha:alpha/f", "mid:mid/f", "zeta:zeta/f"}) {
		t.Errorf("Installed() = %v, %v", names(got, fs), err)
	}
	if got, fs, err := d.Installed("zeta", "alpha"); err != nil || !slices.Equal(names(got, fs), []string{"alpha:alpha/f", "zeta:zeta/f"}) {
		t.Errorf("Installed(zeta, alpha) = %v, %v", names(got, fs), err)
	}
	if _, _, err := d.Installed("alpha", "nope"); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Installed(alpha, nope): %v", err)
	}
}

// TestOpenNoCreate checks that a reader's Open of a missing database fails as not
// existing and creates nothing.
func TestOpenNoCreate(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	if _, err := Open(missing, Options{NoCreate: true}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open(missing, NoCreate): %v; want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("NoCreate made %s: %v", missing, err)
	}
}

// TestNoHoles commits a package of many files, which grows the file, on XFS: the file has
// blocks for all of its size, so that a later commit on a full filesystem (a remove) has
// the space it writes into.
func TestNoHoles(t *testing.T) {
	path := filepath.Join(testfs.Mount(t, "xfs"), "db")
	d := open(t, path)
	files := make([]File, 20000)
	for i := range files {
		files[i] = File{Path: strings.Repeat("x", 40) + strconv.Itoa(i), Type: '0', Mode: 0o644}
	}
	if err := d.Commit([]*Record{{Name: "big", Version: "1"}}, []*FileList{writeFiles(t, d, files)}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	if st.Blocks*512 < st.Size { // SEEK_HOLE would count allocated, unwritten blocks as a hole
		t.Errorf("%d bytes of blocks for a file of %d", st.Blocks*512, st.Size)
	}
}

// TestHoleOfAnother checks that the first write of a process gives the database blocks for
// the size another left with a hole (its own file grown by ftruncate, then cut short), on
// XFS, as it does for the size it grows itself.
func TestHoleOfAnother(t *testing.T) {
	path := filepath.Join(testfs.Mount(t, "xfs"), "db")
	if err := open(t, path).PutSaid("x", "a"); err != nil { // a write transaction
		t.Fatal(err)
	}
	st := blocks(t, path)
	if err := os.Truncate(path, st.Size+1<<20); err != nil { // a hole of 1 MiB at the end
		t.Fatal(err)
	}
	if err := open(t, path).PutSaid("x", "b"); err != nil {
		t.Fatal(err)
	}
	if st := blocks(t, path); st.Blocks*512 < st.Size {
		t.Errorf("%d bytes of blocks for a file of %d", st.Blocks*512, st.Size)
	}
}

// blocks returns the stat of the file at path.
func blocks(t *testing.T, path string) unix.Stat_t {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestFirstCommitsSyncs counts, with strace, the fsyncs and fdatasyncs of a new database's
// creation, intents and first write transaction (a root's first install: its intents, then
// its records) on XFS: none for the creation, which the first transaction makes durable and
// which needs no directory fsync there, none for the intents, which are names there, and
// one fdatasync for the transaction, which seals it where bbolt would sync twice (seal),
// none for growing the file past its first size, which that fdatasync writes too.
func TestFirstCommitsSyncs(t *testing.T) {
	if dir := os.Getenv("PKG_DB_SYNCS"); dir != "" { // the process strace watches
		d := open(t, filepath.Join(dir, "db"))
		if err := d.SetIntents([]Intent{{Op: "install", Name: "big", Staging: "s", Inode: 7}}); err != nil {
			t.Fatal(err)
		}
		files := make([]File, 40000) // past the file's first size (initialSize)
		for i := range files {
			files[i] = File{Path: fmt.Sprintf("usr/lib/big/file%05d", i), Type: '0', Mode: 0o644}
		}
		if err := d.Commit([]*Record{{Name: "big", Version: "1"}}, []*FileList{writeFiles(t, d, files)}, nil); err != nil {
			t.Fatal(err)
		}
		return
	}
	dir := testfs.Mount(t, "xfs")
	lines := straceSelf(t, "PKG_DB_SYNCS", dir, "-y", "-e", "trace=fsync,fdatasync")
	if calls, want := testfs.SyncCalls(lines, dir), map[string]int{"fdatasync": 1}; !reflect.DeepEqual(calls, want) {
		t.Errorf("syncs = %v, want %v:\n%s", calls, want, strings.Join(lines, "\n"))
	}
}

// straceSelf runs t's test again in a child process under strace with args (what to
// trace), the environment variable env set to dir, and returns strace's lines.
func straceSelf(t *testing.T, env, dir string, args ...string) []string {
	t.Helper()
	testfs.NeedTools(t, "strace")
	out := filepath.Join(t.TempDir(), "strace")
	args = append([]string{"-f", "-qq", "-o", out}, args...)
	cmd := exec.Command("strace", append(args, os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1")...)
	cmd.Env = append(os.Environ(), env+"="+dir)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\n")
}

// BenchmarkCreate creates a database and runs a root's first two write transactions on
// it (intents, then a record with a file list of 2,000 files), as a first install does, on
// XFS.
func BenchmarkCreate(b *testing.B) {
	dir := testfs.Mount(b, "xfs")
	files := make([]File, 2000)
	for i := range files {
		files[i] = File{Path: fmt.Sprintf("usr/lib/big/file%05d", i), Type: '0', Mode: 0o644}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		d := open(b, filepath.Join(dir, strconv.Itoa(i)))
		if err := d.SetIntents([]Intent{{Op: "install", Name: "big", Staging: "s", Inode: 7}}); err != nil {
			b.Fatal(err)
		}
		if err := d.Commit([]*Record{{Name: "big", Version: "1"}}, []*FileList{writeFiles(b, d, files)}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReads runs the reads of an install's planning (a dozen, each a transaction),
// with the file held open between them (Options.Hold) and opened for each.
func BenchmarkReads(b *testing.B) {
	for _, hold := range []bool{false, true} {
		b.Run("hold="+strconv.FormatBool(hold), func(b *testing.B) {
			d, err := Open(filepath.Join(b.TempDir(), "db"), Options{Hold: hold})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Release()
			if err := d.SetIntents(nil); err != nil { // the buckets
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				for range 12 {
					if _, err := d.List(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// TestHeldReader checks that a DB holding its file open for reads sees its own writes, lets
// another DB of the file read meanwhile and write once released.
func TestHeldReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	d := openHeld(t, path)
	if ps, err := d.List(); err != nil || len(ps) != 0 {
		t.Fatalf("List: %v, %v", ps, err)
	}
	commitEmpty(t, d, "a") // waits for no reader of its own
	if ps, err := d.List(); err != nil || len(ps) != 1 {
		t.Errorf("List after a write: %v, %v", ps, err)
	}
	other := open(t, path)
	if ps, err := other.List(); err != nil || len(ps) != 1 {
		t.Errorf("another DB's List while held: %v, %v", ps, err)
	}
	if err := other.Commit(nil, nil, []string{"a"}); err == nil {
		t.Error("another DB wrote while the file was held for reads")
	}
	if err := d.Release(); err != nil {
		t.Fatal(err)
	}
	if err := other.Commit(nil, nil, []string{"a"}); err != nil {
		t.Errorf("another DB's write after Release: %v", err)
	}
	if ps, err := d.List(); err != nil || len(ps) != 0 {
		t.Errorf("List after Release and another's write: %v, %v", ps, err)
	}
}

// TestKeptWriter checks that a DB holding its file (Options.Hold) serves the reads after a
// write, and the next write, from that write's open of the file, letting other processes
// read meanwhile; and that a write while another process reads waits for it, as one that
// opens the file does.
func TestKeptWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	d := openHeld(t, path)
	defer d.Release()
	commitEmpty(t, d, "a")
	first := d.file
	if ps, err := d.List(); err != nil || len(ps) != 1 {
		t.Errorf("List after a write: %v, %v", ps, err)
	}
	if ps, err := open(t, path).List(); err != nil || len(ps) != 1 {
		t.Errorf("another DB's List after a write: %v, %v", ps, err)
	}
	if err := d.Commit(nil, nil, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if d.file != first {
		t.Error("a write, the reads after it and the next write opened the file more than once")
	}
	if ps, err := d.List(); err != nil || len(ps) != 0 {
		t.Errorf("List after the second write: %v, %v", ps, err)
	}

	files := writeFiles(t, d, nil)
	reader, err := os.Open(path) // another process reading: its shared lock
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if err := unix.Flock(int(reader.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	var busy *BusyError
	if err := d.Commit([]*Record{{Name: "b", Version: "1"}}, []*FileList{files}, nil); !errors.As(err, &busy) {
		t.Errorf("a write while another process reads: %v, want a *BusyError", err)
	}
	unix.Flock(int(reader.Fd()), unix.LOCK_UN)
	if err := d.Commit([]*Record{{Name: "b", Version: "1"}}, []*FileList{files}, nil); err != nil {
		t.Errorf("a write once the other process has read: %v", err)
	}
	if ps, err := d.List(); err != nil || len(ps) != 1 || ps[0].Name != "b" {
		t.Errorf("List after the third write: %v, %v", ps, err)
	}
}

// TestCreateLinksWhenDurable: a database Open creates has its name only once durable: after
// its first write transaction, or synced at Release where none came. Until then it is read
// and written under its temporary name, and a crash leaves no database.
func TestCreateLinksWhenDurable(t *testing.T) {
	for _, write := range []bool{true, false} {
		path := filepath.Join(t.TempDir(), "db")
		d := open(t, path)
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the database before any write: %v; want no file", err)
		}
		if ps, err := d.List(); err != nil || len(ps) != 0 {
			t.Fatalf("List of a new database = %v, %v", ps, err)
		}
		if write {
			if err := d.SetIntents([]Intent{{Op: "install", Name: "a", Staging: "s"}}); err != nil {
				t.Fatal(err)
			}
		} else if err := d.Release(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path + ".new"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("write %v: the temporary file: %v; want it gone", write, err)
		}
		ins, err := open(t, path).Intents()
		if err != nil || len(ins) != map[bool]int{true: 1, false: 0}[write] {
			t.Errorf("write %v: Intents read again = %v, %v", write, ins, err)
		}
	}
}

// TestIntentNames: on XFS and btrfs, intents are names of empty files beside the database,
// read back as they were set, each replacing a pending one of its package; a commit makes
// them void (one left behind, as a crash can leave it, is not pending) and removes them
// before the next read of the intents;
// clearing removes them; an intent whose name would be too long is a transaction's, as
// before.
func TestIntentNames(t *testing.T) {
	for _, fs := range []string{"xfs", "btrfs"} {
		t.Run(fs, func(t *testing.T) { intentNamesOn(t, fs) })
	}
}

// TestReleaseWaitsTidy: Release returns only once the names a commit made void are gone,
// as the root's lock, given up after it, must not leave them to another command.
func TestReleaseWaitsTidy(t *testing.T) {
	path := filepath.Join(testfs.Mount(t, "xfs"), "db")
	d := openHeld(t, path)
	if err := d.SetIntents([]Intent{{Op: "install", Name: "a", Staging: ".pkg/staging/a", Inode: 1}}); err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	testHookTidy = func() { <-gate }
	defer func() { testHookTidy = nil }()
	commitEmpty(t, d, "a")
	released := make(chan []string)
	go func() {
		d.Release()
		left, _ := filepath.Glob(filepath.Join(path+".intents", "*"))
		released <- left
	}()
	time.Sleep(20 * time.Millisecond) // a Release that did not wait returns in this while
	close(gate)
	if left := <-released; len(left) != 0 {
		t.Errorf("intent names when Release returned: %v", left)
	}
}

func intentNamesOn(t *testing.T, fs string) {
	path := filepath.Join(testfs.Mount(t, fs), "db")
	skipUntracked(t, filepath.Dir(path))
	d := open(t, path)
	a := Intent{Op: "install", Name: "@scope/a@1.0.0", Staging: ".pkg/staging/a 1.7", Inode: 12, OldInode: 34}
	b := Intent{Op: "remove", Name: "b", Staging: ".pkg/trash/b.9"}
	if err := d.SetIntents([]Intent{a, {Op: "install", Name: "b", Staging: "x"}}); err != nil {
		t.Fatal(err)
	}
	if err := d.SetIntents([]Intent{b}); err != nil {
		t.Fatal(err)
	}
	names, err := filepath.Glob(filepath.Join(path+".intents", "*"))
	if err != nil || len(names) != 2 {
		t.Fatalf("intent names %v, %v; want two", names, err)
	}
	if got, err := d.Intents(); err != nil || !reflect.DeepEqual(got, []Intent{a, b}) {
		t.Errorf("Intents = %+v, %v; want %+v", got, err, []Intent{a, b})
	}
	if err := d.Commit([]*Record{{Name: "@scope/a", Version: "1.0.0", Kind: "npm"}}, []*FileList{writeFiles(t, d, nil)}, []string{"b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Intents(); err != nil { // which waits for their removal
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(path+".intents", "*")); len(left) != 0 {
		t.Errorf("intent names after the commit: %v", left)
	}
	for _, name := range names { // as a crash that lost their removal leaves them
		if err := os.WriteFile(name, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := open(t, path).Intents(); err != nil || len(got) != 0 {
		t.Errorf("Intents after the commit = %+v, %v; want none", got, err)
	}
	long := Intent{Op: "install", Name: strings.Repeat("n", 250), Staging: "s"}
	if err := d.SetIntents([]Intent{a, long}); err != nil {
		t.Fatal(err)
	}
	if got, err := d.Intents(); err != nil || !reflect.DeepEqual(got, []Intent{a, long}) {
		t.Errorf("Intents with a long name = %+v, %v; want %+v", got, err, []Intent{a, long})
	}
	if err := d.ClearIntents(a.Name, long.Name); err != nil {
		t.Fatal(err)
	}
	if got, err := d.Intents(); err != nil || len(got) != 0 {
		t.Errorf("Intents after ClearIntents = %+v, %v; want none", got, err)
	}
}

// TestIntentNamesLinked: on XFS and ext4, the names of a change's intents are hard links of
// one empty file, which take no inode each; where the filesystem allows no more links to it
// (ext4: 65,000), the next name is a file of its own, and the names after it its links. On
// btrfs, where a link costs more the more the inode has, each is a file of its own.
func TestIntentNamesLinked(t *testing.T) {
	for _, fs := range []string{"xfs", "ext4", "btrfs"} {
		t.Run(fs, func(t *testing.T) {
			path := filepath.Join(testfs.Mount(t, fs), "db")
			skipUntracked(t, filepath.Dir(path))
			n := 3
			if fs == "ext4" {
				n = 65_002 // the first file's 65,000 names, then a second file's two
			}
			ins := make([]Intent, n)
			for i := range ins {
				ins[i] = Intent{Op: "install", Name: fmt.Sprintf("p%d", i), Staging: fmt.Sprintf(".pkg/staging/p%d", i), Inode: uint64(i)}
			}
			d := open(t, path)
			if err := d.SetIntents(ins); err != nil {
				t.Fatal(err)
			}
			names, err := filepath.Glob(filepath.Join(path+".intents", "*"))
			if err != nil || len(names) != n {
				t.Fatalf("%d intent names, %v; want %d", len(names), err, n)
			}
			links := make(map[uint64]uint64) // inode → its links
			for _, name := range names {
				var st unix.Stat_t
				if err := unix.Lstat(name, &st); err != nil {
					t.Fatal(err)
				}
				links[st.Ino] = uint64(st.Nlink)
			}
			want := map[string][]uint64{"xfs": {3}, "ext4": {2, 65_000}, "btrfs": {1, 1, 1}}[fs]
			if got := slices.Sorted(maps.Values(links)); !slices.Equal(got, want) {
				t.Errorf("%d names are inodes of %v links; want %v", n, got, want)
			}
			if got, err := d.Intents(); err != nil || len(got) != n {
				t.Errorf("Intents = %d, %v; want %d", len(got), err, n)
			}
		})
	}
}

// TestOpenFIFO: a FIFO where the database or its temporary file is does not block Open
// or a read: the one at the temporary name is no commit to take, the other no database.
func TestOpenFIFO(t *testing.T) {
	for _, name := range []string{"db.new", "db"} {
		path := filepath.Join(t.TempDir(), "db")
		if err := unix.Mkfifo(filepath.Join(filepath.Dir(path), name), 0o644); err != nil {
			t.Fatal(err)
		}
		err := returnsWithin(t, 5*time.Second, "Open and List with a FIFO at "+name, func() error {
			d, err := Open(path, Options{Timeout: 200 * time.Millisecond})
			if err == nil {
				_, err = d.List()
			}
			return err
		})
		if name == "db" && err == nil {
			t.Errorf("a FIFO at the database's name read as a database")
		} else if name == "db.new" && err != nil {
			t.Errorf("a FIFO at the temporary name: %v; want a database made in its place", err)
		}
	}
}

// TestIntentNameMalformed: an entry of the intents' directory that is not an intent (left
// by a hand, or a damaged directory) is an error that names where it is, the name escaped.
func TestIntentNameMalformed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	if err := os.MkdirAll(path+".intents", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path+".intents", "x\x1b[2J"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := open(t, path).Intents()
	if err == nil || !strings.Contains(err.Error(), path+".intents") || !strings.Contains(err.Error(), `"x\x1b[2J"`) {
		t.Errorf("Intents with a malformed name: %v; want an error naming %s and the name escaped", err, path+".intents")
	}
}

// TestAdoptAfterCrash: a new database whose link a crash took after its first transaction
// (the records of a commit whose trees are in place) is taken at the next Open, its records
// whole; one a crash left before any transaction is made again, empty.
func TestAdoptAfterCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	d := open(t, path)
	commitEmpty(t, d, "a")
	// The link and what came after it lost: the file at its temporary name, no sum.
	if err := os.Rename(path, path+".new"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path + ".sum"); err != nil {
		t.Fatal(err)
	}
	if ro, err := Open(path, Options{NoCreate: true}); err != nil {
		t.Errorf("a reader's Open of the database at its temporary name: %v", err)
	} else {
		if p, err := ro.Get("a"); err != nil || p.Version != "1" {
			t.Errorf("a reader's Get at the temporary name = %+v, %v; want a 1", p, err)
		}
		if err := ro.Release(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the database after a reader's Release: %v; want it left to the lock's holder to take", err)
		}
	}
	if p, err := open(t, path).Get("a"); err != nil || p.Version != "1" {
		t.Errorf("Get after the crash = %+v, %v; want a 1", p, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the database after it was taken: %v", err)
	}
	if _, err := os.Stat(path + ".new"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the temporary file after it was taken: %v; want it gone", err)
	}

	// Created, and cut before a transaction: no commit to take.
	path = filepath.Join(t.TempDir(), "db")
	open(t, path) // never released
	if _, err := os.Stat(path + ".new"); err != nil {
		t.Fatalf("the new database before a write: %v", err)
	}
	if _, err := Open(path, Options{NoCreate: true}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a reader's Open of a database with no commit: %v; want fs.ErrNotExist", err)
	}
	if ps, err := open(t, path).List(); err != nil || len(ps) != 0 {
		t.Errorf("List of the database made again = %+v, %v; want none", ps, err)
	}
}

// TestSealedAfterCrash: a new database's first commit, sealed (one fdatasync) on XFS, whose
// link a crash took, is taken at the next Open only where its seal is the sum of its pages:
// not where the seal is missing (its meta page written back before it) or a page in use
// reads as zeros (not on the disk when the power went), where the database is made again,
// empty. A new database released before any write is written whole (emptyDatabase), so
// that its first commit, two fdatasyncs, is not taken for a sealed one.
func TestSealedAfterCrash(t *testing.T) {
	mnt := testfs.Mount(t, "xfs")
	page := int64(os.Getpagesize())
	tests := []struct {
		name  string
		crash func(t *testing.T, f *os.File)
		taken bool
	}{
		{"whole", func(*testing.T, *os.File) {}, true},
		{"its seal not written", func(t *testing.T, f *os.File) {
			if _, err := f.WriteAt(make([]byte, sumSize), sealAt); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"its meta page naming pages past the file's end", func(t *testing.T, f *os.File) {
			b := make([]byte, sealAt+sumSize)
			if _, err := f.ReadAt(b, 0); err != nil {
				t.Fatal(err)
			}
			const pages = 1 << 40 // its pages are then summed for hours
			m := b[pageHeaderSize:sealAt]
			binary.NativeEndian.PutUint64(b[metaPagesAt:], pages)
			binary.NativeEndian.PutUint64(m[metaSize-8:], metaSum(m))
			s, _ := decodeSum(b[sealAt:])
			s.pages = pages
			copy(b[sealAt:], s.encode())
			if _, err := f.WriteAt(b, 0); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"its last page not written", func(t *testing.T, f *os.File) {
			var m [pageHeaderSize + 64]byte
			if _, err := f.ReadAt(m[:], 0); err != nil {
				t.Fatal(err)
			}
			last := int64(binary.LittleEndian.Uint64(m[metaPagesAt:])) - 1
			if _, err := f.WriteAt(make([]byte, page), last*page); err != nil {
				t.Fatal(err)
			}
		}, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(mnt, strconv.Itoa(i))
			d := open(t, path)
			if err := d.Commit([]*Record{{Name: "a", Version: "1"}}, []*FileList{writeFiles(t, d, []File{{Path: "x", Type: '0', Mode: 0o644}})}, nil); err != nil {
				t.Fatal(err)
			}
			if err := d.Release(); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			var seal [sumSize]byte
			if _, err := f.ReadAt(seal[:], sealAt); err != nil {
				t.Fatal(err)
			}
			if s, ok := decodeSum(seal[:]); !ok || s.txid != 2 {
				t.Fatalf("the first commit's seal = %+v, %v; want transaction 2's", s, ok)
			}
			tt.crash(t, f)
			f.Close()
			if err := os.Rename(path, path+".new"); err != nil {
				t.Fatal(err)
			}
			os.Remove(path + ".sum")
			again := open(t, path)
			defer again.Release()
			ps, err := again.List()
			if err != nil || (len(ps) == 1) != tt.taken || len(ps) > 1 {
				t.Errorf("List after the crash = %d records, %v; want the commit taken: %v", len(ps), err, tt.taken)
			}
		})
	}

	path := filepath.Join(mnt, "released")
	if err := open(t, path).Release(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := emptyDatabase(); !bytes.Equal(b[:len(want)], want) {
		t.Errorf("a new database released before a write is not bbolt's empty database")
	}
}

// TestStrayRemoved: a file create makes (path.new) found beside a database is removed by
// an Open that may create, not by a reader's: an empty database never adopted, and adopt's
// own link cut short before its removal. One that holds a commit and is another file is
// kept, as what the database may not hold.
func TestStrayRemoved(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	d := open(t, path)
	if err := d.Release(); err != nil { // adopts the empty database
		t.Fatal(err)
	}
	empty, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	stray := func(what string, make func() error, removed bool) {
		t.Helper()
		if err := make(); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(path, Options{NoCreate: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path + ".new"); err != nil {
			t.Errorf("%s after a reader's Open: %v; want it kept", what, err)
		}
		open(t, path)
		_, err := os.Stat(path + ".new")
		if removed && !errors.Is(err, fs.ErrNotExist) || !removed && err != nil {
			t.Errorf("%s after Open: %v; want it removed %v", what, err, removed)
		}
	}
	stray("an empty database", func() error { return os.WriteFile(path+".new", empty, 0o644) }, true)
	stray("adopt's link", func() error { return os.Link(path, path+".new") }, true)

	other := filepath.Join(t.TempDir(), "db")
	o := open(t, other)
	if err := o.Commit([]*Record{{Name: "a", Version: "1"}}, []*FileList{writeFiles(t, o, nil)}, nil); err != nil {
		t.Fatal(err)
	}
	stray("another file holding a commit", func() error { return os.Rename(other, path+".new") }, false)
}

// TestCarry commits thrice on XFS, which logs metadata in order: each commit changes the
// file's size by its one byte past bbolt's pages (carry), so that bbolt's first fdatasync
// must force the log, and takes nothing of bbolt's: the records stay whole and checked,
// and the byte gets no block of its own (allocate).
func TestCarry(t *testing.T) {
	path := filepath.Join(testfs.Mount(t, "xfs"), "db")
	d := open(t, path)
	var sizes []int64
	var blocks int64
	for i := range 3 {
		p := &Record{Name: fmt.Sprintf("p%d", i), Version: "1"}
		if err := d.Commit([]*Record{p}, []*FileList{writeFiles(t, d, nil)}, nil); err != nil {
			t.Fatal(err)
		}
		var st unix.Stat_t
		if err := unix.Stat(path, &st); err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, st.Size)
		if i == 0 {
			blocks = st.Blocks
		} else if st.Blocks != blocks {
			t.Errorf("commit %d: %d blocks, want %d", i, st.Blocks, blocks)
		}
	}
	if s := sizes[1]; s%2 != 0 || sizes[0] != s+1 || sizes[2] != s+1 {
		t.Errorf("sizes = %v, want odd, even, odd, one byte apart", sizes)
	}
	if err := d.Check(); err != nil {
		t.Fatal(err)
	}
	got, err := open(t, path).List()
	if err != nil || len(got) != 3 {
		t.Fatalf("List = %d records, %v; want 3", len(got), err)
	}
}

// TestCarryDurable cuts the power (testfs.Shutdown) just after a commit on XFS and ext4,
// as install commits a tree: a file written (not cloned) in a staged directory, its data
// waited for (durable.Files.Wait), the directory renamed into another, and no sync of
// pkg's own until the commit. The tree is there whole after the cut, as the commit's
// record is. The database's blocks are all written beforehand, so that bbolt's fdatasyncs
// have no extent to convert, which would force the log anyway: only carry's size change
// has them carry the tree. Where the file may not grow (RLIMIT_FSIZE: EFBIG), carry's
// syncfs does.
func TestCarryDurable(t *testing.T) {
	for _, name := range []string{"xfs", "ext4", "xfs-fixed", "ext4-fixed"} {
		t.Run(name, func(t *testing.T) {
			kind, fixed := strings.CutSuffix(name, "-fixed")
			if f := flag.Lookup("test.testlogfile"); fixed && f != nil && f.Value.String() != "" {
				// The limit is the process's: go test's log of the files a test opens,
				// kept where results are cached (without -count=1), would fail with EFBIG.
				t.Skip("RLIMIT_FSIZE would cut go test's own log short: run with -count=1")
			}
			mnt := testfs.Mount(t, kind)
			path := filepath.Join(mnt, "db")
			commit := func(d *DB, name string) {
				t.Helper()
				p := &Record{Name: name, Version: "1"}
				if err := d.Commit([]*Record{p}, []*FileList{writeFiles(t, d, nil)}, nil); err != nil {
					t.Fatal(err)
				}
			}
			staged, tree := filepath.Join(mnt, "staging", "t"), filepath.Join(mnt, "pkgs", "t")
			for _, dir := range []string{filepath.Dir(staged), filepath.Dir(tree)} {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			d := open(t, path)
			commit(d, "p0") // which keeps no file open after it
			records := 2
			if fixed {
				commit(d, "p0b") // the size even again: the next carry would grow it
				records++
			}
			testfs.Rewrite(t, path)
			data := bytes.Repeat([]byte("pkg"), 100_000)
			if err := os.Mkdir(staged, 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := os.Create(filepath.Join(staged, "f"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write(data); err != nil {
				t.Fatal(err)
			}
			if err := durable.ForFS(int(f.Fd())).Wait(int(f.Fd())); err != nil {
				t.Fatal(err)
			}
			f.Close()
			if err := os.Rename(staged, tree); err != nil {
				t.Fatal(err)
			}
			if fixed {
				var st unix.Stat_t
				var was unix.Rlimit
				if err := unix.Stat(path, &st); err != nil || st.Size%2 != 0 || unix.Getrlimit(unix.RLIMIT_FSIZE, &was) != nil {
					t.Fatalf("stat %s: size %d, %v", path, st.Size, err)
				}
				if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: uint64(st.Size), Max: was.Max}); err != nil {
					t.Fatal(err)
				}
				defer unix.Setrlimit(unix.RLIMIT_FSIZE, &was)
			}
			commit(d, "p1")
			if err := testfs.Shutdown(mnt); err != nil {
				t.Fatal(err)
			}
			testfs.Remount(t, mnt)
			if got, err := os.ReadFile(filepath.Join(tree, "f")); err != nil || !bytes.Equal(got, data) {
				t.Errorf("the tree renamed before the commit did not last the cut whole: %d bytes, %v", len(got), err)
			}
			if got, err := open(t, path).List(); err != nil || len(got) != records {
				t.Errorf("List = %d records, %v; want %d", len(got), err, records)
			}
		})
	}
}

// TestEmptyDatabase checks that the file create writes is byte for byte the one bbolt
// writes into an empty file, and that bbolt opens it as an empty database.
func TestEmptyDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	b, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := emptyDatabase(); !bytes.Equal(got, want) {
		t.Fatalf("emptyDatabase: %d bytes unlike bbolt's %d", len(got), len(want))
	}
	mine := filepath.Join(t.TempDir(), "db")
	if err := os.WriteFile(mine, emptyDatabase(), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err = bolt.Open(mine, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.View(func(tx *bolt.Tx) error {
		if tx.ID() != 1 || tx.Bucket([]byte("packages")) != nil {
			return fmt.Errorf("transaction %d, holding a packages bucket %v", tx.ID(), tx.Bucket([]byte("packages")) != nil)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestListHeldCopies checks that the Lists of a held file, which decode its records once
// for each write, each return records of their own: a caller that changes one (its
// slices too) changes nothing the next List returns, and a write is seen.
func TestListHeldCopies(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	d := openHeld(t, path)
	defer d.Release()
	p := &Record{Name: "hello", Version: "1", Depends: testrepo.Requires("libgreet>=1|other>=2"), Bin: []repo.Command{repo.ParseCommand("bin/hello")},
		Lib: []string{"lib"}, Env: []string{"A=1"}, Folded: []string{"share"}, Installed: time.Unix(1700000000, 0).UTC()}
	if err := d.Commit([]*Record{p}, []*FileList{writeFiles(t, d, nil)}, nil); err != nil {
		t.Fatal(err)
	}
	first, err := d.List()
	if err != nil || len(first) != 1 {
		t.Fatalf("List: %v, %v", first, err)
	}
	fresh, err := open(t, path).List() // another DB decodes the file anew
	if err != nil || len(fresh) != 1 {
		t.Fatalf("another DB's List: %v, %v", fresh, err)
	}
	want := fresh[0]
	first[0].Lib[0], first[0].Env[0], first[0].Folded[0] = "x", "x", "x"
	first[0].Depends[0].Constraints[0].Version, first[0].Depends[0].Or[0].Name = "999", "x"
	first[0].Depends = append(first[0].Depends[:0], testrepo.Requires("x")...)
	first[0].Bin[0] = repo.ParseCommand("x")
	again, err := d.List()
	if err != nil || len(again) != 1 || !reflect.DeepEqual(again[0], want) {
		t.Fatalf("List after its last result was changed = %+v, %v; want %+v", again, err, want)
	}
	commitEmpty(t, d, "other")
	if after, err := d.List(); err != nil || len(after) != 2 {
		t.Errorf("List after a write = %+v, %v; want 2 records", after, err)
	}
}

// TestRecordCloneSlices checks that Record.clone copies every slice, map and pointer a
// Record has, and those of their elements, so that a field added later is not shared
// between Lists.
func TestRecordCloneSlices(t *testing.T) {
	var r Record
	fillRefs(reflect.ValueOf(&r).Elem(), 3)
	sharedRefs(t, "Record", reflect.ValueOf(r), reflect.ValueOf(r.clone()))
}

// fillRefs gives each settable slice under v one element, each map none, each pointer a
// value, depth references deep.
func fillRefs(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				fillRefs(f, depth)
			}
		}
	case reflect.Slice:
		if depth > 0 {
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
			fillRefs(v.Index(0), depth-1)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
	case reflect.Pointer:
		if depth > 0 {
			v.Set(reflect.New(v.Type().Elem()))
			fillRefs(v.Elem(), depth-1)
		}
	}
}

// sharedRefs reports each slice, map or pointer under a, named from at, that b shares.
func sharedRefs(t *testing.T, at string, a, b reflect.Value) {
	t.Helper()
	switch a.Kind() {
	case reflect.Struct:
		for i := range a.NumField() {
			sharedRefs(t, at+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i))
		}
	case reflect.Slice:
		if a.Len() > 0 && a.Pointer() == b.Pointer() {
			t.Errorf("clone shares %s", at)
		}
		for i := 0; i < min(a.Len(), b.Len()); i++ {
			sharedRefs(t, at+"[]", a.Index(i), b.Index(i))
		}
	case reflect.Map, reflect.Pointer:
		if !a.IsNil() && a.Pointer() == b.Pointer() {
			t.Errorf("clone shares %s", at)
		}
		if a.Kind() == reflect.Pointer && !a.IsNil() && !b.IsNil() {
			sharedRefs(t, at, a.Elem(), b.Elem())
		}
	}
}

// TestCommitPrimesList: the records a held DB's commit leaves are decoded beside its sync,
// so that the List after it (an install's roll-forward) decodes nothing: they are the
// memo of the new transaction id, and List returns what another DB reads from the file.
func TestCommitPrimesList(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	d := openHeld(t, path)
	defer d.Release()
	for i, names := range [][]string{{"a", "b"}, {"c"}} {
		var ps []*Record
		var fs []*FileList
		for _, n := range names {
			ps = append(ps, &Record{Name: n, Version: "1", Summary: "the " + n})
			fs = append(fs, writeFiles(t, d, nil))
		}
		var remove []string
		if i == 1 {
			remove = []string{"a"}
		}
		if err := d.CommitRequested(ps, fs, remove, nil, nil); err != nil {
			t.Fatal(err)
		}
		id := lastTxID(t, d)
		if d.listed.db == nil || d.listed.id != id {
			t.Errorf("commit %d: the memo is of transaction %d, want %d (the commit's)", i, d.listed.id, id)
		}
		got, err := d.List()
		if err != nil {
			t.Fatal(err)
		}
		other := open(t, path)
		want, err := other.List()
		other.Release()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("commit %d: List = %+v, want %+v as read from the file", i, got, want)
		}
	}
}

// BenchmarkCommitList commits 229 records into a held database, as an install of the npm
// tree of bench/peers.sh does, and lists them, as its roll-forward does next: the commit's
// records are decoded while its pages are synced (prime), so the List only clones them.
func BenchmarkCommitList(b *testing.B) {
	d := openHeld(b, filepath.Join(b.TempDir(), "db"))
	defer d.Release()
	ps := make([]*Record, 229)
	keys := make([]string, len(ps))
	for i := range ps {
		ps[i] = &Record{Name: fmt.Sprintf("p%03d", i), Version: "1.0.0", Kind: "npm", SHA256: strings.Repeat("a", 64),
			Depends: testrepo.Requires(fmt.Sprintf("p%03d>=1", (i+1)%len(ps))), Files: 30, Size: 4096, Into: "lib/node_modules/.pnpm/p@1.0.0/node_modules/p"}
		keys[i] = ps[i].Key()
	}
	b.ReportAllocs()
	for b.Loop() {
		files := make([]*FileList, len(ps))
		for i := range files {
			files[i] = writeFiles(b, d, nil)
		}
		if err := d.CommitRequested(ps, files, nil, nil, nil); err != nil {
			b.Fatal(err)
		}
		if recs, err := d.List(); err != nil || len(recs) != len(ps) {
			b.Fatalf("List = %d records, %v", len(recs), err)
		}
		b.StopTimer()
		if err := d.CommitRequested(nil, nil, keys, nil, nil); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// TestSealedCut cuts the power during a new database's sealed first commit, its pages and
// meta page written back and the log not forced, before the seal's sync: on XFS and ext4,
// where the first page's extent is still unwritten and its conversion is logged after
// the rename made before the commit, and on ext4 mounted dioread_lock with
// extent_max_zeroout_kb past the file's first 128 KiB, whose write-back of the pages
// create wrote (here before the rename, as staging's syncfs may) writes the other blocks as
// zeros and marks them written, so that the meta page and the commit's pages need no log
// to be read after a crash (carry then syncs first). After the cut, the commit is taken
// only with the rename made before it.
func TestSealedCut(t *testing.T) {
	for _, name := range []string{"xfs", "ext4", "ext4-zeroed-out", "ext4fc", "ext4fc-zeroed-out"} {
		t.Run(name, func(t *testing.T) {
			kind, zeroed := strings.CutSuffix(name, "-zeroed-out")
			mnt := testfs.Mount(t, kind)
			if zeroed {
				zeroOut(t, mnt)
			}
			path := filepath.Join(mnt, "db")
			d := open(t, path)
			f, err := os.Open(path + ".new")
			if err != nil {
				t.Fatal(err)
			}
			if err := unix.Fdatasync(int(f.Fd())); err != nil {
				t.Fatal(err)
			}
			if firstUnwritten(f) == zeroed {
				t.Skipf("the first page unwritten: %v", !zeroed)
			}
			f.Close()
			if err := os.Mkdir(filepath.Join(mnt, "staged"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(mnt, "staged"), filepath.Join(mnt, "tree")); err != nil {
				t.Fatal(err)
			}
			dir, err := os.Open(mnt)
			if err != nil {
				t.Fatal(err)
			}
			testHookSealing = func(f *os.File) error {
				const all = unix.SYNC_FILE_RANGE_WAIT_BEFORE | unix.SYNC_FILE_RANGE_WRITE | unix.SYNC_FILE_RANGE_WAIT_AFTER
				if err := unix.SyncFileRange(int(f.Fd()), 0, 0, all); err != nil {
					t.Error(err)
				}
				if err := testfs.ShutdownFile(dir, false); err != nil {
					t.Error(err)
				}
				return nil
			}
			defer func() { testHookSealing = nil }()
			d.Commit([]*Record{{Name: "a", Version: "1"}}, []*FileList{writeFiles(t, d, nil)}, nil) // cut
			d.Release()
			dir.Close()
			testfs.Remount(t, mnt)
			_, err = os.Stat(filepath.Join(mnt, "tree"))
			again := open(t, path)
			defer again.Release()
			ps, lerr := again.List()
			t.Logf("after the cut: %d records (%v), the rename %v", len(ps), lerr, err == nil)
			if len(ps) != 0 && err != nil {
				t.Errorf("the commit is taken without the rename before it: %v", err)
			}
		})
	}
}

// zeroOut remounts the ext4 at mnt dioread_lock, its extent_max_zeroout_kb past the
// database's first size, so that a write-back beside unwritten blocks writes them as zeros
// and marks them written.
func zeroOut(t *testing.T, mnt string) {
	t.Helper()
	testfs.Run(t, "", "mount", "-o", "remount,dioread_lock", mnt)
	if err := os.WriteFile("/sys/fs/ext4/"+testfs.Device(t, mnt)+"/extent_max_zeroout_kb", []byte("256"), 0); err != nil {
		t.Fatal(err)
	}
}

// TestSealFailed: a sealed first commit whose sync fails leaves the file as a read sees it,
// as bbolt's failed fdatasync does (the caller reads it to learn whether the commit is
// there, Apply's recorded): Release syncs it and gives it its name, not bbolt's empty
// database in its place, which a change that went on as committed would not match.
func TestSealFailed(t *testing.T) {
	path := filepath.Join(testfs.Mount(t, "xfs"), "db")
	d := open(t, path)
	failed := errors.New("the seal's sync failed")
	testHookSealing = func(*os.File) error { return failed }
	defer func() { testHookSealing = nil }()
	err := d.Commit([]*Record{{Name: "a", Version: "1"}}, []*FileList{writeFiles(t, d, nil)}, nil)
	if !errors.Is(err, failed) {
		t.Fatalf("Commit with its seal's sync failing: %v; want that failure", err)
	}
	testHookSealing = nil
	if err := d.Release(); err != nil {
		t.Fatal(err)
	}
	again := open(t, path)
	defer again.Release()
	if ps, err := again.List(); err != nil || len(ps) != 1 {
		t.Errorf("List after the failed seal and Release = %d records, %v; want the commit as it was read", len(ps), err)
	}
}

// TestSealedFirstPage: a new database on XFS, ext4 and btrfs is made sealed, its first page
// allocated and unwritten even once the pages create wrote are written back (as a syncfs
// while staging writes them), so that the first commit's meta page is read after a crash
// only where the log holds its extent's conversion (seal).
func TestSealedFirstPage(t *testing.T) {
	for _, kind := range []string{"xfs", "ext4", "btrfs"} {
		t.Run(kind, func(t *testing.T) {
			path := filepath.Join(testfs.Mount(t, kind), "db")
			skipUntracked(t, filepath.Dir(path))
			d := open(t, path)
			defer d.Release()
			f, err := os.Open(path + ".new")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := unix.Syncfs(int(f.Fd())); err != nil {
				t.Fatal(err)
			}
			if !d.sealed || !firstUnwritten(f) {
				t.Errorf("sealed %v, first page unwritten %v; want both", d.sealed, firstUnwritten(f))
			}
		})
	}
}

// skipUntracked skips t where the filesystem at dir is not tracked file by file
// (durable.TracksPath), as btrfs is not under a kernel before Linux 6.1: its intents are no
// names and its first commit is not sealed.
func skipUntracked(t *testing.T, dir string) {
	t.Helper()
	if !durable.TracksPath(dir) {
		t.Skipf("%s is synced whole under this kernel (durable.ForFS), not file by file", dir)
	}
}

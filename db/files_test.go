package db

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// writeFiles is WriteFiles of files in any order.
func writeFiles(t testing.TB, d *DB, files []File) *FileList {
	t.Helper()
	sorted := slices.SortedFunc(slices.Values(files), func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	l, err := d.WriteFiles(slices.Values(sorted))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// appendOldFile appends f's record as a list from before listMark held it (decodeOldFiles).
func appendOldFile(v []byte, f *File) []byte {
	v = binary.AppendUvarint(v, uint64(len(f.Path)))
	v = append(v, f.Path...)
	v = append(v, f.Type)
	v = binary.BigEndian.AppendUint32(v, uint32(f.Mode))
	v = binary.BigEndian.AppendUint64(v, uint64(f.Size))
	return append(v, f.SHA256[:]...)
}

// oldChunk returns files as a chunk of refMark's records.
func oldChunk(files []File) []byte {
	var chunk []byte
	for i := range files {
		chunk = appendOldFile(chunk, &files[i])
	}
	return chunk
}

// manyFiles returns n files, sorted by path, whose records take about n KiB.
func manyFiles(prefix string, n int) []File {
	files := make([]File, n)
	for i := range files {
		files[i] = File{Path: fmt.Sprintf("%s/%07d/%s", prefix, i, strings.Repeat("n", 960)), Type: '0', Mode: 0o644, Size: int64(i)}
		files[i].SHA256 = sha256.Sum256([]byte(files[i].Path))
	}
	return files
}

// rawUpdate runs fn in a write transaction of bbolt's own on the database at path, as an
// older pkg or a damage would write it.
func rawUpdate(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	b, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(b.Update(fn), b.Close()); err != nil {
		t.Fatal(err)
	}
}

// withBuckets opens a new database in a temporary directory and makes its buckets, for a
// test that writes to them with rawUpdate; it returns the database and its path.
func withBuckets(t *testing.T) (string, *DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "db")
	d := open(t, path)
	if err := d.SetIntents(nil); err != nil {
		t.Fatal(err)
	}
	return path, d
}

// aheadFiles is more files than Commit is left to write: WriteFiles writes them ahead.
const aheadFiles = (heldChunks + 2) * chunkSize >> 10

// chunkGens returns the generations the database at path has chunks of, with their
// numbers of chunks.
func chunkGens(t *testing.T, path string) map[uint64]int {
	t.Helper()
	b, err := bolt.Open(path, 0, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	gens := make(map[uint64]int)
	err = b.View(func(tx *bolt.Tx) error {
		err := forEach(tx, chunksBucket, func(k, _ []byte) error { gens[binary.BigEndian.Uint64(k)]++; return nil })
		if err != nil {
			return err
		}
		return forEach(tx, listsBucket, func(k, _ []byte) error {
			return tx.Bucket(listsBucket).Bucket(k).ForEach(func(_, _ []byte) error { gens[binary.BigEndian.Uint64(k)]++; return nil })
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return gens
}

// TestFilesAhead checks that a list longer than Commit writes reads back whole, from both
// readers, and that a replacing commit and a remove delete its chunks.
func TestFilesAhead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	d := open(t, path)
	files := manyFiles("big", aheadFiles)
	l := writeFiles(t, d, files)
	if l.gen == 0 || len(l.held) != 0 {
		t.Fatalf("a list of %d chunks was not written ahead: generation %d, %d chunks held", l.chunks, l.gen, len(l.held))
	}
	if err := d.Commit([]*Record{{Name: "big", Version: "1"}}, []*FileList{l}, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := d.Files("big"); err != nil || !reflect.DeepEqual(got, files) {
		t.Errorf("Files(big) = %d files, %v; want the %d written", len(got), err, len(files))
	}
	if _, got, err := d.Installed("big"); err != nil || !reflect.DeepEqual(got[0], files) {
		t.Errorf("Installed(big): %v", err)
	}
	if gens := chunkGens(t, path); len(gens) != 1 || gens[l.gen] != int(l.chunks) || l.chunks <= heldChunks {
		t.Errorf("chunks after the commit: %v; want %d of generation %d", gens, l.chunks, l.gen)
	}
	small := writeFiles(t, d, files[:1])
	if err := d.Commit([]*Record{{Name: "big", Version: "2"}}, []*FileList{small}, nil); err != nil {
		t.Fatal(err)
	}
	if gens := chunkGens(t, path); len(gens) != 0 || small.gen != 0 {
		t.Errorf("chunks after an upgrade to 1 file: %v (generation %d); want none, the list held in its value", gens, small.gen)
	}
	if got, err := d.Files("big"); err != nil || !reflect.DeepEqual(got, files[:1]) {
		t.Errorf("Files(big) after the upgrade = %v, %v", got, err)
	}
	if err := d.Commit(nil, nil, []string{"big"}); err != nil {
		t.Fatal(err)
	}
	if gens := chunkGens(t, path); len(gens) != 0 {
		t.Errorf("chunks after the remove: %v", gens)
	}
	if err := d.Check(); err != nil {
		t.Error(err)
	}
}

// TestFilesNeverCommitted checks that the chunks of a list whose Commit never came are
// deleted by the next DB's first write, and only they; and that a Commit of a list whose
// chunks are gone fails, changing nothing.
func TestFilesNeverCommitted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	d := open(t, path)
	kept := writeFiles(t, d, manyFiles("kept", aheadFiles))
	if err := d.Commit([]*Record{{Name: "kept", Version: "1"}}, []*FileList{kept}, nil); err != nil {
		t.Fatal(err)
	}
	lost := writeFiles(t, d, manyFiles("lost", aheadFiles))
	if gens := chunkGens(t, path); len(gens) != 2 || gens[lost.gen] == 0 {
		t.Fatalf("chunks before the next DB: %v", gens)
	}
	next := open(t, path)
	if _, err := next.Files("kept"); err != nil { // reads collect nothing
		t.Fatal(err)
	}
	if gens := chunkGens(t, path); len(gens) != 2 {
		t.Errorf("a read collected: %v", gens)
	}
	if err := next.SetIntents([]Intent{{Op: "install", Name: "x", Staging: "s"}}); err != nil {
		t.Fatal(err)
	}
	if gens := chunkGens(t, path); len(gens) != 1 || gens[kept.gen] != int(kept.chunks) {
		t.Errorf("chunks after the next DB's first write: %v; want the %d of generation %d", gens, kept.chunks, kept.gen)
	}
	err := d.Commit([]*Record{{Name: "lost", Version: "1"}}, []*FileList{lost}, nil)
	if !errors.Is(err, errChunksGone) || !strings.Contains(err.Error(), "files of lost") {
		t.Errorf("Commit of a collected list: %v", err)
	}
	if _, err := d.Get("lost"); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Get(lost) after the failed commit: %v", err)
	}
	if got, err := d.Files("kept"); err != nil || len(got) != aheadFiles {
		t.Errorf("Files(kept) = %d files, %v", len(got), err)
	}
}

// TestFilesKilled kills a process between the chunks it writes ahead: the database checks
// whole, holds no package of them, and the next DB's first write deletes them.
func TestFilesKilled(t *testing.T) {
	if path := os.Getenv("DB_TEST_WRITE_FOREVER"); path != "" {
		d, err := Open(path, Options{})
		if err == nil {
			_, err = d.WriteFiles(endless())
		}
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestFilesKilled$")
	cmd.Env = append(os.Environ(), "DB_TEST_WRITE_FOREVER="+path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if info, err := os.Stat(path); err == nil && info.Size() > 3*chunkSize || time.Now().After(deadline) {
			break
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	if gens := chunkGens(t, path); len(gens) != 1 {
		t.Fatalf("chunks written before the kill: %v; want some of one generation", gens)
	}
	d := open(t, path)
	if err := d.Check(); err != nil {
		t.Fatal(err)
	}
	if ps, err := d.List(); err != nil || len(ps) != 0 {
		t.Errorf("List after the kill: %v, %v", ps, err)
	}
	if err := d.PutSaid("x", "a"); err != nil {
		t.Fatal(err)
	}
	if gens := chunkGens(t, path); len(gens) != 0 {
		t.Errorf("chunks after the first write: %v", gens)
	}
}

// endless yields files, sorted by path, without end.
func endless() iter.Seq[File] {
	return func(yield func(File) bool) {
		for i := 0; ; i++ {
			if !yield(File{Path: fmt.Sprintf("%012d/%s", i, strings.Repeat("n", 1000)), Type: '0'}) {
				return
			}
		}
	}
}

// TestWriteFilesUnsorted checks that a list out of path order, or with a path twice, is
// refused.
func TestWriteFilesUnsorted(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "db"))
	for _, paths := range [][]string{{"b", "a"}, {"a", "a"}} {
		var files []File
		for _, p := range paths {
			files = append(files, File{Path: p, Type: '0'})
		}
		if _, err := d.WriteFiles(slices.Values(files)); !errors.Is(err, errUnsorted) {
			t.Errorf("WriteFiles(%q): %v; want errUnsorted", paths, err)
		}
	}
}

// TestEmptyFileList checks that a package without files reads back as one.
func TestEmptyFileList(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "db"))
	commitEmpty(t, d, "empty")
	if got, err := d.Files("empty"); err != nil || len(got) != 0 {
		t.Errorf("Files(empty) = %v, %v", got, err)
	}
	if _, _, err := d.Installed("empty"); err != nil {
		t.Errorf("Installed(empty): %v", err)
	}
}

// BenchmarkCommit writes and commits the file list of a package and removes it.
func BenchmarkCommit(b *testing.B) {
	for _, n := range []int{100, 10000, 80000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			d := open(b, filepath.Join(b.TempDir(), "db"))
			files := make([]File, n) // sorted by path
			for i := range files {
				files[i] = File{Path: fmt.Sprintf("usr/share/pkg/%06d/file.txt", i), Type: '0', Mode: 0o644, Size: 100}
			}
			b.ReportAllocs()
			for b.Loop() {
				l, err := d.WriteFiles(slices.Values(files))
				if err != nil {
					b.Fatal(err)
				}
				if err := d.Commit([]*Record{{Name: "p", Version: "1"}}, []*FileList{l}, nil); err != nil {
					b.Fatal(err)
				}
				if err := d.Commit(nil, nil, []string{"p"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestFilesOldLayout reads a database from before lists had buckets of their own (every
// chunk in chunksBucket, no aheadBucket): its lists read back, a commit replacing one
// deletes its chunks, and the first write deletes the chunks no list refers to.
func TestFilesOldLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	files := manyFiles("old", 10)
	chunk := oldChunk(files)
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		for _, name := range [][]byte{pkgsBucket, filesBucket, intentsBucket, reposBucket, requestedBucket, saidBucket, chunksBucket} {
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		rec, err := json.Marshal(Record{Name: "old", Version: "1", Files: len(files)})
		if err != nil {
			return err
		}
		c := tx.Bucket(chunksBucket)
		return errors.Join(tx.Bucket(pkgsBucket).Put([]byte("old"), rec), c.SetSequence(8),
			c.Put(chunkKey(7, 0), chunk), c.Put(chunkKey(8, 0), chunk), // 8: a list never committed
			tx.Bucket(filesBucket).Put([]byte("old"), ref{gen: 7, chunks: 1, files: uint32(len(files)), old: true}.encode()))
	})
	d := open(t, path)
	if got, err := d.Files("old"); err != nil || !reflect.DeepEqual(got, files) {
		t.Fatalf("Files(old) = %v, %v; want the %d written", got, err, len(files))
	}
	if gens := chunkGens(t, path); len(gens) != 2 {
		t.Fatalf("chunks of the old database: %v", gens)
	}
	l := writeFiles(t, d, files[:2])
	if err := d.Commit([]*Record{{Name: "old", Version: "2"}}, []*FileList{l}, nil); err != nil {
		t.Fatal(err)
	}
	if gens := chunkGens(t, path); len(gens) != 0 {
		t.Errorf("chunks after the first commit: %v; want none, the list of 2 files held in its value", gens)
	}
	if got, err := d.Files("old"); err != nil || !reflect.DeepEqual(got, files[:2]) {
		t.Errorf("Files(old) after the commit = %v, %v", got, err)
	}
}

// BenchmarkFileList encodes a package's file list for Commit (WriteFiles) and reads it back
// (Files, the file held open): what every install, upgrade, remove and verify pays per
// list. Its files are an npm package's shape: paths sharing long prefixes, a directory
// every 16 files, one file in 4 a copy of another's contents.
func BenchmarkFileList(b *testing.B) {
	for _, n := range []int{30, 7800, 80000} {
		files := make([]File, n)
		for i := range files {
			f := &files[i]
			f.Path = fmt.Sprintf("package/dist/%04d/rules/rule-%06d.js", i/16, i)
			f.Type, f.Mode, f.Size = '0', 0o644, int64(i*37%20000)
			f.SHA256 = sha256.Sum256([]byte(fmt.Sprint(i - i%4/3)))
			if i%16 == 0 {
				f.Path, f.Type, f.Mode, f.Size, f.SHA256 = fmt.Sprintf("package/dist/%04d", i/16), '5', fs.ModeDir|0o755, 0, [32]byte{}
			}
		}
		d, err := Open(filepath.Join(b.TempDir(), "db"), Options{Hold: true})
		if err != nil {
			b.Fatal(err)
		}
		l, err := d.WriteFiles(slices.Values(files))
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Commit([]*Record{{Name: "p", Version: "1"}}, []*FileList{l}, nil); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("write/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.WriteFiles(slices.Values(files)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("read/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got, err := d.Files("p"); err != nil || len(got) != n {
					b.Fatal(len(got), err)
				}
			}
		})
	}
}

// TestFilesOldRecords reads a list as pkg wrote them before listMark (a reference to
// chunks of old records, in a bucket of its own): it reads back, and a commit replacing it
// deletes its chunks and writes the list in the current form.
func TestFilesOldRecords(t *testing.T) {
	path, d := withBuckets(t)
	files := manyFiles("old", 10)
	chunk := oldChunk(files)
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		l := &FileList{files: uint32(len(files))}
		if err := putChunks(tx, l, [][]byte{chunk}); err != nil {
			return err
		}
		r := ref{gen: l.gen, chunks: l.chunks, files: l.files, old: true}
		return tx.Bucket(filesBucket).Put([]byte("old"), r.encode())
	})
	d = open(t, path)
	if got, err := d.Files("old"); err != nil || !reflect.DeepEqual(got, files) {
		t.Fatalf("Files(old) = %d files, %v; want the %d written", len(got), err, len(files))
	}
	l := writeFiles(t, d, files[1:])
	if err := d.Commit([]*Record{{Name: "old", Version: "2"}}, []*FileList{l}, nil); err != nil {
		t.Fatal(err)
	}
	if gens := chunkGens(t, path); len(gens) != 1 || gens[l.gen] != 1 {
		t.Errorf("chunks after the commit: %v; want only generation %d's", gens, l.gen)
	}
	if got, err := d.Files("old"); err != nil || !reflect.DeepEqual(got, files[1:]) {
		t.Errorf("Files(old) after the commit = %d files, %v", len(got), err)
	}
}

// TestFilesCountOutOfRange: a damaged reference whose count of files is far more than its
// chunks hold is an error, not an allocation for that many.
func TestFilesCountOutOfRange(t *testing.T) {
	path, d := withBuckets(t)
	files := manyFiles("big", 10)
	var chunk []byte
	var enc listEncoder
	for i := range files {
		chunk = enc.append(chunk, &files[i])
	}
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		l := &FileList{files: uint32(len(files))}
		if err := putChunks(tx, l, [][]byte{chunk}); err != nil {
			return err
		}
		r := ref{gen: l.gen, chunks: l.chunks, files: 1<<32 - 1}
		return tx.Bucket(filesBucket).Put([]byte("big"), r.encode())
	})
	d = open(t, path)
	if got, err := d.Files("big"); err == nil {
		t.Errorf("Files(big) = %d files, no error; want one for the reference's count", len(got))
	}
}

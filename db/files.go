package db

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"iter"

	bolt "go.etcd.io/bbolt"
)

// listsBucket holds the file lists longer than inlineSize in chunks, each list (a
// generation) in a bucket of its own named by the generation (8 bytes, big-endian), its
// chunks keyed by their numbers (4 bytes, big-endian), each chunk's value files encoded as
// listEncoder does, so that a generation's chunks, read in key order, are its list sorted
// by path. A package's value in filesBucket is the list itself where it is short
// (inlineMark, the number of files as a uvarint, the records), else a reference to its
// generation (listMark, then the generation, the number of chunks and of files, as
// uvarints). A bucket per long list keeps its chunks out of the pages of any other's:
// bbolt rewrites a page whole, and a page of a long list's chunks holds megabytes, which a
// small install would otherwise copy (and sum) in each commit.
var listsBucket = []byte("lists")

// chunksBucket gives the generations their numbers (its sequence), and holds the chunks of
// the lists of databases from before listsBucket, keyed by generation and chunk number (8
// and 4 bytes), all in its own pages.
var chunksBucket = []byte("chunks")

// aheadBucket holds, as keys, the generations of chunks written ahead (WriteFiles) whose
// CommitRequested has not come: the first write of a later DB deletes their chunks
// (collect) by these keys, without reading every list's.
var aheadBucket = []byte("ahead")

// The first byte of a package's value in filesBucket says what follows.
const (
	// refMark starts a reference to chunks of records as decodeOldFiles reads them: the
	// lists of databases from before listMark, read until their package changes.
	refMark = 0
	// listMark starts a reference to chunks of records as listEncoder writes them.
	listMark = 1
	// inlineMark starts a list held in the value itself, its records as listEncoder
	// writes them.
	inlineMark = 2
)

const (
	// chunkSize is the encoded bytes after which a chunk ends: a list of 2^20 files with
	// tarutil's 64 MiB of names in all takes 30 of them.
	chunkSize = 4 << 20 // 4 MiB
	// maxRecordSize bounds a file's record: tarutil's paths are at most 4,095 bytes.
	// listEncoder's: shared prefix, length, path, type, mode, size, sha256.
	maxRecordSize = 2*binary.MaxVarintLen16 + 4095 + 1 + binary.MaxVarintLen32 + binary.MaxVarintLen64 + 1 + 32
	// inlineSize is the longest list held in its package's value, where a bucket of its
	// own would take a page: half a page, so that pages fill (docs/history.md).
	inlineSize = 2 << 10
	// heldChunks is how many chunks a list keeps in memory for CommitRequested to write, in
	// its own transaction; a longer list is written ahead, a chunk a transaction, so that
	// neither pkg nor bbolt (which copies the values of a transaction at its commit) holds
	// it whole. 16 MiB is a list of about 150,000 files of ordinary names.
	heldChunks = 4
	// aheadChunkSize is where a chunk written ahead ends. bbolt rewrites a leaf whole, and
	// one of values this large holds two to four of them: each transaction of 4 MiB chunks
	// allocated, and read back through its map, 8 to 16 MiB (bench/names.sh).
	aheadChunkSize = 1 << 20 // 1 MiB
)

// FileList is a package's file list made ready for CommitRequested by WriteFiles.
type FileList struct {
	held   [][]byte // chunks for CommitRequested to write; one of at most inlineSize is held inline
	gen    uint64   // generation of the chunks written ahead; 0 if none
	chunks uint32   // chunks in all
	files  uint32
}

// errUnsorted is returned by WriteFiles for a list out of path order.
var errUnsorted = errors.New("db: file list not sorted by path")

// errChunksGone is returned by CommitRequested for a list whose chunks written ahead
// were collected by another DB's first write.
var errChunksGone = errors.New("db: chunks written ahead are gone")

// WriteFiles encodes files, which come sorted by path, each path once, for CommitRequested
// to record. A long list is written to the database ahead, in chunks that no package refers
// to until that commit: if it never comes (an error, a crash), the first write transaction
// of a later DB deletes them. The caller holds the root's lock.
func (d *DB) WriteFiles(files iter.Seq[File]) (*FileList, error) {
	l := &FileList{}
	var (
		cur  []byte
		enc  listEncoder
		prev string
	)
	for f := range files {
		if l.files > 0 && f.Path <= prev {
			return nil, fmt.Errorf("%w: %q after %q", errUnsorted, f.Path, prev)
		}
		prev = f.Path
		cur = enc.append(cur, &f)
		l.files++
		size := chunkSize
		if l.gen != 0 {
			size = aheadChunkSize
		}
		if len(cur) < size {
			continue
		}
		// The chunks after the first are long lists': made whole, not grown by append.
		l.held, cur = append(l.held, cur), make([]byte, 0, size+maxRecordSize)
		enc.reset()
		if len(l.held) > heldChunks || l.gen != 0 {
			if err := d.writeHeld(l); err != nil {
				return nil, err
			}
		}
	}
	if len(cur) > 0 {
		l.held = append(l.held, cur)
	}
	if l.gen != 0 {
		if err := d.writeHeld(l); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// writeHeld writes l's held chunks, a transaction each, and forgets them.
func (d *DB) writeHeld(l *FileList) error {
	for len(l.held) > 0 {
		err := d.write("write files ahead", false, false, func(tx *bolt.Tx) error {
			if err := putChunks(tx, l, l.held[:1]); err != nil {
				return err
			}
			return tx.Bucket(aheadBucket).Put(genKey(l.gen), nil)
		})
		if err != nil {
			return err
		}
		l.held[0] = nil
		l.held = l.held[1:]
	}
	return nil
}

// putChunks adds chunks to l's generation, making one first.
func putChunks(tx *bolt.Tx, l *FileList, chunks [][]byte) error {
	if len(chunks) == 0 {
		return nil
	}
	if l.gen == 0 {
		gen, err := tx.Bucket(chunksBucket).NextSequence()
		if err != nil {
			return err
		}
		l.gen = gen
	}
	b, err := tx.Bucket(listsBucket).CreateBucketIfNotExists(genKey(l.gen))
	if err != nil {
		return err
	}
	for _, c := range chunks {
		if err := b.Put(binary.BigEndian.AppendUint32(nil, l.chunks), c); err != nil {
			return err
		}
		l.chunks++
	}
	return nil
}

// chunk returns chunk i of generation gen, nil if there is none. (A database no pkg with
// listsBucket has written yet lacks the bucket.)
func chunk(tx *bolt.Tx, gen uint64, i uint32) []byte {
	if lists := tx.Bucket(listsBucket); lists != nil {
		if b := lists.Bucket(genKey(gen)); b != nil {
			return b.Get(binary.BigEndian.AppendUint32(nil, i))
		}
	}
	return tx.Bucket(chunksBucket).Get(chunkKey(gen, i))
}

func genKey(gen uint64) []byte { return binary.BigEndian.AppendUint64(make([]byte, 0, 8), gen) }

func chunkKey(gen uint64, i uint32) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(make([]byte, 0, 12), gen), i)
}

// ref is a package's reference to its generation of chunks.
type ref struct {
	gen           uint64
	chunks, files uint32
	old           bool // its chunks' records are decodeOldFiles's (refMark)
}

func (r ref) encode() []byte {
	v := []byte{listMark}
	if r.old {
		v[0] = refMark
	}
	v = binary.AppendUvarint(v, r.gen)
	v = binary.AppendUvarint(v, uint64(r.chunks))
	return binary.AppendUvarint(v, uint64(r.files))
}

// parseRef returns the reference v holds, false for a value that is none.
func parseRef(v []byte) (ref, bool, error) {
	if len(v) == 0 || v[0] != refMark && v[0] != listMark {
		return ref{}, false, nil
	}
	var n [3]uint64
	r := ref{old: v[0] == refMark}
	v = v[1:]
	for i := range n {
		x, k := binary.Uvarint(v)
		if k <= 0 {
			return ref{}, true, errors.New("truncated chunk reference")
		}
		n[i], v = x, v[k:]
	}
	if n[1] > 1<<32-1 || n[2] > 1<<32-1 {
		return ref{}, true, errors.New("chunk reference out of range")
	}
	r.gen, r.chunks, r.files = n[0], uint32(n[1]), uint32(n[2])
	return r, true, nil
}

// commitFiles records l as name's list, in place of any earlier one, whose chunks it deletes.
func commitFiles(tx *bolt.Tx, name string, l *FileList) error {
	if err := deleteFiles(tx, name); err != nil {
		return err
	}
	if l.gen == 0 && len(l.held) <= 1 && (len(l.held) == 0 || len(l.held[0]) <= inlineSize) {
		v := binary.AppendUvarint([]byte{inlineMark}, uint64(l.files))
		if len(l.held) == 1 {
			v = append(v, l.held[0]...)
		}
		l.held = nil
		return tx.Bucket(filesBucket).Put([]byte(name), v)
	}
	if err := putChunks(tx, l, l.held); err != nil {
		return err
	}
	l.held = nil
	if l.gen != 0 {
		if err := tx.Bucket(aheadBucket).Delete(genKey(l.gen)); err != nil {
			return err
		}
	}
	if l.chunks > 0 && chunk(tx, l.gen, l.chunks-1) == nil {
		return fmt.Errorf("files of %s: %w", name, errChunksGone)
	}
	return tx.Bucket(filesBucket).Put([]byte(name), ref{gen: l.gen, chunks: l.chunks, files: l.files}.encode())
}

// deleteFiles deletes name's list and its chunks.
func deleteFiles(tx *bolt.Tx, name string) error {
	r, ok, err := parseRef(tx.Bucket(filesBucket).Get([]byte(name)))
	if err != nil {
		return fmt.Errorf("files of %s: %w", name, err)
	}
	if ok {
		if err := deleteGen(tx, r.gen); err != nil {
			return err
		}
	}
	return tx.Bucket(filesBucket).Delete([]byte(name))
}

// deleteGen deletes every chunk of a generation.
func deleteGen(tx *bolt.Tx, gen uint64) error {
	lists := tx.Bucket(listsBucket)
	if lists.Bucket(genKey(gen)) != nil {
		return lists.DeleteBucket(genKey(gen))
	}
	b := tx.Bucket(chunksBucket)
	prefix := binary.BigEndian.AppendUint64(nil, gen)
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}

// collect deletes the chunks no package refers to: those of lists whose CommitRequested
// never came, which aheadBucket names. In a database from before that bucket (all reports
// whether it was just made), it finds them by reading every chunk's key.
func collect(tx *bolt.Tx, all bool) error {
	ahead := tx.Bucket(aheadBucket)
	var dead []uint64
	err := ahead.ForEach(func(k, _ []byte) error {
		if len(k) == 8 {
			dead = append(dead, binary.BigEndian.Uint64(k))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if all {
		if dead, err = unreferenced(tx); err != nil {
			return err
		}
	}
	for _, gen := range dead {
		if err := deleteGen(tx, gen); err != nil {
			return err
		}
		if err := ahead.Delete(genKey(gen)); err != nil {
			return err
		}
	}
	return nil
}

// unreferenced returns the generations of chunks no package's list refers to.
func unreferenced(tx *bolt.Tx) ([]uint64, error) {
	chunks, lists := tx.Bucket(chunksBucket), tx.Bucket(listsBucket)
	live := make(map[uint64]bool)
	err := tx.Bucket(filesBucket).ForEach(func(_, v []byte) error {
		if r, ok, _ := parseRef(v); ok {
			live[r.gen] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var dead []uint64
	var last uint64
	err = chunks.ForEach(func(k, _ []byte) error {
		if len(k) < 8 {
			return nil
		}
		if gen := binary.BigEndian.Uint64(k); gen != last {
			last = gen
			if !live[gen] {
				dead = append(dead, gen)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = lists.ForEach(func(k, _ []byte) error {
		if len(k) == 8 && !live[binary.BigEndian.Uint64(k)] {
			dead = append(dead, binary.BigEndian.Uint64(k))
		}
		return nil
	})
	return dead, err
}

// readFiles returns the list that v, name's value in filesBucket, holds or refers to.
func readFiles(tx *bolt.Tx, v []byte) ([]File, error) {
	if len(v) > 0 && v[0] == inlineMark {
		n, k := binary.Uvarint(v[1:])
		if k <= 0 || n > uint64(len(v)) { // a record takes more than a byte
			return nil, errors.New("malformed file list")
		}
		files, err := decodeList(make([]File, 0, n), v[1+k:])
		if err == nil && uint64(len(files)) != n {
			err = fmt.Errorf("%d files, list says %d", len(files), n)
		}
		return files, err
	}
	r, ok, err := parseRef(v)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, errors.New("file list is neither held nor a chunk reference")
	}
	decode := decodeList
	if r.old {
		decode = decodeOldFiles
	}
	// Every record takes more than a byte: the chunks bound the count a damaged
	// reference may give.
	var size uint64
	for i := range r.chunks {
		c := chunk(tx, r.gen, i)
		if c == nil {
			return nil, fmt.Errorf("chunk %d of %d missing", i+1, r.chunks)
		}
		size += uint64(len(c))
	}
	files := make([]File, 0, min(uint64(r.files), size))
	for i := range r.chunks {
		if files, err = decode(files, chunk(tx, r.gen, i)); err != nil {
			return nil, err
		}
	}
	if len(files) != int(r.files) {
		return nil, fmt.Errorf("%d files, reference says %d", len(files), r.files)
	}
	return files, nil
}

// listEncoder writes the records of a chunk, each after the one before, so that what
// records share costs nothing twice: a record is its path as the length of the prefix it
// shares with the path before (uvarint) and the rest (uvarint length and bytes), its type
// (a byte), mode and size (uvarints), and its sha256 as a uvarint h, then 32 bytes where
// h is hashFollows: hashZero for none (a directory), else the sha256 of the record h-1
// before it in the chunk (packages hold many copies of a file: the npm tree, 1,933 of its
// 7,050 files).
type listEncoder struct {
	prev   string
	n      int              // records written
	hashes map[[32]byte]int // the number of the last record of each sha256
}

const (
	hashZero    = 0
	hashFollows = 1
)

// reset starts a chunk.
func (e *listEncoder) reset() {
	e.prev, e.n = "", 0
	clear(e.hashes)
}

// append appends f's record to v.
func (e *listEncoder) append(v []byte, f *File) []byte {
	shared := 0
	for shared < len(e.prev) && shared < len(f.Path) && e.prev[shared] == f.Path[shared] {
		shared++
	}
	v = binary.AppendUvarint(v, uint64(shared))
	v = binary.AppendUvarint(v, uint64(len(f.Path)-shared))
	v = append(v, f.Path[shared:]...)
	v = append(v, f.Type)
	v = binary.AppendUvarint(v, uint64(f.Mode))
	v = binary.AppendUvarint(v, uint64(f.Size))
	switch i, ok := e.hashes[f.SHA256]; {
	case f.SHA256 == [32]byte{}:
		v = append(v, hashZero)
	case ok:
		v = binary.AppendUvarint(v, uint64(e.n-i+1))
	default:
		v = append(append(v, hashFollows), f.SHA256[:]...)
	}
	if f.SHA256 != [32]byte{} {
		if e.hashes == nil {
			e.hashes = make(map[[32]byte]int)
		}
		e.hashes[f.SHA256] = e.n
	}
	e.prev = f.Path
	e.n++
	return v
}

var errTruncated = errors.New("truncated file record")

// listReader reads a chunk's records; its error is sticky.
type listReader struct {
	v   []byte
	err error
}

func (r *listReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	x, k := binary.Uvarint(r.v)
	if k <= 0 {
		r.err = errTruncated
		return 0
	}
	r.v = r.v[k:]
	return x
}

func (r *listReader) bytes(n uint64) []byte {
	if r.err == nil && uint64(len(r.v)) < n {
		r.err = errTruncated
	}
	if r.err != nil {
		return nil
	}
	b := r.v[:n]
	r.v = r.v[n:]
	return b
}

// decodeList appends the records of v, a chunk listEncoder wrote, to files.
func decodeList(files []File, v []byte) ([]File, error) {
	start := len(files)
	r := listReader{v: v}
	prev := ""
	for len(r.v) > 0 {
		shared := r.uvarint()
		rest := r.bytes(r.uvarint())
		switch {
		case r.err != nil:
			return nil, r.err
		case shared > uint64(len(prev)):
			return nil, errors.New("file record shares more than the path before it")
		}
		f := File{Path: prev[:shared] + string(rest)}
		if t := r.bytes(1); t != nil {
			f.Type = t[0]
		}
		mode := r.uvarint()
		f.Size = int64(r.uvarint())
		switch h := r.uvarint(); {
		case r.err != nil:
			return nil, r.err
		case mode > 1<<32-1:
			return nil, errors.New("file record's mode out of range")
		case h == hashFollows:
			if sum := r.bytes(32); sum != nil {
				f.SHA256 = [32]byte(sum)
			}
		case h > hashFollows:
			if h-1 > uint64(len(files)-start) {
				return nil, errors.New("file record's sha256 refers before its chunk")
			}
			f.SHA256 = files[len(files)-int(h-1)].SHA256
		}
		if r.err != nil {
			return nil, r.err
		}
		f.Mode = fs.FileMode(mode)
		files = append(files, f)
		prev = f.Path
	}
	return files, nil
}

// oldRecordSize is the size of decodeOldFiles's record of a File without its path: type,
// mode, size, sha256.
const oldRecordSize = 1 + 4 + 8 + 32

// decodeOldFiles appends the records of v to files, each its path length (uvarint), path,
// type, mode (4 bytes), size (8 bytes) and sha256, big-endian: the chunks of refMark.
func decodeOldFiles(files []File, v []byte) ([]File, error) {
	for len(v) > 0 {
		n, k := binary.Uvarint(v)
		if k <= 0 || uint64(len(v)-k) < n+oldRecordSize {
			return nil, errTruncated
		}
		v = v[k:]
		rec := v[n:]
		files = append(files, File{
			Path:   string(v[:n]),
			Type:   rec[0],
			Mode:   fs.FileMode(binary.BigEndian.Uint32(rec[1:])),
			Size:   int64(binary.BigEndian.Uint64(rec[5:])),
			SHA256: [32]byte(rec[13:45]),
		})
		v = rec[oldRecordSize:]
	}
	return files, nil
}
